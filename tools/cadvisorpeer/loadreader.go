// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package main

import (
	"github.com/google/cadvisor/lib/manager"
	info "github.com/google/cadvisor/lib/model"
	"github.com/google/cadvisor/utils/cpuload"
)

// newLoadReader is cAdvisor's netlink (taskstats CGROUPSTATS_CMD_GET) load
// reader from cAdvisor's root module, behind the library's interface: what
// cAdvisor's own binary plugs in with --enable_load_reader. The library
// (all the kubelet embeds) has none; test/v2node runs it on a cgroup v2
// node to show field note 1.
func newLoadReader() (manager.CpuLoadReader, error) {
	r, err := cpuload.New()
	if err != nil {
		return nil, err
	}
	return loadReader{r}, nil
}

type loadReader struct{ r cpuload.CpuLoadReader }

func (l loadReader) Start() error { return l.r.Start() }
func (l loadReader) Stop()        { l.r.Stop() }

func (l loadReader) GetCpuLoad(name, path string) (info.LoadStats, error) {
	s, err := l.r.GetCpuLoad(name, path)
	return info.LoadStats{
		NrSleeping: s.NrSleeping, NrRunning: s.NrRunning, NrStopped: s.NrStopped,
		NrUninterruptible: s.NrUninterruptible, NrIoWait: s.NrIoWait,
	}, err
}

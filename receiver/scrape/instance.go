// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// trackRun follows the run of a standalone container (in no pod). docker
// and Podman keep a container's ID across `restart` and give each run a
// new cgroup, whose counters start again from zero; the runtime's creation
// time stays the first run's. So a standalone container's series follows
// its cgroup's instance (cgroupfs.Reader.Instance: one stat per scrape,
// for standalone containers only): a new instance under a known ID starts
// the series again, with fresh family state, and the start time of its
// cumulative points and container.uptime is the run's start: the earliest
// start of the cgroup's processes (/proc/<pid>/stat), read once per run.
// When /proc does not tell it (no process yet, no hostPID), a first run
// keeps the runtime's creation time (or the first-seen time), and a
// restart starts (uptime included) at the previous scrape: the last time
// the old run was seen, before the new one began. Containers in pods need none of this: a
// kubelet restart is a new container ID. It returns the series to use.
func (s *Scraper) trackRun(p *pass, key seriesKey, st *series, c *cgroupfs.Cgroup) *series {
	if !s.env.runs {
		return st
	}
	ino, err := s.env.reader.Instance(c.Path)
	if err != nil || ino == st.inst {
		return st // vanished: the families' reads report it
	}
	if st.inst != 0 {
		start := pcommon.NewTimestampFromTime(p.prev)
		st = &series{start: start, runtimeStart: true, runStart: p.prev, seen: st.seen, rel: st.rel}
		s.series[key] = st
	}
	st.inst = ino
	if t, ok := s.env.runStart(c.Path); ok {
		st.start, st.runtimeStart, st.runStart = pcommon.NewTimestampFromTime(t), true, t
	}
	return st
}

// runStartOn reports whether a metric whose points depend on a standalone
// container's run is enabled: container.uptime, or one of the container's
// monotonic sums (a run starts them again from zero). Only then are runs
// followed. TestRunStartOn holds the list to metadata.yaml.
func runStartOn(m *metadata.MetricsConfig) bool {
	return m.ContainerUptime.Enabled ||
		m.ContainerCPUTime.Enabled ||
		m.ContainerCPUThrottlingPeriods.Enabled ||
		m.ContainerCPUThrottlingThrottledPeriods.Enabled ||
		m.ContainerCPUThrottlingThrottledTime.Enabled ||
		m.ContainerDiskIo.Enabled ||
		m.ContainerDiskOperations.Enabled ||
		m.ContainerDiskDiscardIo.Enabled ||
		m.ContainerDiskDiscardOperations.Enabled ||
		m.ContainerMemoryOomKills.Enabled ||
		m.ContainerMemoryRefaults.Enabled ||
		m.ContainerNetworkIo.Enabled ||
		m.ContainerNetworkErrors.Enabled ||
		m.ContainerNetworkPacketCount.Enabled ||
		m.ContainerNetworkPacketDropped.Enabled ||
		m.ContainerPagingFaults.Enabled ||
		m.ContainerPressureStallTime.Enabled
}

// runStart is the earliest start among the processes of the cgroup at rel
// and its sub-cgroups; false when none can be read.
func (v *env) runStart(rel string) (time.Time, bool) {
	if v.bootTime == 0 {
		return time.Time{}, false
	}
	pids, _, err := v.reader.Procs(rel, nil)
	if err != nil {
		return time.Time{}, false
	}
	var first time.Time
	for _, pid := range pids {
		if pid <= 0 {
			continue // outside the collector's PID namespace
		}
		if t, err := v.proc.StartTime(pid, v.bootTime.AsTime()); err == nil && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	return first, !first.IsZero()
}

//go:build realmachine

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/procfs"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
	"github.com/containerstats/containerstatsreceiver/internal/testing/podmantest"
)

// TestRealPodman: a container that Podman (Debian's 4.3, rootful, its
// cgroupfs manager: /libpod_parent/libpod-<id>) runs on this machine is
// found by the standalone walk and reported with container.runtime.name
// podman and the memory usage its cgroup's file gives (between the reads
// before and after the scrape); conmon's cgroup (/libpod_parent/conmon,
// where its conmon runs) is no container; without standalone_containers
// the container is not reported.
func TestRealPodman(t *testing.T) {
	machine.Lock(t)
	pm := podmantest.New(t)
	c := pm.Run(t, "containerstats-podmantest", "/bin/sh", "-c", "dd if=/dev/zero of=/dev/shm/fill bs=1M count=16 && exec sleep 120")
	l, err := cgroupfs.NewHost("/").Layout()
	require.NoError(t, err)
	proc := procfs.NewFS("/")
	cgroupOf := func(pid int) string { // as the system containers find theirs
		lines, err := proc.Cgroup(pid)
		require.NoError(t, err)
		rel, err := processCgroup(l, lines)
		require.NoError(t, err)
		return rel
	}
	rel := cgroupOf(c.PID)
	require.Equal(t, "/libpod_parent/libpod-"+c.ID, rel, "Podman's cgroupfs manager")
	conmon := cgroupOf(c.ConmonPID)
	// The kernel's own figure, read from the file, not through the reader.
	usageFile := filepath.Join(l.Dir("", rel), "memory.current")
	if l.StatsV1() {
		usageFile = filepath.Join(l.Dir(cgroupfs.CtrlMemory, rel), "memory.usage_in_bytes")
	}
	usage := func() uint64 {
		data, err := os.ReadFile(usageFile)
		require.NoError(t, err)
		v, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
		require.NoError(t, err)
		return v
	}
	require.Eventually(t, func() bool { return usage() >= 16<<20 }, 20e9, 20e6, "the container never charged its 16 MiB")

	scrape := func(standalone bool) (map[string]float64, map[string]any, uint64, uint64) {
		s := New(newSettings(), Options{Host: testHost("/"), NodeName: "real", StandaloneContainers: standalone, MetricsBuilderConfig: defaultMBC()})
		require.NoError(t, s.Start(context.Background(), nil))
		defer func() { require.NoError(t, s.Shutdown(context.Background())) }()
		u0 := usage()
		m, err := s.Scrape(context.Background())
		u1 := usage()
		machine.RequireNoOwnErrors(t, err, c.ID)
		var attrs map[string]any
		for i := 0; i < m.ResourceMetrics().Len(); i++ {
			a := m.ResourceMetrics().At(i).Resource().Attributes()
			if v, ok := a.Get("container.id"); ok && v.Str() == c.ID {
				attrs = a.AsRaw()
			}
		}
		tree, err := s.env.layout.Discover(true)
		require.NoError(t, err)
		for _, ct := range tree.Containers {
			assert.NotEqual(t, conmon, ct.Path, "conmon's cgroup is no container")
		}
		return points(m, "container.id", c.ID), attrs, u0, u1
	}

	p, attrs, u0, u1 := scrape(true)
	require.NotEmpty(t, p, "the Podman container was not reported")
	assert.Equal(t, map[string]any{"container.id": c.ID, "container.runtime.name": "podman", "k8s.node.name": "real"}, attrs)
	between(t, "container.memory.usage", p["container.memory.usage"], u0, u1)
	assert.Contains(t, p, "container.cpu.time/user")

	p, _, _, _ = scrape(false)
	assert.Empty(t, p, "a standalone container without standalone_containers")
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/scraper/scrapererror"
)

const (
	v1Pod1    = "1a2b3c4d-0000-4000-8000-00000000000a"
	v1Pod3    = "3c4d5e6f-0000-4000-8000-00000000000c"
	v1Pod1Dir = "sys/fs/cgroup/memory/kubepods/burstable/pod" + v1Pod1
	v1Ctr1    = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
	v1Ctr2    = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
	v1Ctr4    = "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4"
)

// nodePoints returns the node resource's points: the resource whose only
// attribute is k8s.node.name.
func nodePoints(m pmetric.Metrics) map[string]float64 {
	only := pmetric.NewMetrics()
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		if rm := m.ResourceMetrics().At(i); rm.Resource().Attributes().Len() == 1 {
			rm.CopyTo(only.ResourceMetrics().AppendEmpty())
		}
	}
	return points(only, "k8s.node.name", "node-1")
}

// The v2 node of field note 2: the root has no memory.current and no
// memory.stat, so usage is anon + file from /proc/meminfo's LRU lists and
// the working set lands at 1624.8 MiB, not the 2207 MiB that
// MemTotal - MemFree - Inactive(file) gives.
func TestNodeMemoryFieldNote(t *testing.T) {
	s := newTestScraper(t, copyFixture(t, "v2-cgroupfs"), false, &fakeClock{now: t0})
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	p := nodePoints(m)
	const kB = 1024
	assert.Equal(t, float64((2568+791340+869852+4608000)*kB), p["k8s.node.memory.usage"])
	assert.Equal(t, float64(1703690240), p["k8s.node.memory.working_set"])
	assert.InDelta(t, 1624.8, p["k8s.node.memory.working_set"]/(1<<20), 0.05)
	totalMinusFree := float64((16374584 - 9505980 - 4608000) * kB)
	assert.InDelta(t, 2207, totalMinusFree/(1<<20), 1, "the figure of the field note")
	assert.NotEqual(t, totalMinusFree, p["k8s.node.memory.working_set"])
	assert.Equal(t, float64((2568+791340)*kB), p["k8s.node.memory.rss"])
	assert.Equal(t, float64((869852+4608000)*kB), p["k8s.node.memory.cache"])
	assert.Equal(t, float64(16374584*kB)-1703690240, p["k8s.node.memory.available"])
	assert.Equal(t, float64((2097148-1835004)*kB), p["k8s.node.memory.swap"], "SwapTotal - SwapFree: the v2 root has no memory.swap.current")
	assert.NotContains(t, p, "k8s.node.memory.limit")
}

// An OOM kill counted only at the pod cgroup is visible at pod level, on v1
// (summed subtree) and v2 (hierarchical memory.events).
func TestPodOnlyOOMKill(t *testing.T) {
	for _, tc := range []struct{ layout, ctr string }{
		{"v1-cgroupfs", v1Ctr4},
		{"v2-systemd", "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4"},
	} {
		t.Run(tc.layout, func(t *testing.T) {
			s := newTestScraper(t, copyFixture(t, tc.layout), false, &fakeClock{now: t0})
			m, err := s.Scrape(context.Background())
			require.NoError(t, err)
			all := points(m, "k8s.pod.uid", v1Pod3) // the pod and its container
			assert.Equal(t, float64(0), all["container.memory.oom_kills"])
			assert.Equal(t, float64(1), all["k8s.pod.memory.oom_kills"])
		})
	}
}

// On v1 a pod's OOM kills are its subtree's sum and stay monotonic when a
// container that had kills is removed.
func TestPodOOMKillsV1Monotonic(t *testing.T) {
	root := copyFixture(t, "v1-cgroupfs")
	clk := &fakeClock{now: t0}
	s := newTestScraper(t, root, false, clk)
	pod := func() float64 {
		m, err := s.Scrape(context.Background())
		require.NoError(t, err)
		clk.now = clk.now.Add(10 * time.Second)
		return points(m, "k8s.pod.uid", v1Pod1)["k8s.pod.memory.oom_kills"]
	}
	assert.Equal(t, float64(14+5+8), pod(), "pod 14 + a1 5 + b2 8")
	require.NoError(t, os.RemoveAll(filepath.Join(root, v1Pod1Dir, v1Ctr2)))
	assert.Equal(t, float64(27), pod(), "b2's kills are kept after it is gone")
	require.NoError(t, os.WriteFile(filepath.Join(root, v1Pod1Dir, v1Ctr1, "memory.oom_control"),
		[]byte("oom_kill_disable 0\nunder_oom 0\noom_kill 6\n"), 0o600))
	assert.Equal(t, float64(28), pod(), "a new kill in a1")
}

// A malformed memory.events or memory.max costs that container's memory
// points only, with the container and file named.
func TestMemoryMalformedIsPartial(t *testing.T) {
	for _, file := range []string{"memory.events", "memory.max", "memory.swap.current"} {
		t.Run(file, func(t *testing.T) {
			root := copyFixture(t, "v2-systemd")
			dir := filepath.Join(root, "sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b3c4d_0000_4000_8000_00000000000a.slice/cri-containerd-"+v2Ctr1+".scope")
			require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte("oom_kill lots\n"), 0o600))
			s := newTestScraper(t, root, false, &fakeClock{now: t0})
			m, err := s.Scrape(context.Background())
			var pe scrapererror.PartialScrapeError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, familyOf[*memoryFamily](t, s).points(kindContainer, nil), pe.Failed)
			assert.Contains(t, err.Error(), "container "+v2Ctr1)
			assert.Contains(t, err.Error(), file)
			assert.NotContains(t, points(m, "container.id", v2Ctr1), "container.memory.usage")
			assert.Contains(t, points(m, "container.id", v1Ctr2), "container.memory.limit", "the other container (b2) keeps its points")
		})
	}
}

// A malformed /proc/vmstat costs the node's OOM kill and fault points only.
func TestNodeVmstatMalformed(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc/vmstat"), []byte("oom_kill -1\n"), 0o600))
	s := newTestScraper(t, root, false, &fakeClock{now: t0})
	m, err := s.Scrape(context.Background())
	var pe scrapererror.PartialScrapeError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 3, pe.Failed, "OOM kills, major and minor faults")
	assert.Contains(t, err.Error(), "vmstat")
	p := nodePoints(m)
	assert.NotContains(t, p, "k8s.node.memory.oom_kills")
	assert.Contains(t, p, "k8s.node.memory.working_set")
}

//go:build realmachine

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/containerstats/containerstatsreceiver/internal/calc"
	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

func between(t *testing.T, name string, got float64, a, b uint64) {
	t.Helper()
	lo, hi := float64(min(a, b)), float64(max(a, b))
	assert.True(t, got >= lo && got <= hi, "%s = %.0f, kernel said %d then %d", name, got, a, b)
}

// betweenSeconds: got (seconds) lies between the kernel's a and b, give or
// take a nanosecond of float rounding.
func betweenSeconds(t *testing.T, name string, got float64, a, b time.Duration) {
	t.Helper()
	lo, hi := min(a, b).Seconds()-1e-9, max(a, b).Seconds()+1e-9
	assert.True(t, got >= lo && got <= hi, "%s = %.9f s, kernel said %s then %s", name, got, a, b)
}

// TestRealCgroup: a real child that burns CPU and touches 64 MiB in a real
// kubepods-shaped cgroup on this machine, scraped through the scrape
// function: CPU time grows, and usage/working set equal what the kernel's
// files say at that moment (within the change between the reads before and
// after the scrape).
func TestRealCgroup(t *testing.T) {
	machine.Lock(t)
	c := cgrouptest.NewContainer(t, "burstable")
	c.Start(t, cgrouptest.ModeBurn, "threads=1", "mib=64")
	require.Eventually(t, func() bool { return c.MemoryUsage(t) >= 64<<20 }, 20*time.Second, 20*time.Millisecond,
		"child never charged 64 MiB to its cgroup")

	s := New(newSettings(), Options{Host: testHost("/"), NodeName: "real", MetricsBuilderConfig: defaultMBC()})
	require.NoError(t, s.Start(context.Background(), nil))
	defer func() { require.NoError(t, s.Shutdown(context.Background())) }()

	// The kernel's CPU usage and the wall clock just before and just after
	// each scrape bound what the scrape can have read.
	type window struct {
		k0, k1 cgrouptest.CPUStat // the kernel's count before, after
		t0, t1 time.Time
	}
	var w window
	scrape := func() (map[string]float64, uint64, uint64, uint64, uint64) {
		w.t0, w.k0 = time.Now(), c.CPU(t)
		u0, i0 := c.MemoryUsage(t), c.InactiveFile(t)
		m := mustScrape(t, s, c)
		u1, i1 := c.MemoryUsage(t), c.InactiveFile(t)
		w.k1, w.t1 = c.CPU(t), time.Now()
		p := points(m, "container.id", c.ID)
		require.NotEmpty(t, p, "the real container was not scraped")
		// Identity from the path.
		for i := 0; i < m.ResourceMetrics().Len(); i++ {
			attrs := m.ResourceMetrics().At(i).Resource().Attributes()
			if v, ok := attrs.Get("container.id"); ok && v.Str() == c.ID {
				assert.Equal(t, map[string]any{
					"container.id": c.ID, "k8s.pod.uid": c.PodUID,
					"k8s.pod.qos_class": "burstable", "k8s.node.name": "real",
				}, attrs.AsRaw())
			}
		}
		return p, u0, u1, calc.WorkingSet(u0, i0), calc.WorkingSet(u1, i1)
	}

	p1, u0, u1, ws0, ws1 := scrape()
	w1 := w
	between(t, "container.memory.usage", p1["container.memory.usage"], u0, u1)
	between(t, "container.memory.working_set", p1["container.memory.working_set"], ws0, ws1)
	assert.GreaterOrEqual(t, p1["container.memory.usage"], float64(64<<20))
	_, hasUsage := p1["container.cpu.usage"]
	assert.False(t, hasUsage, "no CPU usage rate on the first scrape")

	// Wait until the busy thread has had 0.3 s of CPU by the kernel's
	// count (how long that takes depends on the machine's load, what the
	// scrape must report does not).
	require.Eventually(t, func() bool { return c.CPU(t).Usage >= w1.k1.Usage+300*time.Millisecond }, 60*time.Second, 20*time.Millisecond,
		"the busy child never got 0.3 s of CPU")
	p2, u0, u1, ws0, ws1 := scrape()
	w2 := w
	between(t, "container.memory.usage", p2["container.memory.usage"], u0, u1)
	between(t, "container.memory.working_set", p2["container.memory.working_set"], ws0, ws1)
	cpu1 := p1["container.cpu.time/user"] + p1["container.cpu.time/system"]
	cpu2 := p2["container.cpu.time/user"] + p2["container.cpu.time/system"]
	// The modes split the kernel's precise total (calc.AdjustCPUSplit; v1's
	// own usage_user and usage_sys are tick-sampled): their sum lies
	// between the totals read before and after the scrape, and neither
	// mode goes back.
	for i, w := range []window{w1, w2} {
		betweenSeconds(t, fmt.Sprintf("scrape %d: container.cpu.time user+system", i+1), []float64{cpu1, cpu2}[i], w.k0.Usage, w.k1.Usage)
	}
	for _, mode := range []string{"user", "system"} {
		assert.GreaterOrEqual(t, p2["container.cpu.time/"+mode], p1["container.cpu.time/"+mode], "container.cpu.time %s went back", mode)
	}
	assert.Greater(t, cpu2, cpu1, "the busy thread's CPU time grows")
	// The rate: CPU time between the scrapes' reads over the time between
	// them, each inside its window.
	lo := (w2.k0.Usage - w1.k1.Usage).Seconds() / w2.t1.Sub(w1.t0).Seconds()
	hi := (w2.k1.Usage - w1.k0.Usage).Seconds() / w2.t0.Sub(w1.t1).Seconds()
	usage := p2["container.cpu.usage"]
	assert.True(t, usage >= lo*0.999 && usage <= hi*1.001, "container.cpu.usage %.4f cores, the kernel's count bounds it to [%.4f, %.4f]", usage, lo, hi)
	assert.Less(t, usage, 1.5, "one busy thread cannot use 1.5 cores")
	t.Logf("cpu time %.3f s -> %.3f s; usage %.4f cores (kernel bounds %.4f..%.4f)", cpu1, cpu2, usage, lo, hi)

	// The pod and the node are there too.
	pod := points(scrapeNodeAndPod(t, s, c), "k8s.pod.uid", c.PodUID)
	assert.Contains(t, pod, "k8s.pod.memory.working_set")
}

// scrapeNodeAndPod scrapes once more, checks the node resource and returns the metrics.
func scrapeNodeAndPod(t *testing.T, s *Scraper, c *cgrouptest.Container) pmetric.Metrics {
	t.Helper()
	m := mustScrape(t, s, c)
	node := pcommon.NewMap()
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		attrs := m.ResourceMetrics().At(i).Resource().Attributes()
		if attrs.Len() == 1 {
			attrs.CopyTo(node)
			names := map[string]bool{}
			ms := m.ResourceMetrics().At(i).ScopeMetrics().At(0).Metrics()
			for j := 0; j < ms.Len(); j++ {
				names[ms.At(j).Name()] = true
			}
			assert.True(t, names["k8s.node.memory.working_set"], "node working set")
			assert.True(t, names["k8s.node.cpu.time"], "node CPU time")
		}
	}
	assert.Equal(t, "real", node.AsRaw()["k8s.node.name"])
	return m
}

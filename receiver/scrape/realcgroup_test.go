// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
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

// points collects the values of one resource's metrics, keyed by metric name
// and, for cpu.time and paging.faults, "name/attribute value".
func points(m pmetric.Metrics, attr, val string) map[string]float64 {
	out := map[string]float64{}
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		if v, ok := rm.Resource().Attributes().Get(attr); !ok || v.Str() != val {
			continue
		}
		ms := rm.ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			mt := ms.At(j)
			var dps pmetric.NumberDataPointSlice
			if mt.Type() == pmetric.MetricTypeSum {
				dps = mt.Sum().DataPoints()
			} else {
				dps = mt.Gauge().DataPoints()
			}
			for k := 0; k < dps.Len(); k++ {
				dp := dps.At(k)
				key := mt.Name()
				dp.Attributes().Range(func(_ string, v pcommon.Value) bool {
					key += "/" + v.AsString()
					return true
				})
				v := dp.DoubleValue()
				if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
					v = float64(dp.IntValue())
				}
				out[key] = v
			}
		}
	}
	return out
}

func between(t *testing.T, name string, got float64, a, b uint64) {
	t.Helper()
	lo, hi := float64(min(a, b)), float64(max(a, b))
	assert.True(t, got >= lo && got <= hi, "%s = %.0f, kernel said %d then %d", name, got, a, b)
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

	s := New(newSettings(), Options{RootPath: "/", NodeName: "real", MetricsBuilderConfig: defaultMBC()})
	require.NoError(t, s.Start(context.Background(), nil))
	defer func() { require.NoError(t, s.Shutdown(context.Background())) }()

	scrape := func() (map[string]float64, uint64, uint64, uint64, uint64) {
		u0, i0 := c.MemoryUsage(t), c.InactiveFile(t)
		m := mustScrape(t, s, c)
		u1, i1 := c.MemoryUsage(t), c.InactiveFile(t)
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
	between(t, "container.memory.usage", p1["container.memory.usage"], u0, u1)
	between(t, "container.memory.working_set", p1["container.memory.working_set"], ws0, ws1)
	assert.GreaterOrEqual(t, p1["container.memory.usage"], float64(64<<20))
	_, hasUsage := p1["container.cpu.usage"]
	assert.False(t, hasUsage, "no CPU usage rate on the first scrape")

	time.Sleep(700 * time.Millisecond)
	p2, u0, u1, ws0, ws1 := scrape()
	between(t, "container.memory.usage", p2["container.memory.usage"], u0, u1)
	between(t, "container.memory.working_set", p2["container.memory.working_set"], ws0, ws1)
	cpu1 := p1["container.cpu.time/user"] + p1["container.cpu.time/system"]
	cpu2 := p2["container.cpu.time/user"] + p2["container.cpu.time/system"]
	assert.Greater(t, cpu2, cpu1+0.1, "a busy thread for 0.7s adds CPU time")
	assert.Greater(t, p2["container.cpu.usage"], 0.2, "one busy thread uses a good part of a core")
	assert.Less(t, p2["container.cpu.usage"], 1.5, "one busy thread cannot use 1.5 cores")

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

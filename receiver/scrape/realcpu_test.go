//go:build realmachine

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// realScraper scrapes the real machine ("/") on clk.
func realScraper(t *testing.T, mbc metadata.MetricsBuilderConfig, clk *fakeClock) *Scraper {
	t.Helper()
	s := New(newSettings(), Options{Host: testHost("/"), NodeName: "real", MetricsBuilderConfig: mbc, Now: clk.Now})
	require.NoError(t, s.Start(context.Background(), nil))
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	return s
}

// scrapeContainer scrapes the machine and returns c's points. It fails on a
// scrape error about c, its pod or nobody (the node); errors about other
// containers on the machine are not this test's.
func scrapeContainer(t *testing.T, s *Scraper, c *cgrouptest.Container) map[string]float64 {
	t.Helper()
	p := points(mustScrape(t, s, c), "container.id", c.ID)
	require.NotEmpty(t, p, "the real container was not scraped")
	return p
}

// TestRealTaskStatesAndLoad: in a real kubepods-shaped cgroup, a sleeping
// child shows 0 running threads; then a child with exactly K busy threads
// shows K running, and the load average, fed by real scrapes on a clock
// that advances 10 s per scrape, climbs from 0 towards K as
// K*(1-e^-n) and ends within 5% of K.
func TestRealTaskStatesAndLoad(t *testing.T) {
	machine.Lock(t)
	const k = 3
	c := cgrouptest.NewContainer(t, "burstable")
	sleeper := c.Start(t, cgrouptest.ModeSleep)
	require.Eventually(t, func() bool { return len(c.Threads(t)) > 0 && c.RunningThreads(t) == 0 },
		30*time.Second, 20*time.Millisecond, "the sleeping child never settled")

	// The sleeping child is a Go program: a runtime thread (sysmon, the
	// GC) may be running at the moment of a scrape, and CI once caught one.
	// A scraper's first sample initializes the load average, so the test
	// starts from a fresh scraper until one's first scrape sees the child
	// asleep (each is shut down in its cleanup).
	var (
		clk *fakeClock
		s   *Scraper
		p   map[string]float64
	)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		clk = &fakeClock{now: time.Now()}
		s = realScraper(t, defaultMBC(), clk)
		if p = scrapeContainer(t, s, c); p["container.tasks/running"] == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "no scrape in 30 s saw the sleeping child with 0 running threads")
	}
	assert.GreaterOrEqual(t, p["container.tasks/sleeping"], 1.0)
	assert.Equal(t, 0.0, p["container.cpu.load_average.10s"], "the first sample initializes the load")
	assert.Equal(t, 0.0, p["container.tasks/uninterruptible"]+p["container.tasks/stopped"]+p["container.tasks/zombie"])
	sleeper.Kill()

	spinner := c.Start(t, cgrouptest.ModeSpin, fmt.Sprintf("threads=%d", k))
	// Exactly K running once the shell sleeps in its wait: until then it
	// may be runnable itself between two forks (CI saw K+1 running at every
	// scrape of a test that did not wait for that).
	require.Eventually(t, func() bool {
		return len(c.Threads(t)) == k+1 && cgrouptest.Waiting(spinner.Cmd.Process.Pid) && c.RunningThreads(t) == k
	}, 30*time.Second, 20*time.Millisecond, "the busy child never had %d running threads", k)

	// Load average: one scrape per simulated 10 s.
	prev := 0.0
	var loads []float64
	for n := 1; n <= 6; n++ {
		clk.now = clk.now.Add(10 * time.Second)
		p = scrapeContainer(t, s, c)
		load := p["container.cpu.load_average.10s"]
		loads = append(loads, load)
		assert.Equal(t, float64(k), p["container.tasks/running"], "scrape %d: exactly %d running threads", n, k)
		assert.Greater(t, load, prev, "the load climbs")
		// With exactly K running at every scrape, load_n = K(1-e^-n).
		assert.InDelta(t, k*(1-math.Exp(-float64(n))), load, 0.05, "scrape %d", n)
		prev = load
	}
	assert.InDelta(t, k, loads[len(loads)-1], 0.05*k, "load approaches K: %v", loads)
	t.Logf("K=%d load average over 6 scrapes 10 s apart: %.3f", k, loads)
	pod := points(mustScrape(t, s, c), "k8s.pod.uid", c.PodUID)
	assert.Equal(t, float64(k), pod["k8s.pod.tasks/running"], "the pod sums its (one) container")
	assert.Greater(t, pod["k8s.pod.cpu.load_average.10s"], 0.95*k)
}

// mustScrape scrapes the whole machine, failing on errors about c (see
// scrapeContainer).
func mustScrape(t *testing.T, s *Scraper, c *cgrouptest.Container) pmetric.Metrics {
	t.Helper()
	m, err := s.Scrape(context.Background())
	machine.RequireNoOwnErrors(t, err, c.ID, c.PodUID)
	return m
}

// TestRealThrottling: a busy child under a 10 ms / 100 ms CFS quota is
// throttled: periods, throttled periods and throttled time all grow between
// two scrapes, and the limit reads 0.1 cores.
func TestRealThrottling(t *testing.T) {
	machine.Lock(t)
	c := cgrouptest.NewContainer(t, "burstable")
	c.SetCPUQuota(t, 10000, 100000)
	c.Start(t, cgrouptest.ModeBurn, "threads=1")
	clk := &fakeClock{now: time.Now()}
	s := realScraper(t, defaultMBC(), clk)

	// Each scrape lies between two reads of the kernel's cpu.stat.
	scrape := func() (map[string]float64, cgrouptest.CPUStat, cgrouptest.CPUStat) {
		k0 := c.CPU(t)
		p := scrapeContainer(t, s, c)
		return p, k0, c.CPU(t)
	}
	p1, k0, k1 := scrape()
	// Wait for three more throttled periods by the kernel's count: how long
	// that takes depends on the machine's load, what is reported does not.
	require.Eventually(t, func() bool { return c.CPU(t).Throttled >= k1.Throttled+3 }, 60*time.Second, 20*time.Millisecond,
		"the busy child was never throttled three more times")
	clk.now = clk.now.Add(600 * time.Millisecond)
	p2, k2, k3 := scrape()

	assert.Equal(t, 0.1, p1["container.cpu.limit"])
	for i, w := range []struct {
		p      map[string]float64
		k0, k1 cgrouptest.CPUStat
	}{{p1, k0, k1}, {p2, k2, k3}} {
		between(t, fmt.Sprintf("scrape %d: container.cpu.throttling.periods", i+1), w.p["container.cpu.throttling.periods"], w.k0.Periods, w.k1.Periods)
		between(t, fmt.Sprintf("scrape %d: container.cpu.throttling.throttled_periods", i+1), w.p["container.cpu.throttling.throttled_periods"], w.k0.Throttled, w.k1.Throttled)
		// In seconds: the kernel's count is in ns (v1) or µs (v2).
		betweenSeconds(t, fmt.Sprintf("scrape %d: container.cpu.throttling.throttled_time", i+1), w.p["container.cpu.throttling.throttled_time"],
			w.k0.ThrottledTime, w.k1.ThrottledTime)
	}
	for _, m := range []string{"container.cpu.throttling.periods", "container.cpu.throttling.throttled_periods", "container.cpu.throttling.throttled_time"} {
		require.Contains(t, p2, m)
		assert.Greater(t, p2[m], p1[m], "%s grows under a quota", m)
	}
	dp := p2["container.cpu.throttling.periods"] - p1["container.cpu.throttling.periods"]
	dt := p2["container.cpu.throttling.throttled_time"] - p1["container.cpu.throttling.throttled_time"]
	t.Logf("between the scrapes: %.0f periods, %.0f throttled, %.3f s throttled", dp,
		p2["container.cpu.throttling.throttled_periods"]-p1["container.cpu.throttling.throttled_periods"], dt)
}

// TestRealPSI: pressure points appear for a real cgroup (on a hybrid machine
// from its mirror under the unified tree) and for the node, and stall time
// does not go backwards.
func TestRealPSI(t *testing.T) {
	machine.Lock(t)
	c := cgrouptest.NewContainer(t, "burstable")
	if !cgrouptest.HasPSI(c) {
		t.Skip("no pressure files for the test cgroup on this machine")
	}
	c.Start(t, cgrouptest.ModeBurn, "threads=3")
	clk := &fakeClock{now: time.Now()}
	s := realScraper(t, defaultMBC(), clk)
	time.Sleep(300 * time.Millisecond)
	m1 := mustScrape(t, s, c)
	time.Sleep(300 * time.Millisecond)
	m2 := mustScrape(t, s, c)
	p1, p2 := points(m1, "container.id", c.ID), points(m2, "container.id", c.ID)
	for _, r := range []string{"cpu", "memory", "io"} {
		key := "container.pressure.stall_time/" + r + "/some"
		require.Contains(t, p2, key)
		assert.GreaterOrEqual(t, p2[key], p1[key], key)
	}
	assert.Greater(t, p2["container.pressure.stall_time/cpu/some"], 0.0, "3 busy threads on this machine wait for CPU")
	t.Logf("container cpu some stall: %.6f s -> %.6f s", p1["container.pressure.stall_time/cpu/some"], p2["container.pressure.stall_time/cpu/some"])
	// Only the node resource has k8s.node.* metrics.
	assert.Contains(t, points(m2, "k8s.node.name", "real"), "k8s.node.pressure.stall_time/cpu/some")
}

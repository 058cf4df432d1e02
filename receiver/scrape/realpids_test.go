//go:build realmachine

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
)

// processCount counts the container's processes from its cgroup.procs (in
// the pids hierarchy on v1) and their threads from /proc/<pid>/task.
func processCount(t *testing.T, c *cgrouptest.Container) (procs, threads int) {
	t.Helper()
	dir := c.Dir("pids")
	if cgrouptest.V2() {
		dir = c.Dir("")
	}
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	require.NoError(t, err)
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		require.NoError(t, err)
		procs++
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err == nil {
			threads += len(ents)
		}
	}
	return procs, threads
}

// TestRealPids: a child running /bin/sh with K single-threaded busy
// subshells in a real kubepods-shaped cgroup: container.pids.count equals
// the K+1 processes /proc shows in the cgroup, the pod's count equals it
// too (the pod holds nothing else), no limit point while pids.max is
// "max"; after the test (as the node's operator) sets pids.max to 64, the
// limit reads 64.
func TestRealPids(t *testing.T) {
	const k = 2
	c := cgrouptest.NewContainer(t, "burstable")
	if _, err := os.Stat(filepath.Join(c.Dir("pids"), "pids.current")); err != nil && !cgrouptest.V2() {
		if os.Getenv("CI") != "" {
			t.Fatalf("no v1 pids hierarchy: %v", err)
		}
		t.Skip("no v1 pids hierarchy")
	}
	c.Start(t, cgrouptest.ModeSpin, fmt.Sprintf("threads=%d", k))
	require.Eventually(t, func() bool {
		p, th := processCount(t, c)
		return p == k+1 && th == k+1
	}, 30*time.Second, 20*time.Millisecond, "the child never settled on %d single-threaded processes", k+1)

	s := realScraper(t, defaultMBC(), &fakeClock{now: time.Now()})
	p := scrapeContainer(t, s, c)
	procs, threads := processCount(t, c)
	require.Equal(t, k+1, procs, "the process count changed during the scrape")
	assert.Equal(t, float64(procs), p["container.pids.count"], "pids.current = the container's processes")
	assert.Equal(t, float64(threads), p["container.pids.count"])
	_, hasLimit := p["container.pids.limit"]
	assert.False(t, hasLimit, "pids.max is max: no limit point, not 0")
	pod := points(mustScrape(t, s, c), "k8s.pod.uid", c.PodUID)
	assert.Equal(t, float64(k+1), pod["k8s.pod.pids.count"], "the pod holds only this container")

	hier := "pids"
	if cgrouptest.V2() {
		hier = ""
	}
	c.Write(t, hier, "pids.max", "64")
	p = scrapeContainer(t, s, c)
	assert.Equal(t, 64.0, p["container.pids.limit"])
	assert.Equal(t, float64(k+1), p["container.pids.count"])
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/containerstats/containerstatsreceiver/internal/identity"
)

// dockerID is the hybrid fixture's standalone docker container
// (/docker/<id>, process 7600).
const dockerID = "1818181818181818181818181818181818181818181818181818181818181818"

// restartCgroup makes the container's cgroup again in every hierarchy, as
// `docker restart` does: the same path, new directories (new inodes).
func restartCgroup(t *testing.T, root string) {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(root, "sys/fs/cgroup/*/docker", dockerID))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, d := range dirs {
		require.NoError(t, os.Rename(d, d+".old"))
		require.NoError(t, os.CopyFS(d, os.DirFS(d+".old")))
		require.NoError(t, os.RemoveAll(d+".old"))
	}
}

// writeStart gives process pid of the fixture a /proc/<pid>/stat whose
// starttime is ticks (clock ticks after the fixture's boot, btime
// 1700000000).
func writeStart(t *testing.T, root string, pid int, ticks uint64) {
	t.Helper()
	line := fmt.Sprintf("%d (sleep) S 1 %d %d 0 -1 4194560 101 0 102 0 103 104 0 0 20 0 1 0 %d 4530176 105\n", pid, pid, pid, ticks)
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc", fmt.Sprint(pid), "stat"), []byte(line), 0o600))
}

const fixtureBoot = 1700000000

// startAndUptime are the start time of the container's cumulative points
// (all equal) and its container.uptime.
func startAndUptime(t *testing.T, m pmetric.Metrics) (pcommon.Timestamp, float64) {
	t.Helper()
	var start pcommon.Timestamp
	up := -1.0
	eachMetric(m, "container.id", dockerID, func(mt pmetric.Metric) {
		switch {
		case mt.Type() == pmetric.MetricTypeSum && mt.Sum().IsMonotonic():
			for i := range mt.Sum().DataPoints().Len() {
				st := mt.Sum().DataPoints().At(i).StartTimestamp()
				if start == 0 {
					start = st
				}
				assert.Equal(t, start, st, mt.Name())
			}
		case mt.Name() == "container.uptime":
			up = mt.Gauge().DataPoints().At(0).DoubleValue()
		}
	})
	require.NotZero(t, start, "the container's cumulative points")
	return start, up
}

// A standalone container's series follows its run: a restart (its cgroup
// made again under the same ID) starts the series again, with the start
// time and uptime of the new run from its process's start; the runtime's
// creation time (docker keeps the first run's) does not bring it back.
func TestStandaloneRestartStartsTheSeriesAgain(t *testing.T) {
	root := copyFixture(t, "hybrid")
	created := time.Unix(fixtureBoot+50, 0)
	fi := &fakeIdentity{containers: map[string]identity.Container{
		dockerID: {ID: dockerID, Name: "solo", Runtime: "docker", StartTime: created, Source: identity.SourceDocker},
	}}
	clk := &fakeClock{now: t0}
	s := startScraper(t, root, true, clk, func(o *Options) { o.Identity = fi })
	tick := func() pmetric.Metrics {
		clk.now = clk.now.Add(10 * time.Second)
		m, err := s.Scrape(context.Background())
		require.NoError(t, err)
		return m
	}

	// First run, no /proc/7600/stat in the fixture: the runtime's
	// creation time.
	start, _ := startAndUptime(t, tick())
	assert.Equal(t, pcommon.NewTimestampFromTime(created), start)
	// Unchanged cgroup: nothing moves.
	start, _ = startAndUptime(t, tick())
	assert.Equal(t, pcommon.NewTimestampFromTime(created), start)

	// Restarted, /proc tells the new run's start: 4321.07 s after boot.
	restartCgroup(t, root)
	writeStart(t, root, 7600, 432107)
	run := time.Unix(fixtureBoot, 0).Add(4321070 * time.Millisecond)
	clk.now = run.Add(25*time.Second + 500*time.Millisecond).Add(-10 * time.Second)
	m := tick()
	start, up := startAndUptime(t, m)
	assert.Equal(t, pcommon.NewTimestampFromTime(run), start)
	assert.Equal(t, 25.0, up, "uptime of the run, whole seconds")
	assert.Equal(t, 1, resources(m, dockerID), "one series")
	start, _ = startAndUptime(t, tick())
	assert.Equal(t, pcommon.NewTimestampFromTime(run), start, "stable within the run")

	// Restarted again, /proc unreadable: the previous scrape's time, when
	// the old run was last seen.
	require.NoError(t, os.Remove(filepath.Join(root, "proc/7600/stat")))
	restartCgroup(t, root)
	prev := clk.now
	start, up = startAndUptime(t, tick())
	assert.Equal(t, pcommon.NewTimestampFromTime(prev), start)
	assert.Equal(t, 10.0, up, "uptime from the previous scrape, not the first run's creation")
}

// resources counts the resources with container.id id.
func resources(m pmetric.Metrics, id string) int {
	n := 0
	for i := range m.ResourceMetrics().Len() {
		if v, ok := m.ResourceMetrics().At(i).Resource().Attributes().Get("container.id"); ok && v.Str() == id {
			n++
		}
	}
	return n
}

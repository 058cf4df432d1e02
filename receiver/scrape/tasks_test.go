// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// writeState rewrites the state letter of /proc/<tid>/stat in a fixture.
func writeState(t *testing.T, root string, tid int, state byte) {
	t.Helper()
	p := filepath.Join(root, "proc", strconv.Itoa(tid), "stat")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	i := strings.LastIndexByte(string(data), ')')
	data[i+2] = state
	require.NoError(t, os.WriteFile(p, data, 0o600)) //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
}

// The load average follows the real (injected) time between scrapes: 4 s
// after a first scrape with 3 running threads of a1 and 2 of b2, two more
// of a1's threads run (a sleeping one and an idle one), so a1's load is
// 3e^-0.4 + 5(1-e^-0.4), b2 stays 2, and the pod's load is their sum.
func TestScrapeLoadAverageIrregularInterval(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	clk := &fakeClock{now: t0}
	s := scraperWith(t, root, defaultMBC(), clk, nil)
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 3.0, points(m, "container.id", v2Ctr1)["container.cpu.load_average.10s"])

	writeState(t, root, 2104, 'R') // was S
	writeState(t, root, 2115, 'R') // was I
	bumpCPU(t, root)               // threads that ran advanced the CPU time
	clk.now = t0.Add(4 * time.Second)
	m, err = s.Scrape(context.Background())
	require.NoError(t, err)
	a1 := points(m, "container.id", v2Ctr1)
	assert.Equal(t, 5.0, a1["container.tasks/running"])
	assert.Equal(t, 4.0, a1["container.tasks/sleeping"])
	assert.Equal(t, 5.0, a1["container.tasks/idle"])
	want := 3*math.Exp(-0.4) + 5*(1-math.Exp(-0.4))
	assert.InDelta(t, want, a1["container.cpu.load_average.10s"], 1e-12)
	pod := points(m, "k8s.pod.uid", podUID1)
	assert.InDelta(t, want+2, pod["k8s.pod.cpu.load_average.10s"], 1e-12)
	assert.Equal(t, 7.0, pod["k8s.pod.tasks/running"])
}

// A container whose thread list and total CPU time did not change since the
// last scrape keeps the states of that scrape without reading a thread's
// stat file (no thread ran in between); a CPU time that advanced, or a
// thread added to the list, makes the scrape read them all again.
func TestScrapeThreadStatesReusedWhileCPUIdle(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	clk := &fakeClock{now: t0}
	var reads []string
	s := New(newSettings(), Options{
		Host: testHost(root), NodeName: "node-1", MetricsBuilderConfig: defaultMBC(), Now: clk.Now,
		StandaloneContainers: true, TraceRead: func(p string) { reads = append(reads, p) },
	})
	require.NoError(t, s.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	scrape := func() map[string]float64 {
		t.Helper()
		reads = reads[:0]
		clk.now = clk.now.Add(10 * time.Second)
		m, err := s.Scrape(context.Background())
		require.NoError(t, err)
		return points(m, "container.id", v2Ctr1)
	}
	readStat := func(tid int) bool {
		for _, p := range reads {
			if strings.HasSuffix(p, "/proc/"+strconv.Itoa(tid)+"/stat") {
				return true
			}
		}
		return false
	}

	a1 := scrape()
	require.Equal(t, 3.0, a1["container.tasks/running"])
	require.Equal(t, 5.0, a1["container.tasks/sleeping"])
	require.True(t, readStat(2104), "first scrape reads every thread")

	writeState(t, root, 2104, 'R') // was S; the CPU time stays put
	a1 = scrape()
	assert.False(t, readStat(2104), "CPU time and thread list unchanged: no thread's stat file is read")
	assert.Equal(t, 3.0, a1["container.tasks/running"], "states of the last read")
	assert.Equal(t, 5.0, a1["container.tasks/sleeping"])
	assert.Equal(t, 3.0, a1["container.cpu.load_average.10s"], "load average keeps updating from the reused count")

	bumpCPU(t, root)
	a1 = scrape()
	assert.True(t, readStat(2104), "CPU time advanced: states read again")
	assert.Equal(t, 4.0, a1["container.tasks/running"])
	assert.Equal(t, 4.0, a1["container.tasks/sleeping"])

	// A thread moved in (the list changes) while the CPU time stays put.
	threads := filepath.Join(root, v2A1Dir, "cgroup.threads")
	list, err := os.ReadFile(threads)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(threads, append(list, "2999\n"...), 0o600)) //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
	require.NoError(t, os.MkdirAll(filepath.Join(root, "proc", "2999"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc", "2999", "stat"), []byte("2999 (moved in) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 1\n"), 0o600))
	a1 = scrape()
	assert.True(t, readStat(2999), "thread list changed: states read again")
	assert.Equal(t, 5.0, a1["container.tasks/running"])
}

// A thread list with 0s (threads outside the collector's PID namespace, as
// v2 prints them) counts the rest and warns once.
func TestScrapeForeignPIDNamespaceWarnsOnce(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	p := filepath.Join(root, v2A1Dir, "cgroup.threads")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, append([]byte("0\n0\n"), data...), 0o600)) //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
	core, logs := observer.New(zapcore.InfoLevel)
	clk := &fakeClock{now: t0}
	s := scraperWith(t, root, defaultMBC(), clk, zap.New(core))
	for i := 0; i < 2; i++ {
		m, err := s.Scrape(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 3.0, points(m, "container.id", v2Ctr1)["container.tasks/running"])
		clk.now = clk.now.Add(10 * time.Second)
	}
	w := logs.FilterMessageSnippet("PID namespace").All()
	require.Len(t, w, 1)
	assert.Equal(t, zapcore.WarnLevel, w[0].Level)
}

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
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

const (
	v2Pod1  = "/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b3c4d_0000_4000_8000_00000000000a.slice"
	v2A1Dir = v2Pod1 + "/cri-containerd-" + v2Ctr1 + ".scope"
	v2Ctr2  = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
	podUID1 = "1a2b3c4d-0000-4000-8000-00000000000a"
)

func scraperWith(t testing.TB, root string, mbc metadata.MetricsBuilderConfig, clk *fakeClock, logger *zap.Logger) *Scraper {
	t.Helper()
	set := newSettings()
	if logger != nil {
		set.Logger = logger
	}
	s := New(set, Options{RootPath: root, NodeName: "node-1", MetricsBuilderConfig: mbc, Now: clk.Now, StandaloneContainers: true})
	require.NoError(t, s.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	return s
}

// allPSI enables the optional PSI averages too.
func allPSI() metadata.MetricsBuilderConfig {
	mbc := defaultMBC()
	m := &mbc.Metrics
	m.ContainerPressureAvg10.Enabled, m.ContainerPressureAvg60.Enabled, m.ContainerPressureAvg300.Enabled = true, true, true
	m.K8sPodPressureAvg10.Enabled, m.K8sPodPressureAvg60.Enabled, m.K8sPodPressureAvg300.Enabled = true, true, true
	m.K8sNodePressureAvg10.Enabled, m.K8sNodePressureAvg60.Enabled, m.K8sNodePressureAvg300.Enabled = true, true, true
	return mbc
}

func metricNames(m pmetric.Metrics) map[string]bool {
	out := map[string]bool{}
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		ms := m.ResourceMetrics().At(i).ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			out[ms.At(j).Name()] = true
		}
	}
	return out
}

// With every PSI metric on, the layouts that have pressure files match their
// golden files (the averages as ratios 0-1).
func TestScrapeGoldenPSIAverages(t *testing.T) {
	for _, lt := range []string{"v2-systemd", "hybrid"} {
		t.Run(lt, func(t *testing.T) {
			s := scraperWith(t, copyFixture(t, lt), allPSI(), &fakeClock{now: t0}, nil)
			m, err := s.Scrape(context.Background())
			require.NoError(t, err)
			requireGolden(t, filepath.Join("..", "..", "testdata", "golden", lt+"-psi-averages.yaml"), m)
		})
	}
}

// A layout with a unified tree but no pressure files (v2-cgroupfs), and one
// with neither (v1-systemd), yield no PSI point at all, never zeros, and
// say so once at info level however many cgroups and scrapes.
func TestScrapeNoPressureFilesNoPSIPoints(t *testing.T) {
	for _, lt := range []string{"v2-cgroupfs", "v1-systemd"} {
		t.Run(lt, func(t *testing.T) {
			core, logs := observer.New(zapcore.InfoLevel)
			clk := &fakeClock{now: t0}
			s := scraperWith(t, copyFixture(t, lt), allPSI(), clk, zap.New(core))
			for i := 0; i < 2; i++ {
				m, err := s.Scrape(context.Background())
				require.NoError(t, err)
				require.Positive(t, m.DataPointCount())
				for name := range metricNames(m) {
					assert.NotContains(t, name, "pressure", "no PSI point without pressure files")
				}
				clk.now = clk.now.Add(10 * time.Second)
			}
			psiLogs := logs.FilterMessageSnippet("PSI").All()
			require.Len(t, psiLogs, 1, "PSI unavailability is logged once per receiver")
			assert.Equal(t, zapcore.InfoLevel, psiLogs[0].Level)
		})
	}
}

// Where pressure files exist the log stays quiet about them: on v2-systemd
// only the cgroups without files trigger the single message. A pod whose
// memory.pressure is gone (the fixture's pod has all three, as a real v2
// pod slice does) has no memory pressure point, not a 0.
func TestScrapePSIPresentNoZerosForMissing(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	require.NoError(t, os.Remove(filepath.Join(root, "sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice",
		"kubepods-burstable-pod1a2b3c4d_0000_4000_8000_00000000000a.slice", "memory.pressure")))
	s := scraperWith(t, root, allPSI(), &fakeClock{now: t0}, nil)
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	a1 := points(m, "container.id", v2Ctr1)
	assert.InDelta(t, 3.1, a1["container.pressure.stall_time/cpu/some"], 1e-12, "total µs -> s")
	assert.InDelta(t, 0.2211, a1["container.pressure.avg10/cpu/some"], 1e-12, "percent -> ratio")
	assert.InDelta(t, 0.2266, a1["container.pressure.avg300/cpu/full"], 1e-12)
	pod := points(m, "k8s.pod.uid", podUID1)
	assert.Contains(t, pod, "k8s.pod.pressure.stall_time/cpu/some")
	assert.NotContains(t, pod, "k8s.pod.pressure.stall_time/memory/some", "the pod has no memory.pressure: no point, not 0")
	for k := range points(m, "container.id", v2Ctr2) {
		assert.NotContains(t, k, "pressure")
	}
}

// writeState rewrites the state letter of /proc/<tid>/stat in a fixture.
func writeState(t *testing.T, root string, tid int, state byte) {
	t.Helper()
	p := filepath.Join(root, "proc", strconv.Itoa(tid), "stat")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	i := strings.LastIndexByte(string(data), ')')
	data[i+2] = state
	require.NoError(t, os.WriteFile(p, data, 0o644))
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
	s := New(newSettings(), Options{RootPath: root, NodeName: "node-1", MetricsBuilderConfig: defaultMBC(), Now: clk.Now,
		StandaloneContainers: true, TraceRead: func(p string) { reads = append(reads, p) }})
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
	require.NoError(t, os.WriteFile(threads, append(list, "2999\n"...), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "proc", "2999"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc", "2999", "stat"), []byte("2999 (moved in) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 1\n"), 0o644))
	a1 = scrape()
	assert.True(t, readStat(2999), "thread list changed: states read again")
	assert.Equal(t, 5.0, a1["container.tasks/running"])
}

// Thread lists and /proc/<tid>/stat are read only when a metric needs
// them; the same for pressure files. A malformed stat file and a malformed
// pressure file are partial errors naming the container with defaults, and
// are not read at all with those metrics off.
func TestScrapeReadsOnlyWhatIsEnabled(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc", "2101", "stat"), []byte("garbage"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, v2A1Dir, "io.pressure"), []byte("garbage"), 0o644))

	s := scraperWith(t, root, defaultMBC(), &fakeClock{now: t0}, nil)
	m, err := s.Scrape(context.Background())
	require.Error(t, err)
	var pe scrapererror.PartialScrapeError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 7+6, pe.Failed, "6 task states + load average; 3 resources x some/full of the one PSI metric on by default (stall time)")
	assert.Equal(t, s.plan[kindContainer].tasksPts+s.plan[kindContainer].psiPts, pe.Failed)
	assert.Contains(t, err.Error(), "container "+v2Ctr1+": threads:")
	assert.Contains(t, err.Error(), filepath.Join("proc", "2101", "stat"))
	assert.Contains(t, err.Error(), "io.pressure")
	a1 := points(m, "container.id", v2Ctr1)
	assert.NotContains(t, a1, "container.tasks/running", "the bad container loses its task points")
	assert.Contains(t, a1, "container.cpu.throttling.periods", "and keeps the rest")
	assert.Contains(t, points(m, "container.id", v2Ctr2), "container.tasks/running", "other containers keep theirs")
	assert.NotContains(t, points(m, "k8s.pod.uid", podUID1), "k8s.pod.tasks/running", "no pod sum with a container missing")
	assert.Contains(t, points(m, "k8s.pod.uid", "3c4d5e6f-0000-4000-8000-00000000000c"), "k8s.pod.tasks/running", "other pods keep theirs")

	off := defaultMBC()
	mm := &off.Metrics
	mm.ContainerTasks.Enabled, mm.ContainerCPULoadAverage10s.Enabled = false, false
	mm.K8sPodTasks.Enabled, mm.K8sPodCPULoadAverage10s.Enabled = false, false
	mm.ContainerPressureStallTime.Enabled = false
	s = scraperWith(t, root, off, &fakeClock{now: t0}, nil)
	m, err = s.Scrape(context.Background())
	require.NoError(t, err, "nothing reads the malformed files")
	assert.False(t, metricNames(m)["container.tasks"])
	assert.True(t, metricNames(m)["k8s.pod.pressure.stall_time"])
}

// A malformed cpu.max costs that container's bandwidth points only.
func TestScrapeMalformedCPUMax(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	require.NoError(t, os.WriteFile(filepath.Join(root, v2A1Dir, "cpu.max"), []byte("lots 100000\n"), 0o644))
	s := scraperWith(t, root, defaultMBC(), &fakeClock{now: t0}, nil)
	m, err := s.Scrape(context.Background())
	var pe scrapererror.PartialScrapeError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, s.plan[kindContainer].bwPts, pe.Failed)
	assert.Contains(t, err.Error(), "container "+v2Ctr1)
	assert.Contains(t, err.Error(), "cpu.max")
	a1 := points(m, "container.id", v2Ctr1)
	assert.NotContains(t, a1, "container.cpu.limit")
	assert.Contains(t, a1, "container.tasks/running")
	assert.Contains(t, points(m, "container.id", v2Ctr2), "container.cpu.weight")
}

// An unlimited quota gives no limit point (not 0, not +Inf).
func TestScrapeUnlimitedCPUNoLimitPoint(t *testing.T) {
	s := scraperWith(t, copyFixture(t, "v2-systemd"), defaultMBC(), &fakeClock{now: t0}, nil)
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	b2 := points(m, "container.id", v2Ctr2)
	assert.NotContains(t, b2, "container.cpu.limit", "cpu.max is \"max 100000\"")
	assert.Equal(t, 20.0, b2["container.cpu.weight"])
	assert.NotContains(t, b2, "container.cpu.shares", "no cpu.shares on v2")
}

// A thread list with 0s (threads outside the collector's PID namespace, as
// v2 prints them) counts the rest and warns once.
func TestScrapeForeignPIDNamespaceWarnsOnce(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	p := filepath.Join(root, v2A1Dir, "cgroup.threads")
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, append([]byte("0\n0\n"), data...), 0o644))
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

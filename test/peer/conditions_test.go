// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package peer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
)

// The conditions a size runs under (BENCH_PEER_CONDITIONS). Both start
// from a quiet machine (the 1-min load average below BENCH_PEER_QUIET_LOAD
// before the size creates anything) and account for every tick of the
// measured window: the machine's non-idle CPU (/proc/stat) minus what the
// benchmark ran is foreign CPU, which must stay under BENCH_PEER_FOREIGN_MAX
// cores, or the size fails (its row is printed, marked). So both are
// reproducible: a quiet run has no load but the benchmark's own, a loaded
// run only the load it makes itself.
const (
	// condQuiet: nothing runs but the benchmark.
	condQuiet = "quiet"
	// condLoaded: the benchmark also runs CPU hogs in a cgroup of their own
	// (cgrouptest's standalone container, outside kubepods: neither ours
	// nor cAdvisor reports it), BENCH_PEER_LOAD_FACTOR busy threads per
	// core, started before the warm-up: a load average of about that
	// multiple of the cores (8 on 2 cores by default, the load the
	// first figures were taken under). The hogs' cgroup competes for CPU
	// at the default weight (cpu.shares 1024 / cpu.weight 100) with the
	// cgroup the benchmark's processes run in.
	condLoaded = "loaded"
)

// conditionSettings are the environment's settings of the conditions.
type conditionSettings struct {
	conditions []string
	quietLoad  float64       // BENCH_PEER_QUIET_LOAD: 1-min load to wait for before each size
	quietWait  time.Duration // BENCH_PEER_QUIET_WAIT: how long to wait for it
	foreignMax float64       // BENCH_PEER_FOREIGN_MAX: foreign CPU allowed in a window, cores
	loadFactor int           // BENCH_PEER_LOAD_FACTOR: hog threads per core (loaded)
}

func readConditionSettings(t *testing.T) conditionSettings {
	c := conditionSettings{
		quietLoad:  envFloat(t, "BENCH_PEER_QUIET_LOAD", 1.0),
		quietWait:  envDuration(t, "BENCH_PEER_QUIET_WAIT", 5*time.Minute),
		foreignMax: envFloat(t, "BENCH_PEER_FOREIGN_MAX", 0.1),
		loadFactor: int(envFloat(t, "BENCH_PEER_LOAD_FACTOR", 4)),
	}
	for _, f := range strings.Split(envOr("BENCH_PEER_CONDITIONS", condQuiet+","+condLoaded), ",") {
		switch f = strings.TrimSpace(f); f {
		case condQuiet, condLoaded:
			c.conditions = append(c.conditions, f)
		default:
			t.Fatalf("BENCH_PEER_CONDITIONS=%q: %q is neither %s nor %s", os.Getenv("BENCH_PEER_CONDITIONS"), f, condQuiet, condLoaded)
		}
	}
	if c.loadFactor < 1 {
		t.Fatalf("BENCH_PEER_LOAD_FACTOR must be at least 1")
	}
	return c
}

func envFloat(t *testing.T, key string, def float64) float64 {
	v := os.Getenv(key)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 {
		t.Fatalf("%s=%q: not a positive number", key, v)
	}
	return f
}

// loadAvg is /proc/loadavg's 1, 5 and 15 min averages.
type loadAvg [3]float64

func (l loadAvg) String() string { return fmt.Sprintf("%.2f %.2f %.2f", l[0], l[1], l[2]) }

func readLoad(t *testing.T) loadAvg {
	t.Helper()
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	var l loadAvg
	for i := range l {
		if l[i], err = strconv.ParseFloat(f[i], 64); err != nil {
			t.Fatalf("/proc/loadavg: %q", b)
		}
	}
	return l
}

// waitQuiet waits (polling every 5 s, at most BENCH_PEER_QUIET_WAIT) for
// the 1-min load average to drop below BENCH_PEER_QUIET_LOAD, and fails
// the size, naming the load, if it does not. It returns the load seen.
func waitQuiet(t *testing.T, c conditionSettings) loadAvg {
	t.Helper()
	deadline := time.Now().Add(c.quietWait)
	began := time.Now()
	for {
		l := readLoad(t)
		if l[0] < c.quietLoad {
			t.Logf("load %s: below %.2f after %s", l, c.quietLoad, time.Since(began).Round(time.Second))
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("machine not quiet: 1-min load average %.2f (load %s) still at or above %.2f (BENCH_PEER_QUIET_LOAD) after %s (BENCH_PEER_QUIET_WAIT); not measuring under foreign load", l[0], l, c.quietLoad, c.quietWait)
		}
		time.Sleep(5 * time.Second)
	}
}

// startHogs runs the loaded condition's CPU hogs: one standalone
// container cgroup with loadFactor × cores busy threads.
func startHogs(t *testing.T, c conditionSettings) (*cgrouptest.Container, int) {
	t.Helper()
	threads := c.loadFactor * runtime.NumCPU()
	hog := cgrouptest.NewStandaloneContainer(t)
	hog.Start(t, cgrouptest.ModeBurn, fmt.Sprintf("threads=%d", threads))
	return hog, threads
}

// machineTicks is the machine's non-idle CPU time in clock ticks: user,
// nice, system, irq and softirq of /proc/stat's cpu line (guest time is in
// user already). Idle, iowait and steal (time the hypervisor gave another
// guest) are not CPU this machine's processes used.
func machineTicks(t *testing.T) (nonIdle, steal int64) {
	t.Helper()
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		t.Fatalf("/proc/stat: first line %q", line)
	}
	v := make([]int64, len(f)-1)
	for i := range v {
		if v[i], err = strconv.ParseInt(f[i+1], 10, 64); err != nil {
			t.Fatalf("/proc/stat: %q", line)
		}
	}
	// user nice system idle iowait irq softirq steal ...
	return v[0] + v[1] + v[2] + v[5] + v[6], v[7]
}

// cgroupCPUNanos is the CPU time of everything a cgroup ran: v1
// cpuacct.usage, else the unified tree's cpu.stat usage_usec.
func cgroupCPUNanos(t *testing.T, c *cgrouptest.Container) int64 {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(c.Dir("cpuacct"), "cpuacct.usage")); err == nil {
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			t.Fatalf("cpuacct.usage of %s: %q", c.Rel, b)
		}
		return n
	}
	for _, h := range []string{"unified", ""} {
		b, err := os.ReadFile(filepath.Join(c.Dir(h), "cpu.stat"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatalf("cpu.stat of %s: %q", c.Rel, line)
				}
				return n * 1000
			}
		}
	}
	t.Fatalf("no CPU time for cgroup %s (cpuacct.usage, cpu.stat usage_usec)", c.Rel)
	return 0
}

// accounting is the CPU of the machine and of everything the benchmark
// runs, read at the start and at the end of the window.
type accounting struct {
	procs      map[string]*proc
	containers []*cgrouptest.Container
	hog        *cgrouptest.Container

	at                time.Time
	load              loadAvg
	machine, steal    int64
	self, procTicks   int64
	workloadNs, hogNs int64
	perProc           map[string]int64
}

func (a *accounting) read(t *testing.T) {
	t.Helper()
	a.at = time.Now()
	a.machine, a.steal = machineTicks(t)
	a.self = cpuTicks(t, os.Getpid())
	a.perProc = map[string]int64{}
	a.procTicks = 0
	for name, p := range a.procs {
		a.perProc[name] = cpuTicks(t, p.cmd.Process.Pid)
		a.procTicks += a.perProc[name]
	}
	a.workloadNs = 0
	for _, c := range a.containers {
		a.workloadNs += cgroupCPUNanos(t, c)
	}
	a.hogNs = 0
	if a.hog != nil {
		a.hogNs = cgroupCPUNanos(t, a.hog)
	}
	a.load = readLoad(t)
}

// window is the conditions of one size's measured window, in cores
// (CPU seconds per second).
type window struct {
	cond                  string
	loadWaited            loadAvg // when the size began (waitQuiet)
	loadBefore, loadAfter loadAvg // at the start and the end of the window
	machine, steal        float64 // non-idle CPU of the machine; steal beside it
	bench                 float64 // everything the benchmark ran, hogs included
	procs                 float64 // of which its processes (collectors, cAdvisors, sink, Prometheus 3)
	self                  float64 // of which the test process (scraper, harness)
	workload              float64 // of which the workload containers' cgroups
	hogs                  float64 // of which the hogs' cgroup
	hogThreads            int
	foreign               float64 // machine - bench
	foreignMax            float64
	extraTicks            int64 // ticks of helpers measured after the window (perf)
}

// quiet reports whether the window had no more foreign CPU than allowed.
func (w window) quiet() bool { return w.foreign <= w.foreignMax }

func (w window) verdict() string {
	if !w.quiet() {
		return fmt.Sprintf("**not reproducible**: foreign CPU %.2f cores > %.2f", w.foreign, w.foreignMax)
	}
	if w.cond == condLoaded {
		return fmt.Sprintf("loaded by the benchmark alone (%d hog threads)", w.hogThreads)
	}
	return "quiet"
}

// measureWindow turns the readings at the start and end of a window into
// cores; extraTicks are helpers' ticks (perf) counted as the benchmark's.
func measureWindow(cond string, c conditionSettings, waited loadAvg, start, end *accounting, hogThreads int, extraTicks int64) window {
	secs := end.at.Sub(start.at).Seconds()
	cores := func(ticks int64) float64 { return float64(ticks) / clockTicks / secs }
	nsCores := func(ns int64) float64 { return float64(ns) / 1e9 / secs }
	w := window{
		cond: cond, loadWaited: waited, loadBefore: start.load, loadAfter: end.load,
		machine:    cores(end.machine - start.machine),
		steal:      cores(end.steal - start.steal),
		procs:      cores(end.procTicks - start.procTicks + extraTicks),
		self:       cores(end.self - start.self),
		workload:   nsCores(end.workloadNs - start.workloadNs),
		hogs:       nsCores(end.hogNs - start.hogNs),
		hogThreads: hogThreads, foreignMax: c.foreignMax, extraTicks: extraTicks,
	}
	w.bench = w.procs + w.self + w.workload + w.hogs
	w.foreign = w.machine - w.bench
	return w
}

// formatConditions is the table of each size's window conditions.
func formatConditions(b *strings.Builder, rs []result) {
	b.WriteString("\nConditions of each window (cores = CPU seconds per second; foreign = the machine's non-idle CPU from /proc/stat minus everything the benchmark ran: its processes, the test process, the workload containers' and the hogs' cgroups):\n\n")
	b.WriteString("| N | load when the size began | load at the window's start | at its end | machine non-idle cores | benchmark cores (processes / test process / workloads / hogs) | foreign cores | steal cores | verdict |\n")
	b.WriteString("|---:|---|---|---|---:|---|---:|---:|---|\n")
	for _, r := range rs {
		w := r.window
		fmt.Fprintf(b, "| %d | %s | %s | %s | %.2f | %.2f (%.2f / %.2f / %.2f / %.2f) | %.2f | %.2f | %s |\n", r.n,
			w.loadWaited, w.loadBefore, w.loadAfter, w.machine, w.bench, w.procs, w.self, w.workload, w.hogs, w.foreign, w.steal, w.verdict())
	}
}

// TestWindowAccounting: the window's arithmetic on made-up readings (no
// machine needed: go test -tags realmachine -run TestWindowAccounting
// ./test/peer/): 10 s, the machine 150 ticks busy, the benchmark's
// processes 40 ticks (+10 of perf), the test process 5, the workloads
// 0.2 s, the hogs 0.3 s: 0.045 cores foreign.
func TestWindowAccounting(t *testing.T) {
	t0 := time.Unix(1000, 0)
	start := &accounting{at: t0, machine: 1000, steal: 7, self: 50, procTicks: 300, workloadNs: 1e9, hogNs: 2e9, load: loadAvg{0.5, 0.4, 0.3}}
	end := &accounting{at: t0.Add(10 * time.Second), machine: 1150, steal: 17, self: 55, procTicks: 340, workloadNs: 1.2e9, hogNs: 2.3e9, load: loadAvg{0.9, 0.5, 0.3}}
	c := conditionSettings{foreignMax: 0.1}
	w := measureWindow(condQuiet, c, loadAvg{0.2, 0.3, 0.3}, start, end, 0, 10)
	near := func(what string, got, want float64) {
		if d := got - want; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	near("machine", w.machine, 0.15)
	near("steal", w.steal, 0.01)
	near("processes (perf included)", w.procs, 0.05)
	near("test process", w.self, 0.005)
	near("workloads", w.workload, 0.02)
	near("hogs", w.hogs, 0.03)
	near("benchmark", w.bench, 0.105)
	near("foreign", w.foreign, 0.045)
	if !w.quiet() || w.verdict() != "quiet" {
		t.Errorf("0.045 foreign cores under a 0.1 maximum: %q", w.verdict())
	}
	c.foreignMax = 0.04
	w = measureWindow(condLoaded, c, loadAvg{}, start, end, 8, 10)
	if w.quiet() || !strings.Contains(w.verdict(), "not reproducible") {
		t.Errorf("0.045 foreign cores over a 0.04 maximum: %q", w.verdict())
	}
	c.foreignMax = 1
	if w = measureWindow(condLoaded, c, loadAvg{}, start, end, 8, 10); w.verdict() != "loaded by the benchmark alone (8 hog threads)" {
		t.Errorf("loaded verdict %q", w.verdict())
	}
}

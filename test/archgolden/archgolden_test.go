// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

// Package archgolden runs each built collector binary, one per
// architecture, against the fixture trees (testdata/fixtures/<layout>,
// through the receiver's root_path) and checks that what it exports equals
// the golden files (testdata/golden/<layout>.yaml) that the scrape's own
// tests write on amd64: linux/amd64 natively, linux/arm64 under qemu-user.
// Each binary also starts without the NVIDIA library and says so once per
// receiver, and binds NVML's symbols lazily. Run it with `make arch-test`;
// in CI (CI set) a missing binary or emulator fails it.
package archgolden

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"sigs.k8s.io/yaml"

	"github.com/containerstats/containerstatsreceiver/internal/testing/fixture"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// binary is one architecture's collector and how to run it here.
type collector struct {
	arch   string
	path   string
	make   string   // the make target that builds it
	runner []string // the emulator and its flags before the binary; none when native
}

// binaries are the collectors under test: OTELCOL_BIN (the host's,
// linux/amd64 in CI) and OTELCOL_ARM64_BIN, run by QEMU_AARCH64 (default
// qemu-aarch64-static, Debian's qemu-user-static) with the arm64 glibc of
// libc6-dev-arm64-cross as its library prefix (QEMU_LD_PREFIX, default
// /usr/aarch64-linux-gnu): invoked explicitly, so binfmt_misc need not be
// registered.
func binaries(t *testing.T) []collector {
	root := repoRoot(t)
	qemu := envOr("QEMU_AARCH64", "qemu-aarch64-static")
	return []collector{
		{arch: "amd64", make: "otelcol", path: envOr("OTELCOL_BIN", filepath.Join(root, "bin", "otelcol-containerstats"))},
		{
			arch: "arm64", make: "otelcol-arm64", path: envOr("OTELCOL_ARM64_BIN", filepath.Join(root, "bin", "otelcol-containerstats-arm64")),
			runner: []string{qemu, "-L", envOr("QEMU_LD_PREFIX", "/usr/aarch64-linux-gnu")},
		},
	}
}

// require fails in CI and skips elsewhere when the binary or its emulator
// is missing, or when it is not the architecture it is named after.
func (b collector) require(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(b.path); err != nil {
		machine.Need(t, fmt.Sprintf("%s collector %s missing (make %s): %v", b.arch, b.path, b.make, err))
	}
	if len(b.runner) > 0 {
		if _, err := exec.LookPath(b.runner[0]); err != nil {
			machine.Need(t, fmt.Sprintf("%s missing (Debian's qemu-user-static): %v", b.runner[0], err))
		}
		if _, err := os.Stat(b.runner[2]); err != nil {
			machine.Need(t, fmt.Sprintf("the %s C library %s missing (libc6-dev-arm64-cross): %v", b.arch, b.runner[2], err))
		}
	}
	want := map[string]elfMachine{"amd64": elfX8664, "arm64": elfAArch64}[b.arch]
	got, err := machineOf(b.path)
	require.NoError(t, err)
	require.Equal(t, want, got, "%s is not a linux/%s binary", b.path, b.arch)
}

func (b collector) command(args ...string) *exec.Cmd {
	argv := append(append(append([]string{}, b.runner...), b.path), args...)
	return exec.Command(argv[0], argv[1:]...) //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
}

// The layouts of the scrape's golden tests (receiver/scrape's layouts):
// the hybrid fixture has containers outside Kubernetes' pods, and
// v2-standalone (a Docker/Podman host, no kubepods) only those.
var layouts = []struct {
	name       string
	standalone bool
}{
	{"v1-cgroupfs", false},
	{"v1-systemd", false},
	{"v2-systemd", false},
	{"v2-cgroupfs", false},
	{"hybrid", true},
	{"v2-standalone", true},
}

// The golden files' clock (receiver/scrape's t0): the first scrape at t0,
// the second 10 s later.
var (
	goldenFirst  = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	goldenSecond = goldenFirst.Add(10 * time.Second)
)

// interval is the binary's collection interval: the test changes the CPU
// counters between the first and the second scrape, so this is the time
// it has to do that (a few milliseconds) after it sees the first export.
const interval = 4 * time.Second

// TestGolden runs every binary on a copy of every fixture layout at once,
// one container_stats receiver per layout each with its own file exporter,
// as receiver/scrape's TestScrapeGolden runs its scraper: a first scrape,
// the CPU counters advanced, a second scrape compared with the golden file.
// The binary's clock is real, so the comparison maps its two scrape times
// to the golden's (t0, t0+10 s) and what depends on the time between
// them back to 10 s: each cpu.usage rate times dt/10 s (within 0.1 %: the
// rates divide by the monotonic clock's dt, the points carry the wall
// clock's), each uptime minus the seconds its second scrape is off
// t0+10 s. Everything else must
// be equal, timestamps included. The filesystem family is off (its golden
// files come from a test with a fake runtime, TestScrapeGoldenFilesystem).
func TestGolden(t *testing.T) {
	for _, b := range binaries(t) {
		t.Run(b.arch, func(t *testing.T) {
			t.Parallel()
			b.require(t)
			requireNoNVML(t, b)
			dir := t.TempDir()
			roots := map[string]string{}
			for _, lt := range layouts {
				roots[lt.name] = filepath.Join(dir, "root-"+lt.name)
				require.NoError(t, os.CopyFS(roots[lt.name], os.DirFS(filepath.Join(repoRoot(t), "testdata", "fixtures", lt.name))))
			}
			cfg := writeConfig(t, dir)
			version, ok := strings.CutPrefix(strings.TrimSpace(run(t, b, "--version")), "otelcol-containerstats version ")
			require.True(t, ok, "--version: %s", version)
			p := start(t, b, "--config", cfg)

			scrapes := firstTwo(t, p, dir, roots)
			for _, lt := range layouts {
				t.Run(lt.name, func(t *testing.T) {
					sc := scrapes[lt.name]
					assert.False(t, hasMetric(sc.first, "container.cpu.usage"), "a rate in the first scrape")
					t1, t2 := scrapeTime(t, sc.first), scrapeTime(t, sc.second)
					require.Less(t, sc.bumped, t1.Add(interval),
						"the CPU counters changed %v after the first scrape started, past the second's start (interval %v): too slow a machine for this test", sc.bumped.Sub(t1), interval)
					require.Greater(t, t2, sc.bumped, "the second scrape started before the CPU counters changed")
					normalize(t, sc.second, t1, t2, version)
					want, err := golden.ReadMetrics(filepath.Join(repoRoot(t), "testdata", "golden", lt.name+".yaml"))
					require.NoError(t, err)
					matchRates(t, want, sc.second)
					require.NoError(t, pmetrictest.CompareMetrics(want, sc.second,
						pmetrictest.IgnoreResourceMetricsOrder(),
						pmetrictest.IgnoreMetricsOrder(),
						pmetrictest.IgnoreMetricDataPointsOrder()), "the %s binary's second scrape against testdata/golden/%s.yaml", b.arch, lt.name)
					t.Logf("%d points equal testdata/golden/%s.yaml (scrapes %v apart)", sc.second.DataPointCount(), lt.name, t2.Sub(t1))
				})
			}

			// Without the NVIDIA library: started, and said so once per
			// receiver (at its start, not at every scrape).
			log := p.stop(t)
			for _, lt := range layouts {
				id := "container_stats/" + lt.name
				var lines []string
				for _, l := range strings.Split(log, "\n") {
					if strings.Contains(l, `"otelcol.component.id": "`+id+`"`) && strings.Contains(l, "NVIDIA") {
						lines = append(lines, l)
					}
				}
				if assert.Len(t, lines, 1, "%s: its NVIDIA log lines", id) {
					assert.Contains(t, lines[0], "No NVIDIA GPU metrics on this node; GPU metrics are off, everything else is unaffected")
					assert.Contains(t, lines[0], "libnvidia-ml.so.1 not found")
				}
			}
		})
	}
}

// TestLazyNVML checks each binary's dynamic linking: no immediate binding
// (DT_BIND_NOW, DF_BIND_NOW, DF_1_NOW), and every NVML symbol undefined and
// referenced only through the PLT (JUMP_SLOT relocations, bound at the
// first call), so the loader never looks for libnvidia-ml's symbols on a
// node without it (OTELCOL_EXTLDFLAGS in the Makefile).
func TestLazyNVML(t *testing.T) {
	for _, b := range binaries(t) {
		t.Run(b.arch, func(t *testing.T) {
			b.require(t)
			n, err := checkLazy(b.path, "nvml")
			require.NoError(t, err)
			assert.Greater(t, n, 100, "NVML symbols bound through the PLT: go-nvml's whole API")
			t.Logf("%s: %d NVML symbols, all undefined and lazily bound", b.path, n)
		})
	}
}

// TestLazyCheckFails shows checkLazy failing, for each architecture's C
// compiler: a C program that calls an undefined nvmlInit_v2, linked as
// go-nvml links (left unresolved, exported dynamically), passes with
// -z lazy; with -z now it fails (immediate binding), and so does one that
// takes the function's address (a GLOB_DAT relocation, resolved at load).
func TestLazyCheckFails(t *testing.T) {
	const (
		call    = "extern int nvmlInit_v2(void);\nint main(int argc, char **argv) { return argc > 5 ? nvmlInit_v2() : 0; }\n"
		address = "extern int nvmlInit_v2(void);\nint (*volatile f)(void);\nint main(int argc, char **argv) { f = nvmlInit_v2; return argc > 5 ? f() : 0; }\n"
	)
	for _, cc := range []struct{ arch, cc string }{{"amd64", "gcc"}, {"arm64", envOr("CC_ARM64", "aarch64-linux-gnu-gcc")}} {
		t.Run(cc.arch, func(t *testing.T) {
			if _, err := exec.LookPath(cc.cc); err != nil {
				machine.Need(t, fmt.Sprintf("%s missing: %v", cc.cc, err))
			}
			dir := t.TempDir()
			link := func(name, src, z string) string {
				c := filepath.Join(dir, name+".c")
				require.NoError(t, os.WriteFile(c, []byte(src), 0o600))
				out := filepath.Join(dir, name)
				b, err := exec.Command(cc.cc, "-o", out, c, "-Wl,--export-dynamic", "-Wl,--unresolved-symbols=ignore-in-object-files", "-Wl,-z,"+z).CombinedOutput() //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
				require.NoError(t, err, "%s", b)
				return out
			}
			n, err := checkLazy(link("lazy", call, "lazy"), "nvml")
			assert.NoError(t, err)
			assert.Equal(t, 1, n)
			_, err = checkLazy(link("now", call, "now"), "nvml")
			assert.ErrorContains(t, err, "immediate binding")
			_, err = checkLazy(link("address", address, "lazy"), "nvml")
			assert.ErrorContains(t, err, "resolved at load")
		})
	}
}

// requireNoNVML needs a host without libnvidia-ml.so.1 for the native
// binary: with it, the binary would report GPUs (a GPU node's figures are
// make gpu-check's).
func requireNoNVML(t *testing.T, b collector) {
	t.Helper()
	if len(b.runner) > 0 {
		return // the emulator's library prefix has no arm64 NVIDIA library
	}
	out, err := exec.Command("ldconfig", "-p").Output()
	if err == nil && bytes.Contains(out, []byte("libnvidia-ml.so.1")) {
		machine.Need(t, "this host has libnvidia-ml.so.1: the golden files are a node without NVIDIA GPUs")
	}
}

// writeConfig writes the collector's configuration: per layout a receiver
// on its root (node-1, as the golden tests name it; no runtime, no
// /var/log/pods names; GPU metrics on, as by default) into its own file
// exporter; no telemetry endpoint.
func writeConfig(t *testing.T, dir string) string {
	t.Helper()
	off := map[string]any{}
	for _, m := range filesystemMetrics(t) {
		off[m] = map[string]any{"enabled": false}
	}
	receivers, exporters, pipelines := map[string]any{}, map[string]any{}, map[string]any{}
	for _, lt := range layouts {
		receivers["container_stats/"+lt.name] = map[string]any{
			"root_path":             filepath.Join(dir, "root-"+lt.name),
			"node_name":             "node-1",
			"standalone_containers": lt.standalone,
			"collection_interval":   interval.String(),
			"initial_delay":         "0s",
			"runtime":               map[string]any{"cri_enabled": false, "containerd_enabled": false, "pod_logs": false},
			"gpu":                   map[string]any{"enabled": true},
			"metrics":               off,
		}
		exporters["file/"+lt.name] = map[string]any{"path": filepath.Join(dir, "out-"+lt.name+".json"), "flush_interval": "50ms"}
		pipelines["metrics/"+lt.name] = map[string]any{"receivers": []string{"container_stats/" + lt.name}, "exporters": []string{"file/" + lt.name}}
	}
	cfg := map[string]any{
		"receivers": receivers,
		"exporters": exporters,
		"service": map[string]any{
			"pipelines": pipelines,
			"telemetry": map[string]any{"metrics": map[string]any{"level": "none"}},
		},
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	require.NoError(t, err)
	p := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(p, b, 0o600))
	return p
}

// filesystemMetrics are the metrics of the filesystem family enabled by
// default (metadata.yaml): what the layouts' golden files leave out.
func filesystemMetrics(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "metadata.yaml"))
	require.NoError(t, err)
	var md struct {
		Metrics map[string]struct {
			Enabled bool `json:"enabled"`
		} `json:"metrics"`
	}
	require.NoError(t, yaml.Unmarshal(b, &md))
	var out []string
	for name, m := range md.Metrics {
		if m.Enabled && (strings.Contains(name, "filesystem") || strings.Contains(name, "ephemeral_storage") || strings.Contains(name, ".volume.")) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	require.NotEmpty(t, out)
	return out
}

// process is a running collector and its combined output.
type process struct {
	cmd  *exec.Cmd
	out  *lockedWriter
	done chan struct{}
	err  error
}

// lockedWriter is the collector's stdout and stderr: os/exec copies both
// into it from its own goroutines.
type lockedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// run runs the binary with args and returns its output.
func run(t *testing.T, b collector, args ...string) string {
	t.Helper()
	out, err := b.command(args...).CombinedOutput()
	require.NoError(t, err, "%v: %s", args, out)
	return string(out)
}

func start(t *testing.T, b collector, args ...string) *process {
	t.Helper()
	p := &process{cmd: b.command(args...), out: &lockedWriter{}, done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	require.NoError(t, p.cmd.Start())
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Logf("started %s", strings.Join(p.cmd.Args, " "))
	t.Cleanup(func() {
		log := p.stop(t)
		if t.Failed() {
			t.Logf("--- %s output ---\n%s", b.arch, log)
		}
	})
	return p
}

// stop ends the collector (SIGTERM, then SIGKILL after 20 s) and returns
// its output.
func (p *process) stop(t *testing.T) string {
	t.Helper()
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			t.Errorf("pid %d ignored SIGTERM, killing", p.cmd.Process.Pid)
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	}
	return p.out.String()
}

// scrapes are a layout's first two exports and when the test changed its
// CPU counters between them.
type scrapes struct {
	first, second pmetric.Metrics
	bumped        time.Time
}

// firstTwo watches every layout's file exporter output at once (each
// receiver scrapes on its own timer) and, as soon as a layout's first
// export is there, advances its CPU counters (fixture.BumpCPU); it returns
// once every layout has two exports, waiting at most a minute (qemu starts
// a collector in seconds).
func firstTwo(t *testing.T, p *process, dir string, roots map[string]string) map[string]*scrapes {
	t.Helper()
	got := map[string]*scrapes{}
	deadline := time.Now().Add(time.Minute)
	for {
		done := 0
		for _, lt := range layouts {
			sc := got[lt.name]
			if sc == nil {
				sc = &scrapes{}
				got[lt.name] = sc
			}
			if sc.second != (pmetric.Metrics{}) {
				done++
				continue
			}
			exports := readExports(t, filepath.Join(dir, "out-"+lt.name+".json"))
			if len(exports) >= 1 && sc.bumped.IsZero() {
				sc.first = exports[0]
				fixture.BumpCPU(t, roots[lt.name])
				sc.bumped = time.Now()
			}
			if len(exports) >= 2 {
				sc.second = exports[1]
			}
		}
		if done == len(layouts) {
			return got
		}
		select {
		case <-p.done:
			t.Fatalf("the collector exited (%v) before two exports of every layout", p.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("not two exports of every layout after a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// readExports parses the complete lines of the file exporter's output
// (one OTLP/JSON request a line).
func readExports(t *testing.T, path string) []pmetric.Metrics {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []pmetric.Metrics
	var u pmetric.JSONUnmarshaler
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break // a line still being written
		}
		m, err := u.UnmarshalMetrics(b[:i])
		require.NoError(t, err, "%s: %s", path, b[:i])
		out = append(out, m)
		b = b[i+1:]
	}
	return out
}

// scrapeTime is the one timestamp of a scrape's points (the scraper takes
// the time once per scrape).
func scrapeTime(t *testing.T, m pmetric.Metrics) time.Time {
	t.Helper()
	ts := map[pcommon.Timestamp]bool{}
	eachPoint(m, func(_ pmetric.Metric, p point) { ts[p.Timestamp()] = true })
	require.Len(t, ts, 1, "one time for every point of a scrape")
	for x := range ts {
		return x.AsTime()
	}
	return time.Time{}
}

// normalize maps the binary's scrape times t1 and t2 to the golden's, what
// depends on t2-t1 to a 10 s interval (TestGolden), and the scope's
// version (the collector's, which its --version printed) to the golden's.
func normalize(t *testing.T, m pmetric.Metrics, t1, t2 time.Time, version string) {
	t.Helper()
	// The scope's version is the collector's (the golden tests' is
	// receivertest's "latest").
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		sms := m.ResourceMetrics().At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			sc := sms.At(j).Scope()
			require.Equal(t, version, sc.Version(), "the receiver's scope version is the collector's")
			sc.SetVersion("latest")
		}
	}
	ts1, ts2 := pcommon.NewTimestampFromTime(t1), pcommon.NewTimestampFromTime(t2)
	dt := t2.Sub(t1).Seconds()
	shift := t2.Unix() - goldenSecond.Unix() // whole seconds: uptimes are whole seconds
	rates, uptimes := 0, 0
	eachPoint(m, func(x pmetric.Metric, p point) {
		if p.Timestamp() == ts2 {
			p.SetTimestamp(pcommon.NewTimestampFromTime(goldenSecond))
		}
		if p.StartTimestamp() == ts1 {
			p.SetStartTimestamp(pcommon.NewTimestampFromTime(goldenFirst))
		}
		switch {
		case isRate(x):
			p.SetDoubleValue(p.DoubleValue() * dt / goldenSecond.Sub(goldenFirst).Seconds())
			rates++
		case strings.HasSuffix(x.Name(), ".uptime"):
			p.SetDoubleValue(p.DoubleValue() - float64(shift))
			uptimes++
		}
	})
	require.Positive(t, rates, "no cpu.usage point")
	require.Positive(t, uptimes, "no uptime point")
}

func isRate(x pmetric.Metric) bool { return strings.HasSuffix(x.Name(), ".cpu.usage") }

// matchRates compares each cpu.usage rate of got (normalized) with the same
// point of want within rateTolerance, and where it is within, sets it to
// want's, for CompareMetrics to check everything else exactly. The
// receiver's rates divide by the monotonic time between its samples and
// the points carry the wall clock's, which can differ by the clock's slew
// (at most 500 ppm under NTP).
func matchRates(t *testing.T, want, got pmetric.Metrics) {
	t.Helper()
	key := func(rm pmetric.ResourceMetrics, x pmetric.Metric, p point) string {
		return fmt.Sprint(rm.Resource().Attributes().AsRaw(), x.Name(), p.Attributes().AsRaw())
	}
	wants := map[string]float64{}
	eachResourcePoint(want, func(rm pmetric.ResourceMetrics, x pmetric.Metric, p point) {
		if isRate(x) {
			wants[key(rm, x, p)] = p.DoubleValue()
		}
	})
	eachResourcePoint(got, func(rm pmetric.ResourceMetrics, x pmetric.Metric, p point) {
		if !isRate(x) {
			return
		}
		w, ok := wants[key(rm, x, p)]
		if !ok {
			return // CompareMetrics names it
		}
		if math.Abs(p.DoubleValue()-w) <= rateTolerance*math.Abs(w) {
			p.SetDoubleValue(w)
		} else {
			t.Errorf("%s: rate %v (times dt/10 s), golden %v", key(rm, x, p), p.DoubleValue(), w)
		}
	})
}

const rateTolerance = 1e-3

type point = pmetric.NumberDataPoint

// eachPoint calls f with every gauge and sum point of m (all the layouts'
// golden files have).
func eachPoint(m pmetric.Metrics, f func(pmetric.Metric, point)) {
	eachResourcePoint(m, func(_ pmetric.ResourceMetrics, x pmetric.Metric, p point) { f(x, p) })
}

func eachResourcePoint(m pmetric.Metrics, f func(pmetric.ResourceMetrics, pmetric.Metric, point)) {
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		sms := rm.ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				x := ms.At(k)
				var dps pmetric.NumberDataPointSlice
				switch x.Type() {
				case pmetric.MetricTypeGauge:
					dps = x.Gauge().DataPoints()
				case pmetric.MetricTypeSum:
					dps = x.Sum().DataPoints()
				default:
					panic(fmt.Sprintf("%s: a %s metric; eachPoint knows gauges and sums", x.Name(), x.Type()))
				}
				for l := 0; l < dps.Len(); l++ {
					f(rm, x, dps.At(l))
				}
			}
		}
	}
}

func hasMetric(m pmetric.Metrics, name string) bool {
	found := false
	eachPoint(m, func(x pmetric.Metric, _ point) { found = found || x.Name() == name })
	return found
}

func repoRoot(t *testing.T) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	return abs
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

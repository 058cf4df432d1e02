// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build peerbench

// Package peer is `make bench-peer`: our collector against cAdvisor on the
// same real container cgroups, at the same interval, measured by the CPU
// time and memory of each process (docs: BENCHMARKS.md, "Against cAdvisor").
//
// For each size N it creates N real container cgroups shaped like kubepods
// (cgrouptest: /kubepods/<qos>/pod<uid>/<id>, cgroupfs driver, every v1
// hierarchy and the unified one) with one real process each (most idle, one
// in ten busy, one in ten with 60 extra threads), then runs side by side:
//
//   - cadvisor:        cAdvisor as the kubelet embeds it, nobody scrapes it
//   - cadvisor+scrape: the same, its /metrics scraped every interval
//   - ours:            the receiver alone (debug exporter, basic verbosity)
//   - ours+otlp:       receiver, memory_limiter, batch, OTLP/gRPC export to
//     a second collector (sink)
//   - ours+prom:       receiver, memory_limiter, batch, prometheus exporter
//     (resource_to_telemetry_conversion on, as deploy/config.yaml), scraped
//     every interval
//   - ours+prom-lean:  the same with the README's cheapest Prometheus setup
//     (without_scope_info, no labels a Prometheus target already has or
//     that churn), scraped every interval
//
// After a warm-up it reads utime+stime of every process from /proc/<pid>/stat
// at the start and end of the measured window, and VmRSS/VmHWM at the end.
// The scrapes send what Prometheus sends (gzip accepted), so both exporters
// pay their compression as they would on a node.
//
// Environment: BENCH_PEER_N (sizes, default "50,200,500"), BENCH_PEER_WARMUP
// (default 30s), BENCH_PEER_DURATION (measured window, default 120s),
// BENCH_PEER_INTERVAL (default 10s), OTELCOL_BIN, CADVISOR_PEER_BIN,
// BENCH_PEER_OUT (the markdown table, default build/bench-peer.md),
// BENCH_PEER_PERF (a directory: record a perf profile of every measured
// process during the window; the figures of such a run include perf's
// sampling cost), BENCH_PEER_OURS_ENV (space-separated NAME=VALUE added to
// our collectors' environment, e.g. "GOGC=50"), BENCH_PEER_BASELINE_BIN
// (another build of the collector, run collection-only beside the rest,
// without BENCH_PEER_OURS_ENV but with BENCH_PEER_BASELINE_ENV: a change, or
// a runtime setting such as GOGC, measured against a baseline in the same
// run).
package peer

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// clockTicks is USER_HZ, the unit of utime/stime in /proc/<pid>/stat (100 on
// every Linux architecture Go supports).
const clockTicks = 100

// Process names, in the order of the table.
const (
	pCadvisor       = "cadvisor"
	pCadvisorScrape = "cadvisor+scrape"
	pOurs           = "ours"
	pOursOTLP       = "ours+otlp"
	pSink           = "sink"
	pOursProm       = "ours+prom"
	pOursPromLean   = "ours+prom-lean"
	pBaseline       = "baseline"
)

type settings struct {
	sizes            []int
	warmup, duration time.Duration
	interval         time.Duration
	otelcol, cadv    string
	out, perfDir     string
	oursEnv          []string
	baseline         string
	baselineEnv      []string
}

func envDuration(t *testing.T, key string, def time.Duration) time.Duration {
	v := os.Getenv(key)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: not a positive duration", key, v)
	}
	return d
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func readSettings(t *testing.T) settings {
	s := settings{
		warmup:      envDuration(t, "BENCH_PEER_WARMUP", 30*time.Second),
		duration:    envDuration(t, "BENCH_PEER_DURATION", 120*time.Second),
		interval:    envDuration(t, "BENCH_PEER_INTERVAL", 10*time.Second),
		otelcol:     envOr("OTELCOL_BIN", "../../bin/otelcol-containerstats"),
		cadv:        envOr("CADVISOR_PEER_BIN", "../../bin/cadvisorpeer"),
		out:         envOr("BENCH_PEER_OUT", "../../build/bench-peer.md"),
		perfDir:     os.Getenv("BENCH_PEER_PERF"),
		oursEnv:     strings.Fields(os.Getenv("BENCH_PEER_OURS_ENV")),
		baseline:    os.Getenv("BENCH_PEER_BASELINE_BIN"),
		baselineEnv: strings.Fields(os.Getenv("BENCH_PEER_BASELINE_ENV")),
	}
	for _, f := range strings.Split(envOr("BENCH_PEER_N", "50,200,500"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			t.Fatalf("BENCH_PEER_N=%q: not a list of positive sizes", os.Getenv("BENCH_PEER_N"))
		}
		s.sizes = append(s.sizes, n)
	}
	bins := []*string{&s.otelcol, &s.cadv}
	if s.baseline != "" {
		bins = append(bins, &s.baseline)
	}
	for _, p := range bins {
		abs, err := filepath.Abs(*p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(abs); err != nil {
			t.Fatalf("%v (make bench-peer builds it)", err)
		}
		*p = abs
	}
	return s
}

// measured is one process's cost over the window.
type measured struct {
	ticksPerMin float64
	rssKiB      int64 // VmRSS at the end of the window
	hwmKiB      int64 // VmHWM: the peak
}

// result is one size's run.
type result struct {
	n     int
	procs map[string]measured
	// what the last scrape of each scraped endpoint returned
	pageBytes, pageGzip, series map[string]int
	ownSeries                   map[string]int // series naming one of our container IDs
	window                      time.Duration
}

func TestPeer(t *testing.T) {
	if why := cgrouptest.Available(); why != "" {
		if os.Getenv("CI") != "" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	s := readSettings(t)
	machine.Lock(t) // held across all sizes: no other test's pods in between
	var results []result
	for _, n := range s.sizes {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			results = append(results, runSize(t, s, n))
		})
	}
	table := formatTable(s, results)
	fmt.Println(table)
	if err := os.MkdirAll(filepath.Dir(s.out), 0o755); err == nil {
		if err := os.WriteFile(s.out, []byte(table), 0o644); err != nil {
			t.Errorf("write %s: %v", s.out, err)
		}
	}
}

// proc is one measured process.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
}

// start runs argv in its own process group with output to a log file; the
// cleanup ends it (SIGTERM, SIGKILL after 5 s) by its process group.
func start(t *testing.T, dir, name string, env []string, argv ...string) *proc {
	t.Helper()
	logPath := filepath.Join(dir, strings.ReplaceAll(name, "+", "-")+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		lf.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		lf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("--- %s log (tail):\n%s", name, b)
		}
	})
	return p
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

const receiverConfig = `receivers:
  container_stats:
    root_path: /
    collection_interval: %s
    node_name: peer-node
    # No runtime here: identity from the cgroup path (a warm CRI cache
    # answers from memory on a node, see identity tests).
    runtime:
      cri_enabled: false
      containerd_enabled: false
      pod_logs: false
`

const telemetry = `  telemetry:
    metrics:
      level: none
`

// deploy/config.yaml's processors.
const processors = `processors:
  memory_limiter:
    check_interval: 1s
    limit_mib: 200
    spike_limit_mib: 50
  batch:
    send_batch_max_size: 8192
`

func oursConfig(interval time.Duration) string {
	return fmt.Sprintf(receiverConfig, interval) + `exporters:
  debug:
    verbosity: basic
service:
` + telemetry + `  pipelines:
    metrics:
      receivers: [container_stats]
      exporters: [debug]
`
}

func otlpConfig(interval time.Duration, sinkPort int) string {
	return fmt.Sprintf(receiverConfig, interval) + processors + fmt.Sprintf(`exporters:
  otlp:
    endpoint: 127.0.0.1:%d
    tls:
      insecure: true
service:
`, sinkPort) + telemetry + `  pipelines:
    metrics:
      receivers: [container_stats]
      processors: [memory_limiter, batch]
      exporters: [otlp]
`
}

func sinkConfig(port int) string {
	return fmt.Sprintf(`receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
exporters:
  debug:
    verbosity: basic
service:
`, port) + telemetry + `  pipelines:
    metrics:
      receivers: [otlp]
      exporters: [debug]
`
}

// leanReceiver is the README's cheapest Prometheus setup: no labels that the
// scrape target already carries (node) or that make a new series on every
// restart (restart count), none that repeat another (the runtime's
// container name, the runtime's name, the QoS class).
const leanReceiver = `    resource_attributes:
      k8s.node.name: {enabled: false}
      k8s.container.restart_count: {enabled: false}
      container.name: {enabled: false}
      container.runtime.name: {enabled: false}
      k8s.pod.qos_class: {enabled: false}
`

func promConfig(interval time.Duration, port int, lean bool) string {
	recv, scope := fmt.Sprintf(receiverConfig, interval), ""
	if lean {
		recv += leanReceiver
		scope = "    without_scope_info: true\n"
	}
	return recv + processors + fmt.Sprintf(`exporters:
  prometheus:
    endpoint: 127.0.0.1:%d
    resource_to_telemetry_conversion:
      enabled: true
%sservice:
`, port, scope) + telemetry + `  pipelines:
    metrics:
      receivers: [container_stats]
      processors: [memory_limiter, batch]
      exporters: [prometheus]
`
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runSize(t *testing.T, s settings, n int) result {
	machine.Lock(t) // before any cleanup: released after them

	// The containers: one pod each, QoS classes alternating; one in ten
	// busy, one in ten with 60 extra threads, the rest idle.
	created := time.Now()
	ids := make([]string, 0, n)
	for i := 0; i < n; i++ {
		qos := "burstable"
		if i%2 == 1 {
			qos = "besteffort"
		}
		c := cgrouptest.NewContainer(t, qos)
		ids = append(ids, c.ID)
		switch i % 10 {
		case 0:
			c.Start(t, modeBusy)
		case 5:
			c.Start(t, modeIdle, "threads=60")
		default:
			c.Start(t, modeIdle)
		}
	}
	t.Logf("N=%d: %d containers with processes in %s", n, n, time.Since(created).Round(time.Millisecond))

	dir := t.TempDir()
	sinkPort, promPort := freePort(t), freePort(t)
	procs := map[string]*proc{}
	leanPort := freePort(t)
	procs[pCadvisor] = start(t, dir, pCadvisor, nil, s.cadv, "-hk-interval", s.interval.String(), "-addr-file", filepath.Join(dir, "cadvisor.addr"))
	procs[pCadvisorScrape] = start(t, dir, pCadvisorScrape, nil, s.cadv, "-hk-interval", s.interval.String(), "-addr-file", filepath.Join(dir, "cadvisor-scrape.addr"))
	procs[pSink] = start(t, dir, pSink, nil, s.otelcol, "--config", writeFile(t, filepath.Join(dir, "sink.yaml"), sinkConfig(sinkPort)))
	procs[pOurs] = start(t, dir, pOurs, s.oursEnv, s.otelcol, "--config", writeFile(t, filepath.Join(dir, "ours.yaml"), oursConfig(s.interval)))
	procs[pOursOTLP] = start(t, dir, pOursOTLP, s.oursEnv, s.otelcol, "--config", writeFile(t, filepath.Join(dir, "otlp.yaml"), otlpConfig(s.interval, sinkPort)))
	procs[pOursProm] = start(t, dir, pOursProm, s.oursEnv, s.otelcol, "--config", writeFile(t, filepath.Join(dir, "prom.yaml"), promConfig(s.interval, promPort, false)))
	if s.baseline != "" {
		procs[pBaseline] = start(t, dir, pBaseline, s.baselineEnv, s.baseline, "--config", filepath.Join(dir, "ours.yaml"))
	}
	procs[pOursPromLean] = start(t, dir, pOursPromLean, s.oursEnv, s.otelcol, "--config", writeFile(t, filepath.Join(dir, "prom-lean.yaml"), promConfig(s.interval, leanPort, true)))

	cadvAddr := waitFile(t, filepath.Join(dir, "cadvisor-scrape.addr"), 30*time.Second)
	targets := map[string]string{
		pCadvisorScrape: "http://" + cadvAddr + "/metrics",
		pOursProm:       fmt.Sprintf("http://127.0.0.1:%d/metrics", promPort),
		pOursPromLean:   fmt.Sprintf("http://127.0.0.1:%d/metrics", leanPort),
	}
	sc := newScraper(targets, ids)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); sc.loop(s.interval, stop) }()
	t.Cleanup(func() { close(stop); wg.Wait() })

	time.Sleep(s.warmup)
	for name, p := range procs {
		if p.cmd.ProcessState != nil {
			t.Fatalf("%s exited during warm-up", name)
		}
	}

	var perfs []*exec.Cmd
	if s.perfDir != "" {
		perfs = startPerf(t, s.perfDir, n, procs, s.duration)
	}
	t0 := time.Now()
	before := map[string]int64{}
	for name, p := range procs {
		before[name] = cpuTicks(t, p.cmd.Process.Pid)
	}
	time.Sleep(s.duration)
	window := time.Since(t0)
	res := result{n: n, procs: map[string]measured{}, window: window}
	for name, p := range procs {
		d := cpuTicks(t, p.cmd.Process.Pid) - before[name]
		rss, hwm := memory(t, p.cmd.Process.Pid)
		res.procs[name] = measured{ticksPerMin: float64(d) * float64(time.Minute) / float64(window), rssKiB: rss, hwmKiB: hwm}
	}
	for _, c := range perfs {
		_ = c.Wait()
	}
	res.pageBytes, res.pageGzip, res.series, res.ownSeries = sc.last()

	// Everybody saw every container: each scraped page names each of our
	// container IDs; the two collectors without a page logged N or more
	// resources (containers, pods, node) in their last export.
	for name := range targets {
		if got := sc.idsSeen(name); got != n {
			t.Errorf("%s: last page named %d of our %d container IDs", name, got, n)
		}
	}
	if got := lastResources(t, procs[pOurs].log); got < n {
		t.Errorf("%s: last export had %d resources, want at least %d (one per container)", pOurs, got, n)
	}
	// The OTLP path splits a scrape into several requests: the sink got
	// them all when the exporter reported no failure.
	if got := totalResources(t, procs[pSink].log); got < n {
		t.Errorf("sink: received %d resources in all, want at least %d", got, n)
	}
	if b, err := os.ReadFile(procs[pOursOTLP].log); err == nil && bytes.Contains(b, []byte("Exporting failed")) {
		t.Errorf("%s: exports failed (see its log)", pOursOTLP)
	}
	return res
}

func waitFile(t *testing.T, path string, d time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not written within %s", path, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cpuTicks is utime+stime of pid (all its threads) in clock ticks.
func cpuTicks(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name (which may hold spaces) start at state.
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): utime is field 14, stime field 15.
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	return ut + st
}

func memory(t *testing.T, pid int) (rss, hwm int64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = kib
		case "VmHWM":
			hwm = kib
		}
	}
	return rss, hwm
}

var resourcesRE = regexp.MustCompile(`"resource metrics": (\d+)`)

// lastResources is the resource count of the last export the debug exporter
// logged (verbosity basic).
func lastResources(t *testing.T, logPath string) int {
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	m := resourcesRE.FindAllSubmatch(b, -1)
	if len(m) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(string(m[len(m)-1][1]))
	return n
}

// totalResources sums the resource counts of every export the debug
// exporter logged.
func totalResources(t *testing.T, logPath string) int {
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, m := range resourcesRE.FindAllSubmatch(b, -1) {
		n, _ := strconv.Atoi(string(m[1]))
		total += n
	}
	return total
}

// startPerf records a CPU profile of each measured process for d.
func startPerf(t *testing.T, dir string, n int, procs map[string]*proc, d time.Duration) []*exec.Cmd {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var out []*exec.Cmd
	for name, p := range procs {
		file := filepath.Join(dir, fmt.Sprintf("N%d-%s.perf.data", n, strings.ReplaceAll(name, "+", "-")))
		c := exec.Command("perf", "record", "-q", "-F", "499", "-g", "-p", strconv.Itoa(p.cmd.Process.Pid), "-o", file,
			"--", "sleep", strconv.Itoa(int(d.Seconds())))
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			t.Fatalf("perf: %v", err)
		}
		out = append(out, c)
	}
	return out
}

// scraper scrapes Prometheus endpoints as Prometheus does (gzip accepted,
// the text formats it asks for), every interval, all at once.
type scraper struct {
	targets map[string]string
	ids     []string
	client  *http.Client

	mu                     sync.Mutex
	bytes, gz, series, own map[string]int
	seen                   map[string]int
}

func newScraper(targets map[string]string, ids []string) *scraper {
	return &scraper{
		targets: targets, ids: ids,
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableCompression: true}},
		bytes:  map[string]int{}, gz: map[string]int{}, series: map[string]int{}, own: map[string]int{}, seen: map[string]int{},
	}
}

// Prometheus 2.x/3.x's default scrape Accept header (text formats).
const acceptHeader = "application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"

func (s *scraper) loop(interval time.Duration, stop <-chan struct{}) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		var wg sync.WaitGroup
		for name, url := range s.targets {
			wg.Add(1)
			go func() { defer wg.Done(); s.scrape(name, url) }()
		}
		wg.Wait()
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

func (s *scraper) scrape(name, url string) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", acceptHeader)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := s.client.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return
	}
	body := raw
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return
		}
		if body, err = io.ReadAll(zr); err != nil {
			return
		}
	}
	series, own := 0, 0
	seen := map[string]bool{}
	for _, line := range bytes.Split(body, []byte("\n")) {
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		series++
		for _, id := range s.ids {
			if bytes.Contains(line, []byte(id)) {
				own++
				seen[id] = true
				break
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bytes[name], s.gz[name], s.series[name], s.own[name], s.seen[name] = len(body), len(raw), series, own, len(seen)
}

func (s *scraper) last() (bytes, gz, series, own map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cp := func(m map[string]int) map[string]int {
		out := map[string]int{}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	return cp(s.bytes), cp(s.gz), cp(s.series), cp(s.own)
}

func (s *scraper) idsSeen(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[name]
}

func formatTable(s settings, rs []result) string {
	var b strings.Builder
	host, _ := os.Hostname()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&b, "Peer benchmark: %s, %s, interval %s, window %s after %s warm-up, perf attached: %v, our env: %q, load at the end: %s\n\n",
		host, time.Now().UTC().Format("2006-01-02 15:04 MST"), s.interval, s.duration, s.warmup, s.perfDir != "", s.oursEnv,
		strings.Join(strings.Fields(string(load))[:3], " "))
	b.WriteString("| N | what runs | cAdvisor ticks/min | ours ticks/min | ours/cAdvisor | cAdvisor RSS MiB | ours RSS MiB | RSS ours/cAdvisor |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|\n")
	mib := func(k int64) float64 { return float64(k) / 1024 }
	for _, r := range rs {
		rows := []struct{ what, cadv, ours string }{
			{"collection only", pCadvisor, pOurs},
			{"+ OTLP export (ours) / + scrape (cAdvisor)", pCadvisorScrape, pOursOTLP},
			{"+ Prometheus scraped every interval", pCadvisorScrape, pOursProm},
			{"+ Prometheus, lean setup (README)", pCadvisorScrape, pOursPromLean},
		}
		for _, row := range rows {
			c, o := r.procs[row.cadv], r.procs[row.ours]
			fmt.Fprintf(&b, "| %d | %s | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f |\n", r.n, row.what,
				c.ticksPerMin, o.ticksPerMin, o.ticksPerMin/c.ticksPerMin, mib(c.rssKiB), mib(o.rssKiB), float64(o.rssKiB)/float64(c.rssKiB))
		}
	}
	if s.baseline != "" {
		fmt.Fprintf(&b, "\nThis build against the baseline (%s, env %q), both collection only, same run:\n\n", filepath.Base(s.baseline), s.baselineEnv)
		b.WriteString("| N | baseline ticks/min | this ticks/min | this/baseline | baseline RSS MiB | this RSS MiB |\n|---:|---:|---:|---:|---:|---:|\n")
		for _, r := range rs {
			bl, o := r.procs[pBaseline], r.procs[pOurs]
			fmt.Fprintf(&b, "| %d | %.1f | %.1f | %.2f | %.1f | %.1f |\n", r.n, bl.ticksPerMin, o.ticksPerMin, o.ticksPerMin/bl.ticksPerMin, mib(bl.rssKiB), mib(o.rssKiB))
		}
	}
	b.WriteString("\nPer container, and what else ran:\n\n")
	b.WriteString("| N | cAdvisor ticks/min/1000 containers | ours ticks/min/1000 containers | ours+prom ticks/min/1000 containers | OTLP sink ticks/min | peak RSS MiB cAdvisor / ours / ours+prom | /metrics cAdvisor: bytes (gzip) series | /metrics ours: bytes (gzip) series | /metrics ours lean: bytes (gzip) series |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---|---|---|---|\n")
	for _, r := range rs {
		per := func(name string) float64 { return r.procs[name].ticksPerMin * 1000 / float64(r.n) }
		fmt.Fprintf(&b, "| %d | %.1f | %.1f | %.1f | %.1f | %.1f / %.1f / %.1f | %d (%d) %d | %d (%d) %d | %d (%d) %d |\n", r.n,
			per(pCadvisor), per(pOurs), per(pOursProm), r.procs[pSink].ticksPerMin,
			mib(r.procs[pCadvisor].hwmKiB), mib(r.procs[pOurs].hwmKiB), mib(r.procs[pOursProm].hwmKiB),
			r.pageBytes[pCadvisorScrape], r.pageGzip[pCadvisorScrape], r.series[pCadvisorScrape],
			r.pageBytes[pOursProm], r.pageGzip[pOursProm], r.series[pOursProm],
			r.pageBytes[pOursPromLean], r.pageGzip[pOursPromLean], r.series[pOursPromLean])
	}
	return b.String()
}

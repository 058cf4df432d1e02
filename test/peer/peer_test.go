// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

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
//     a second collector (sink), with deploy/config.yaml's persistent
//     sending queue (file_storage in the run's temp directory)
//   - ours+prom:       receiver, memory_limiter, batch, prometheus exporter
//     (resource_constant_labels included: ["*"], as deploy/config.yaml), scraped
//     every interval
//   - ours+prom-lean:  the same with docs/names.md's cheapest Prometheus setup
//     (without_scope_info, no labels a Prometheus target already has or
//     that churn), scraped every interval
//   - ours+otlp-prom3: receiver, memory_limiter, batch, OTLP/HTTP into a
//     real Prometheus 3 (the recommended setup: deploy/prometheus-otlp/,
//     its prometheus.yml as Prometheus' config); Prometheus 3 runs beside
//     it (prometheus3), measured but not compared. Only when PROMETHEUS3_BIN
//     names a binary (make bench-peer builds one: make prometheus3).
//
// Each size runs under each condition of BENCH_PEER_CONDITIONS (default
// "quiet,loaded"; conditions_test.go): quiet, nothing but the benchmark;
// loaded, plus CPU hogs in a cgroup of their own at BENCH_PEER_LOAD_FACTOR
// busy threads per core (default 4). Before each size the benchmark waits
// (BENCH_PEER_QUIET_WAIT, default 5m) for the 1-min load average to drop
// below BENCH_PEER_QUIET_LOAD (default 1.0) or fails, naming the load; over
// the window it accounts for the machine's non-idle CPU, and a size whose
// foreign CPU (what the benchmark did not run) exceeds
// BENCH_PEER_FOREIGN_MAX cores (default 0.1) fails, its row marked. One
// table per condition, with the date and the loads seen.
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
// run), PROMETHEUS3_BIN (Prometheus 3: the ours+otlp-prom3 row; unset, no
// such row) and PROMETHEUS3_CONFIG (its prometheus.yml, default
// deploy/prometheus-otlp/prometheus.yml); the conditions' BENCH_PEER_CONDITIONS,
// BENCH_PEER_QUIET_LOAD, BENCH_PEER_QUIET_WAIT, BENCH_PEER_FOREIGN_MAX and
// BENCH_PEER_LOAD_FACTOR (above). BENCH_PEER_DENSE (set: a dense-node
// run of the shipped configs alone: ours, ours+otlp with its sink,
// ours+prom scraped; no cAdvisor, no lean or Prometheus 3 row; its own
// table: `make bench-peer BENCH_PEER_DENSE=1 BENCH_PEER_N=1000`).
package peer

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
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
	pOursProm3      = "ours+otlp-prom3"
	pProm3          = "prometheus3"
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
	prom3            string // Prometheus 3 binary; empty: no ours+otlp-prom3 row
	prom3Config      string // its prometheus.yml: deploy/prometheus-otlp/'s
	// dense (BENCH_PEER_DENSE set): only the shipped configs and the
	// collection alone (ours, ours+otlp with its sink, ours+prom scraped),
	// no cAdvisor: a dense node's figures without the peers' load.
	dense bool
	conditionSettings
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
		prom3:       os.Getenv("PROMETHEUS3_BIN"),
		prom3Config: envOr("PROMETHEUS3_CONFIG", "../../deploy/prometheus-otlp/prometheus.yml"),
		dense:       os.Getenv("BENCH_PEER_DENSE") != "",

		conditionSettings: readConditionSettings(t),
	}
	s.sizes = envSizes(t, "BENCH_PEER_N", "50,200,500")
	bins := []*string{&s.otelcol, &s.cadv}
	if s.baseline != "" {
		bins = append(bins, &s.baseline)
	}
	if s.prom3 != "" {
		bins = append(bins, &s.prom3, &s.prom3Config)
	}
	absExisting(t, "make bench-peer", bins...)
	return s
}

// envSizes is the list of container counts in the environment variable key.
func envSizes(t *testing.T, key, def string) []int {
	var sizes []int
	for _, f := range strings.Split(envOr(key, def), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			t.Fatalf("%s=%q: not a list of positive sizes", key, os.Getenv(key))
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// absExisting makes each path absolute and fails when one is missing
// (target: what builds them).
func absExisting(t *testing.T, target string, paths ...*string) {
	for _, p := range paths {
		abs, err := filepath.Abs(*p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(abs); err != nil {
			t.Fatalf("%v (%s builds it)", err, target)
		}
		*p = abs
	}
}

// measured is one process's cost over the window.
type measured struct {
	ticksPerMin float64
	rssKiB      int64 // VmRSS at the end of the window
	hwmKiB      int64 // VmHWM: the peak
	// where VmRSS is: RssAnon (the Go heap, goroutine stacks, the
	// runtime's own structures) and RssFile (pages of the binary and
	// shared libraries touched: code and read-only data)
	anonKiB, fileKiB int64
}

// result is one size's run.
type result struct {
	n      int
	window window // its conditions
	procs  map[string]measured
	// what the last scrape of each scraped endpoint returned
	pageBytes, pageGzip, series map[string]int
	ownSeries                   map[string]int // series naming one of our container IDs
	elapsed                     time.Duration  // the measured window
	// OTLP bytes per point the sink received, and per container and scrape
	otlpBytesPerPoint, otlpBytesPerContainer float64
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
	var tables []string
	for _, cond := range s.conditions {
		t.Run(cond, func(t *testing.T) {
			var results []result
			for _, n := range s.sizes {
				t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
					results = append(results, runSize(t, s, cond, n))
				})
			}
			if s.dense {
				tables = append(tables, formatDense(s, cond, results))
			} else {
				tables = append(tables, formatTable(s, cond, results))
			}
		})
	}
	table := strings.Join(tables, "\n")
	fmt.Println(table)
	if err := os.MkdirAll(filepath.Dir(s.out), 0o755); err == nil {
		if err := os.WriteFile(s.out, []byte(table), 0o600); err != nil {
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
	cmd := exec.Command(argv[0], argv[1:]...) //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
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

// shippedProcessors is the processors section of a shipped config
// (deploy/config.yaml for the push rows, deploy/prometheus-pull/config.yaml
// for the pull rows), as it is: the benchmark runs the memory limiter the
// user runs.
func shippedProcessors(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", file))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\nprocessors:\n")
	if i < 0 {
		t.Fatalf("%s: no processors section", file)
	}
	s = s[i+1:]
	// Up to the next top-level key or comment.
	end := regexp.MustCompile(`\n[a-z#]`).FindStringIndex(s[len("processors:"):])
	if end == nil {
		t.Fatalf("%s: processors section without an end", file)
	}
	return strings.TrimRight(s[:len("processors:")+end[0]], "\n") + "\n"
}

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

// exportConfig is the receiver (recv: its section), a shipped config's
// processors (procs) and one exporter with its settings (indented below it).
func exportConfig(recv, procs, exporter, exporterSettings string) string {
	return recv + procs + "exporters:\n  " + exporter + ":\n" + exporterSettings + "service:\n" + telemetry + fmt.Sprintf(`  pipelines:
    metrics:
      receivers: [container_stats]
      processors: [memory_limiter, batch]
      exporters: [%s]
`, exporter)
}

// persistentQueue is deploy/config.yaml's sending queue and retries (on
// the node's disk: file_storage in queueDir), as the push exporters of
// the shipped configs have them.
func persistentQueue(queueDir string) (exporterSettings, extensions string) {
	return `    sending_queue:
      storage: file_storage
      sizer: bytes
      queue_size: 1073741824
    retry_on_failure:
      max_elapsed_time: 30m
`, fmt.Sprintf(`extensions:
  file_storage:
    directory: %[1]s
    create_directory: true
    compaction:
      directory: %[1]s
      on_start: true
      on_rebound: true
`, queueDir)
}

// pushConfig is exportConfig with deploy/config.yaml's persistent queue.
func pushConfig(interval time.Duration, procs, exporter, settings, queueDir string) string {
	q, ext := persistentQueue(queueDir)
	cfg := exportConfig(fmt.Sprintf(receiverConfig, interval), procs, exporter, settings+q)
	return strings.Replace(cfg, "service:\n", ext+"service:\n  extensions: [file_storage]\n", 1)
}

func otlpConfig(interval time.Duration, procs string, sinkPort int, queueDir string) string {
	return pushConfig(interval, procs, "otlp_grpc", fmt.Sprintf(`    endpoint: 127.0.0.1:%d
    tls:
      insecure: true
`, sinkPort), queueDir)
}

// otlpHTTPConfig pushes into Prometheus 3's OTLP receiver as
// deploy/prometheus-otlp/config.yaml does.
func otlpHTTPConfig(interval time.Duration, procs, prom3Addr, queueDir string) string {
	return pushConfig(interval, procs, "otlp_http", fmt.Sprintf("    endpoint: http://%s/api/v1/otlp\n", prom3Addr), queueDir)
}

// sinkConfig: the OTLP sink logs each request's counts (debug) and
// writes each request as it arrived (proto, a 4-byte length before each)
// to file: the bytes of OTLP per point, which size the persistent queue.
func sinkConfig(port int, file string) string {
	return fmt.Sprintf(`receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
exporters:
  debug:
    verbosity: basic
  file:
    path: %s
    format: proto
service:
`, port, file) + telemetry + `  pipelines:
    metrics:
      receivers: [otlp]
      exporters: [debug, file]
`
}

// leanReceiver is docs/names.md's cheapest Prometheus setup: no labels that the
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

func promConfig(interval time.Duration, procs string, port int, lean bool) string {
	recv, scope := fmt.Sprintf(receiverConfig, interval), ""
	if lean {
		recv += leanReceiver
		scope = "    without_scope_info: true\n"
	}
	return exportConfig(recv, procs, "prometheus", fmt.Sprintf(`    endpoint: 127.0.0.1:%d
    resource_constant_labels:
      included: ["*"]
%s`, port, scope))
}

// prom3Containers is how many containers of the benchmark's node
// Prometheus 3 holds series of now.
func prom3Containers(t *testing.T, addr string) int {
	t.Helper()
	q := `count(count by (container_id) (container_memory_working_set_bytes{k8s_node_name="peer-node", container_id!=""}))`
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Errorf("%s: %v", pProm3, err)
		return 0
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || len(r.Data.Result) != 1 {
		t.Errorf("%s: %s: %v %+v", pProm3, q, err, r)
		return 0
	}
	v, _ := r.Data.Result[0].Value[1].(string)
	n, _ := strconv.Atoi(v)
	return n
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func runSize(t *testing.T, s settings, cond string, n int) result {
	machine.Lock(t) // before any cleanup: released after them
	// A quiet machine before this size makes anything (the previous
	// size's processes are gone by now).
	waited := waitQuiet(t, s.conditionSettings)

	// The containers: one pod each, QoS classes alternating; one in ten
	// busy, one in ten with 60 extra threads, the rest idle.
	created := time.Now()
	ids := make([]string, 0, n)
	containers := make([]*cgrouptest.Container, 0, n)
	for i := 0; i < n; i++ {
		qos := "burstable"
		if i%2 == 1 {
			qos = "besteffort"
		}
		c := cgrouptest.NewContainer(t, qos)
		ids = append(ids, c.ID)
		containers = append(containers, c)
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
	var hog *cgrouptest.Container
	hogThreads := 0
	if cond == condLoaded {
		hog, hogThreads = startHogs(t, s.conditionSettings)
		t.Logf("loaded: %d busy threads in %s", hogThreads, hog.Rel)
	}

	dir := t.TempDir()
	pushProcs, pullProcs := shippedProcessors(t, "deploy/config.yaml"), shippedProcessors(t, "deploy/prometheus-pull/config.yaml")
	sinkPort, promPort := freePort(t), freePort(t)
	procs := map[string]*proc{}
	leanPort := freePort(t)
	targets := map[string]string{pOursProm: fmt.Sprintf("http://127.0.0.1:%d/metrics", promPort)}
	if !s.dense {
		procs[pCadvisor] = start(t, dir, pCadvisor, nil, s.cadv, "-hk-interval", s.interval.String(), "-addr-file", filepath.Join(dir, "cadvisor.addr"))
		procs[pCadvisorScrape] = start(t, dir, pCadvisorScrape, nil, s.cadv, "-hk-interval", s.interval.String(), "-addr-file", filepath.Join(dir, "cadvisor-scrape.addr"))
	}
	procs[pSink] = start(t, dir, pSink, nil, s.otelcol, "--config", writeFile(t, filepath.Join(dir, "sink.yaml"), sinkConfig(sinkPort, filepath.Join(dir, "sink.otlp"))))
	procs[pOurs] = start(t, dir, pOurs, s.oursEnv, s.otelcol, "--config", writeFile(t, filepath.Join(dir, "ours.yaml"), oursConfig(s.interval)))
	procs[pOursOTLP] = start(t, dir, pOursOTLP, s.oursEnv, s.otelcol, "--config", writeFile(t, filepath.Join(dir, "otlp.yaml"), otlpConfig(s.interval, pushProcs, sinkPort, filepath.Join(dir, "queue-otlp"))))
	procs[pOursProm] = start(t, dir, pOursProm, s.oursEnv, s.otelcol, "--config", writeFile(t, filepath.Join(dir, "prom.yaml"), promConfig(s.interval, pullProcs, promPort, false)))
	var prom3Addr string
	if !s.dense {
		if s.baseline != "" {
			procs[pBaseline] = start(t, dir, pBaseline, s.baselineEnv, s.baseline, "--config", filepath.Join(dir, "ours.yaml"))
		}
		procs[pOursPromLean] = start(t, dir, pOursPromLean, s.oursEnv, s.otelcol, "--config", writeFile(t, filepath.Join(dir, "prom-lean.yaml"), promConfig(s.interval, pullProcs, leanPort, true)))
		if s.prom3 != "" {
			prom3Addr = fmt.Sprintf("127.0.0.1:%d", freePort(t))
			procs[pProm3] = start(t, dir, pProm3, nil, s.prom3, "--config.file="+s.prom3Config,
				"--storage.tsdb.path="+filepath.Join(dir, "prom3-data"), "--web.listen-address="+prom3Addr,
				"--web.enable-otlp-receiver", "--log.level=warn")
			procs[pOursProm3] = start(t, dir, pOursProm3, s.oursEnv, s.otelcol, "--config", writeFile(t, filepath.Join(dir, "otlp-prom3.yaml"), otlpHTTPConfig(s.interval, pushProcs, prom3Addr, filepath.Join(dir, "queue-prom3"))))
		}
		// cAdvisor listens once it has walked every container: at N=1000
		// on 2 cores, with everything else starting beside it, over 30 s.
		cadvAddr := waitFile(t, filepath.Join(dir, "cadvisor-scrape.addr"), 30*time.Second+time.Duration(n)*90*time.Millisecond)
		targets[pCadvisorScrape] = "http://" + cadvAddr + "/metrics"
		targets[pOursPromLean] = fmt.Sprintf("http://127.0.0.1:%d/metrics", leanPort)
	}
	sc := startScraper(t, targets, ids, s.interval)

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
	begin := &accounting{procs: procs, containers: containers, hog: hog}
	begin.read(t)
	time.Sleep(s.duration)
	end := &accounting{procs: procs, containers: containers, hog: hog}
	end.read(t)
	elapsed := end.at.Sub(begin.at)
	res := result{n: n, procs: map[string]measured{}, elapsed: elapsed}
	for name, p := range procs {
		d := end.perProc[name] - begin.perProc[name]
		m := memory(t, p.cmd.Process.Pid)
		m.ticksPerMin = float64(d) * float64(time.Minute) / float64(elapsed)
		res.procs[name] = m
	}
	var perfTicks int64
	for _, c := range perfs {
		_ = c.Wait()
		if c.ProcessState != nil {
			perfTicks += int64((c.ProcessState.UserTime() + c.ProcessState.SystemTime()) * clockTicks / time.Second)
		}
	}
	res.window = measureWindow(cond, s.conditionSettings, waited, begin, end, hogThreads, perfTicks)
	t.Logf("%s N=%d: machine %.2f cores, benchmark %.2f, foreign %.2f (at most %.2f), load %s -> %s", cond, n,
		res.window.machine, res.window.bench, res.window.foreign, s.foreignMax, res.window.loadBefore, res.window.loadAfter)
	if !res.window.quiet() {
		t.Errorf("%s N=%d: foreign CPU %.2f cores > %.2f (BENCH_PEER_FOREIGN_MAX): other work ran during the window (load %s at its end); the figures are not a %s result",
			cond, n, res.window.foreign, s.foreignMax, res.window.loadAfter, cond)
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
	// The OTLP a scrape sends, per container (its pod's and the node's
	// share included): the bytes per point the sink received times the
	// points of one scrape (ours' last export) over N. What the
	// persistent queue holds per container and scrape (docs/deploy.md,
	// "Outages and restarts").
	if fi, err := os.Stat(filepath.Join(dir, "sink.otlp")); err != nil {
		t.Errorf("sink: %v", err)
	} else if pts, scrape := totalPoints(t, procs[pSink].log), lastPoints(t, procs[pOurs].log); pts > 0 && scrape > 0 {
		res.otlpBytesPerPoint = float64(fi.Size()) / float64(pts)
		res.otlpBytesPerContainer = res.otlpBytesPerPoint * float64(scrape) / float64(n)
		t.Logf("N=%d: the sink received %d points in %d bytes of OTLP (%.1f B per point); a scrape is %d points, %.0f B per container",
			n, pts, fi.Size(), res.otlpBytesPerPoint, scrape, res.otlpBytesPerContainer)
	}
	for _, name := range []string{pOursOTLP, pOursProm3, pOursProm} {
		if p := procs[name]; p != nil {
			// A failed export that is retried is not a loss (the queue
			// keeps it, the sink's counts above show it arrived); one
			// dropped or rejected is, and so is a refusal by the memory
			// limiter.
			if b, err := os.ReadFile(p.log); err == nil {
				for _, lost := range []string{"Exporting failed. Dropping data", "Exporting failed. Rejecting data", "Refusing data", "sending queue is full"} {
					if bytes.Contains(b, []byte(lost)) {
						t.Errorf("%s: %q in its log: points lost", name, lost)
					}
				}
			}
		}
	}
	if prom3Addr != "" {
		if got := prom3Containers(t, prom3Addr); got < n {
			t.Errorf("%s: holds %d containers of node peer-node, want at least %d", pProm3, got, n)
		}
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

// memory is pid's VmRSS, VmHWM, RssAnon and RssFile (/proc/<pid>/status).
func memory(t *testing.T, pid int) measured {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	var m measured
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			m.rssKiB = kib
		case "VmHWM":
			m.hwmKiB = kib
		case "RssAnon":
			m.anonKiB = kib
		case "RssFile":
			m.fileKiB = kib
		}
	}
	return m
}

var (
	resourcesRE = regexp.MustCompile(`"resource metrics": (\d+)`)
	pointsRE    = regexp.MustCompile(`"data points": (\d+)`)
)

// totalPoints sums the data points of every export the debug exporter
// logged; lastPoints is the last export's.
func totalPoints(t *testing.T, logPath string) int {
	total := 0
	for _, v := range logCounts(t, logPath, pointsRE) {
		total += v
	}
	return total
}

func lastPoints(t *testing.T, logPath string) int {
	v := logCounts(t, logPath, pointsRE)
	if len(v) == 0 {
		return 0
	}
	return v[len(v)-1]
}

func logCounts(t *testing.T, logPath string, re *regexp.Regexp) []int {
	t.Helper()
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, m := range re.FindAllSubmatch(b, -1) {
		n, _ := strconv.Atoi(string(m[1]))
		out = append(out, n)
	}
	return out
}

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
		c := exec.Command("perf", "record", "-q", "-F", "499", "-g", "-p", strconv.Itoa(p.cmd.Process.Pid), "-o", file, //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
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

// startScraper scrapes targets every interval until the test's cleanup.
func startScraper(t *testing.T, targets map[string]string, ids []string, interval time.Duration) *scraper {
	sc := newScraper(targets, ids)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); sc.loop(interval, stop) }()
	t.Cleanup(func() { close(stop); wg.Wait() })
	return sc
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
		for name, url := range s.currentTargets() {
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

// currentTargets is a copy of the targets now.
func (s *scraper) currentTargets() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.targets))
	for k, v := range s.targets {
		out[k] = v
	}
	return out
}

// setTarget adds or replaces the target name (url empty: removes it and
// what its last page gave), from the next round on.
func (s *scraper) setTarget(name, url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if url == "" {
		delete(s.targets, name)
		for _, m := range []map[string]int{s.bytes, s.gz, s.series, s.own, s.seen} {
			delete(m, name)
		}
		return
	}
	s.targets[name] = url
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
	if _, ok := s.targets[name]; !ok {
		return // removed while this page was fetched
	}
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

// formatDense is the table of a dense run: each of our rows' CPU (ticks
// per minute and cores), RSS at the end and at its peak, where the RSS is,
// and the OTLP a scrape sends.
func formatDense(s settings, cond string, rs []result) string {
	var b strings.Builder
	host, _ := os.Hostname()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&b, "Dense node (BENCH_PEER_DENSE), condition %s: %s, %s, interval %s, window %s after %s warm-up, load at the end: %s\n\n",
		cond, host, time.Now().UTC().Format("2006-01-02 15:04 MST"), s.interval, s.duration, s.warmup,
		strings.Join(strings.Fields(string(load))[:3], " "))
	b.WriteString("| N | what runs | ticks/min | cores | RSS MiB (anon + file) | peak RSS MiB | OTLP B per container and scrape |\n|---:|---|---:|---:|---|---:|---:|\n")
	mib := func(k int64) float64 { return float64(k) / 1024 }
	for _, r := range rs {
		for _, row := range []struct{ what, name string }{
			{"collection only (debug exporter)", pOurs},
			{"deploy/config.yaml: OTLP push, persistent queue", pOursOTLP},
			{"deploy/prometheus-pull/config.yaml: scraped every interval", pOursProm},
		} {
			p := r.procs[row.name]
			otlp := "-"
			if row.name == pOursOTLP {
				otlp = fmt.Sprintf("%.0f", r.otlpBytesPerContainer)
			}
			fmt.Fprintf(&b, "| %d | %s | %.1f | %.3f | %.1f (%.1f + %.1f) | %.1f | %s |\n", r.n, row.what,
				p.ticksPerMin, p.ticksPerMin/clockTicks/60, mib(p.rssKiB), mib(p.anonKiB), mib(p.fileKiB), mib(p.hwmKiB), otlp)
		}
	}
	formatConditions(&b, rs)
	return b.String()
}

func formatTable(s settings, cond string, rs []result) string {
	var b strings.Builder
	host, _ := os.Hostname()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&b, "Peer benchmark, condition %s: %s, %s, interval %s, window %s after %s warm-up, perf attached: %v, our env: %q, load at the end: %s\n",
		cond, host, time.Now().UTC().Format("2006-01-02 15:04 MST"), s.interval, s.duration, s.warmup, s.perfDir != "", s.oursEnv,
		strings.Join(strings.Fields(string(load))[:3], " "))
	switch cond {
	case condQuiet:
		fmt.Fprintf(&b, "Quiet: 1-min load below %.2f before each size, foreign CPU at most %.2f cores in each window.\n\n", s.quietLoad, s.foreignMax)
	case condLoaded:
		fmt.Fprintf(&b, "Loaded: %d busy threads per core (%d on %d cores) in a cgroup of their own from before the warm-up; 1-min load below %.2f before each size, foreign CPU at most %.2f cores in each window.\n\n",
			s.loadFactor, s.loadFactor*runtime.NumCPU(), runtime.NumCPU(), s.quietLoad, s.foreignMax)
	}
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
		if s.prom3 != "" {
			rows = append(rows, struct{ what, cadv, ours string }{"+ OTLP into Prometheus 3 (ours; Prometheus 3 not counted) / + scrape (cAdvisor)", pCadvisorScrape, pOursProm3})
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
	b.WriteString("| N | cAdvisor ticks/min/1000 containers | ours ticks/min/1000 containers | ours+prom ticks/min/1000 containers | OTLP sink ticks/min | Prometheus 3 ticks/min (RSS MiB) | peak RSS MiB cAdvisor / ours / ours+prom | /metrics cAdvisor: bytes (gzip) series | /metrics ours: bytes (gzip) series | /metrics ours lean: bytes (gzip) series |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---|---|---|---|---|\n")
	for _, r := range rs {
		per := func(name string) float64 { return r.procs[name].ticksPerMin * 1000 / float64(r.n) }
		prom3 := "-"
		if p, ok := r.procs[pProm3]; ok {
			prom3 = fmt.Sprintf("%.1f (%.1f)", p.ticksPerMin, mib(p.rssKiB))
		}
		fmt.Fprintf(&b, "| %d | %.1f | %.1f | %.1f | %.1f | %s | %.1f / %.1f / %.1f | %d (%d) %d | %d (%d) %d | %d (%d) %d |\n", r.n,
			per(pCadvisor), per(pOurs), per(pOursProm), r.procs[pSink].ticksPerMin, prom3,
			mib(r.procs[pCadvisor].hwmKiB), mib(r.procs[pOurs].hwmKiB), mib(r.procs[pOursProm].hwmKiB),
			r.pageBytes[pCadvisorScrape], r.pageGzip[pCadvisorScrape], r.series[pCadvisorScrape],
			r.pageBytes[pOursProm], r.pageGzip[pOursProm], r.series[pOursProm],
			r.pageBytes[pOursPromLean], r.pageGzip[pOursPromLean], r.series[pOursPromLean])
	}
	b.WriteString("\nWhere the RSS is at the end of the window (MiB): anonymous (heap, stacks, runtime) + file-backed (the binary's pages touched):\n\n")
	b.WriteString("| N | cAdvisor | cAdvisor+scrape | ours | ours+otlp | ours+prom |\n|---:|---|---|---|---|---|\n")
	for _, r := range rs {
		cell := func(name string) string {
			p := r.procs[name]
			return fmt.Sprintf("%.1f = %.1f + %.1f", mib(p.rssKiB), mib(p.anonKiB), mib(p.fileKiB))
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", r.n, cell(pCadvisor), cell(pCadvisorScrape), cell(pOurs), cell(pOursOTLP), cell(pOursProm))
	}
	b.WriteString("\nOTLP per scrape (what the persistent queue holds): bytes per point the sink received, bytes per container and scrape (pods and node included):\n\n")
	b.WriteString("| N | B per point | B per container and scrape |\n|---:|---:|---:|\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "| %d | %.1f | %.0f |\n", r.n, r.otlpBytesPerPoint, r.otlpBytesPerContainer)
	}
	formatConditions(&b, rs)
	return b.String()
}

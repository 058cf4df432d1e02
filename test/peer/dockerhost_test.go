// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package peer

import (
	"context"
	"encoding/json"
	"fmt"
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

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/containerstats/containerstatsreceiver/internal/testing/dockertest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// The Docker-host benchmark's processes (BENCHMARKS.md, "On a Docker
// host"): cAdvisor standalone with its own binary's defaults, unscraped
// and scraped; ours collection-only and with the shipped host config
// (config/cadvisor-compat.yaml + config/docker-host.yaml) scraped; and the
// Engine API traffic of contrib's dockerstats receiver, replayed.
const (
	dCadvisor       = "cadvisor-standalone"
	dCadvisorScrape = "cadvisor-standalone+scrape"
	dOurs           = "ours"
	dOursHost       = "ours+docker-host"
	dDockerstats    = "dockerstats-api"
	dEngine         = "engine" // dockerd + its containerd + the shims
)

// envDockerstats, set on this test binary, makes it the dockerstats
// replay client on that Engine API socket (runDockerstatsChild).
const envDockerstats = "PEER_DOCKERSTATS_SOCKET"

// dockerSettings are TestDockerHost's knobs (tools/make/bench-docker.sh).
type dockerSettings struct {
	sizes            []int
	warmup, duration time.Duration
	idle             time.Duration // the engine alone, before any collector
	replayWarmup     time.Duration
	interval         time.Duration
	otelcol, cadv    string
	out              string
	conditionSettings
}

func readDockerSettings(t *testing.T) dockerSettings {
	s := dockerSettings{
		// cAdvisor standalone starts every container at 1 s housekeeping
		// and doubles an idle one's interval up to 60 s: after 1+2+...+32
		// s it is at its steady state. The window begins after that.
		warmup:       envDuration(t, "BENCH_DOCKER_WARMUP", 150*time.Second),
		duration:     envDuration(t, "BENCH_DOCKER_DURATION", 180*time.Second),
		idle:         envDuration(t, "BENCH_DOCKER_IDLE", 60*time.Second),
		replayWarmup: envDuration(t, "BENCH_DOCKER_REPLAY_WARMUP", 30*time.Second),
		interval:     envDuration(t, "BENCH_PEER_INTERVAL", 10*time.Second),
		otelcol:      envOr("OTELCOL_BIN", "../../bin/otelcol-containerstats"),
		cadv:         envOr("CADVISOR_PEER_BIN", "../../bin/cadvisorpeer"),
		out:          envOr("BENCH_DOCKER_OUT", "../../build/bench-docker.md"),

		conditionSettings: readConditionSettings(t),
	}
	s.sizes = envSizes(t, "BENCH_DOCKER_N", "50,200")
	absExisting(t, "make bench-docker", &s.otelcol, &s.cadv)
	return s
}

// dockerWindow is one measured window of a size: each process's ticks per
// minute (the engine's among them) and the machine's CPU beside it.
type dockerWindow struct {
	what      string
	procs     map[string]measured
	machine   float64 // non-idle cores (/proc/stat)
	bench     float64 // cores of everything counted: processes, engine, test process, containers
	foreign   float64
	load      loadAvg // at the end
	elapsed   time.Duration
	pages     map[string]int // last page's bytes per scraped process
	series    map[string]int
	statsLast int // dockerstats replay: stats decoded in its last round
}

type dockerResult struct {
	n       int
	windows []dockerWindow // the engine alone, ours, ours beside cAdvisor, ours beside dockerstats
}

// TestDockerHost measures, on N real containers of a private dockerd (one
// in ten busy), what collecting them costs: cAdvisor standalone with its
// own binary's defaults (housekeeping 1 s, dynamic up to 60 s, its default
// metric set, every cgroup: tools/cadvisorpeer -standalone), ours at the
// shipped host config's 10 s, and contrib's dockerstats receiver's Engine
// API traffic (one stats call per container per interval, two samples a
// second apart each, as its docker client asks) with the engine's own CPU
// counted on its side. Four windows per size: the engine alone (its idle
// cost), ours alone (the collection-only instance and the shipped host
// config, scraped), ours beside cAdvisor, ours beside dockerstats; the
// engine's CPU above the window of ours alone is what dockerstats' calls
// made it do, and above the engine alone what ours did (both instances'
// calls, charged to the collection-only one).
func TestDockerHost(t *testing.T) {
	if os.Geteuid() != 0 {
		machine.Need(t, "the Docker-host benchmark needs root (dockerd)")
	}
	s := readDockerSettings(t)
	machine.Lock(t)
	var rs []dockerResult
	for _, n := range s.sizes {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			rs = append(rs, runDockerSize(t, s, n))
		})
	}
	table := formatDockerTable(s, rs)
	fmt.Println(table)
	if err := os.MkdirAll(filepath.Dir(s.out), 0o755); err == nil {
		if err := os.WriteFile(s.out, []byte(table), 0o600); err != nil {
			t.Errorf("write %s: %v", s.out, err)
		}
	}
}

// dockerHostOverlay points the shipped host config at this machine: the
// host's root as it is (no /hostfs mount), the private dockerd's socket,
// loopback ports.
func dockerHostOverlay(sock string, port, health int) string {
	return fmt.Sprintf(`receivers:
  container_stats:
    root_path: /
    node_name: docker-bench
    runtime:
      docker_endpoints: [%s]
exporters:
  prometheus:
    endpoint: 127.0.0.1:%d
extensions:
  health_check:
    endpoint: 127.0.0.1:%d
service:
%s`, sock, port, health, telemetry)
}

// dockerOursConfig is the host config's receiver alone into the debug
// exporter: collection only.
func dockerOursConfig(sock string, interval time.Duration) string {
	return fmt.Sprintf(`receivers:
  container_stats:
    root_path: /
    collection_interval: %s
    standalone_containers: true
    node_name: docker-bench
    container_labels: [com.docker.compose.project, com.docker.compose.service]
    runtime:
      docker_endpoints: [%s]
      cri_enabled: false
      containerd_enabled: false
      pod_logs: false
exporters:
  debug:
    verbosity: basic
service:
%s  pipelines:
    metrics:
      receivers: [container_stats]
      exporters: [debug]
`, interval, sock, telemetry)
}

func runDockerSize(t *testing.T, s dockerSettings, n int) dockerResult {
	machine.Lock(t)
	waitQuiet(t, s.conditionSettings)
	d := dockertest.Start(t)

	// N containers, four `docker run` at a time: one in ten busy (a
	// second's sleep between reads of a 4 MiB file in /dev/shm), the rest
	// asleep; compose's two labels (five services) and one label that is
	// not on the allow-list.
	created := time.Now()
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				cmd := []string{"sleep", "1000000"}
				if i%10 == 0 {
					cmd = []string{"sh", "-c", "dd if=/dev/zero of=/dev/shm/m bs=1M count=4 2>/dev/null; while :; do cat /dev/shm/m >/dev/null; sleep 1; done"}
				}
				args := append([]string{
					"run", "-d", "--name", fmt.Sprintf("bench-%d", i), "--network", "none", "--ulimit", "nproc=1024:1024",
					"--label", "com.docker.compose.project=bench", "--label", fmt.Sprintf("com.docker.compose.service=svc%d", i%5),
					"--label", "com.example.note=not-kept", dockertest.Image,
				}, cmd...)
				out, err := d.Docker(nil, args...)
				ids[i], errs[i] = strings.TrimSpace(string(out)), err
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("container %d: %v", i, err)
		}
	}
	t.Logf("N=%d: %d docker containers running after %s", n, n, time.Since(created).Round(time.Millisecond))

	engine, err := d.EnginePIDs()
	if err != nil {
		t.Fatal(err)
	}
	if len(engine) < n+2 {
		t.Fatalf("engine: %d processes name dockerd's exec root, want dockerd, its containerd and %d shims", len(engine), n)
	}
	res := dockerResult{n: n}
	dir := t.TempDir()
	procs := map[string]*proc{}
	measure := func(what string, sc *scraper) dockerWindow {
		begin := readDockerAccounting(t, procs, engine)
		time.Sleep(map[bool]time.Duration{true: s.idle, false: s.duration}[len(procs) == 0])
		end := readDockerAccounting(t, procs, engine)
		w := dockerWindow{what: what, procs: map[string]measured{}, elapsed: end.at.Sub(begin.at), load: end.load}
		perMin := func(ticks int64) float64 { return float64(ticks) * float64(time.Minute) / float64(w.elapsed) }
		for name, p := range procs {
			if p.cmd.ProcessState != nil {
				t.Fatalf("%s exited during the window", name)
			}
			m := memory(t, p.cmd.Process.Pid)
			m.ticksPerMin = perMin(end.perProc[name] - begin.perProc[name])
			w.procs[name] = m
		}
		w.procs[dEngine] = measured{ticksPerMin: perMin(end.engine - begin.engine), rssKiB: end.engineRSS}
		secs := w.elapsed.Seconds()
		w.machine = float64(end.machine-begin.machine) / clockTicks / secs
		w.bench = (float64(end.procTicks-begin.procTicks+end.engine-begin.engine+end.self-begin.self)/clockTicks + float64(end.workloadNs-begin.workloadNs)/1e9) / secs
		w.foreign = w.machine - w.bench
		if sc != nil {
			w.pages, _, w.series, _ = sc.last()
			for name := range sc.currentTargets() {
				if got := sc.idsSeen(name); got != n {
					t.Errorf("%s: last page named %d of our %d container IDs", name, got, n)
				}
			}
		}
		t.Logf("N=%d %s: machine %.2f cores, benchmark %.2f, foreign %.2f (at most %.2f), load %s", n, what, w.machine, w.bench, w.foreign, s.foreignMax, w.load)
		if w.foreign > s.foreignMax {
			t.Errorf("N=%d %s: foreign CPU %.2f cores > %.2f (BENCH_PEER_FOREIGN_MAX): other work ran during the window", n, what, w.foreign, s.foreignMax)
		}
		return w
	}

	// 1. The engine alone: what it costs idle.
	time.Sleep(10 * time.Second)
	res.windows = append(res.windows, measure("the engine alone", nil))

	// 2. Ours alone: what our Engine API calls (one list per identity
	// refresh) make the engine do.
	sock := d.Socket
	root := filepath.Join("..", "..")
	port, health := freePort(t), freePort(t)
	procs[dOurs] = start(t, dir, dOurs, nil, s.otelcol, "--config", writeFile(t, filepath.Join(dir, "ours.yaml"), dockerOursConfig(sock, s.interval)))
	procs[dOursHost] = start(t, dir, dOursHost, nil, s.otelcol,
		"--config", filepath.Join(root, "config", "cadvisor-compat.yaml"), "--config", filepath.Join(root, "config", "docker-host.yaml"),
		"--config", writeFile(t, filepath.Join(dir, "overlay.yaml"), dockerHostOverlay(sock, port, health)))
	targets := map[string]string{dOursHost: fmt.Sprintf("http://127.0.0.1:%d/metrics", port)}
	sc := startScraper(t, targets, ids, s.interval)
	time.Sleep(s.replayWarmup)
	res.windows = append(res.windows, measure("ours", sc))
	if got := lastResources(t, procs[dOurs].log); got < n {
		t.Errorf("%s: last export had %d resources, want at least %d (one per container)", dOurs, got, n)
	}

	// 3. Ours beside cAdvisor standalone, unscraped and scraped.
	procs[dCadvisor] = start(t, dir, dCadvisor, nil, s.cadv, "-standalone", "-hk-interval", "1s", "-hk-max", "60s", "-cgroup-roots", "/",
		"-docker", "unix://"+sock, "-addr-file", filepath.Join(dir, "cadvisor.addr"))
	procs[dCadvisorScrape] = start(t, dir, dCadvisorScrape, nil, s.cadv, "-standalone", "-hk-interval", "1s", "-hk-max", "60s", "-cgroup-roots", "/",
		"-docker", "unix://"+sock, "-addr-file", filepath.Join(dir, "cadvisor-scrape.addr"))
	cadvAddr := waitFile(t, filepath.Join(dir, "cadvisor-scrape.addr"), 30*time.Second+time.Duration(n)*90*time.Millisecond)
	sc.setTarget(dCadvisorScrape, "http://"+cadvAddr+"/metrics")
	time.Sleep(s.warmup)
	res.windows = append(res.windows, measure("ours beside cAdvisor standalone", sc))
	for _, name := range []string{dCadvisor, dCadvisorScrape} {
		stopProc(t, procs[name])
		delete(procs, name)
	}
	sc.setTarget(dCadvisorScrape, "")

	// 4. Ours beside the dockerstats receiver's API traffic.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	procs[dDockerstats] = start(t, dir, dDockerstats, []string{envDockerstats + "=" + sock, "PEER_DOCKERSTATS_INTERVAL=" + s.interval.String()}, self)
	time.Sleep(s.replayWarmup)
	w := measure("ours beside dockerstats' API calls", sc)
	rounds := logCounts(t, procs[dDockerstats].log, regexp.MustCompile(`round \d+: (\d+) stats`))
	if len(rounds) == 0 || rounds[len(rounds)-1] != n {
		t.Errorf("%s: stats decoded per round %v, want %d in the last", dDockerstats, rounds, n)
	} else {
		w.statsLast = rounds[len(rounds)-1]
	}
	res.windows = append(res.windows, w)
	return res
}

// stopProc ends p (SIGTERM to its process group) and waits for it: its
// start's cleanup then finds it gone.
func stopProc(t *testing.T, p *proc) {
	t.Helper()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(p.cmd.Process.Pid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
}

// dockerAccounting is one end of a window.
type dockerAccounting struct {
	at                time.Time
	load              loadAvg
	machine, self     int64
	procTicks, engine int64
	engineRSS         int64
	workloadNs        int64
	perProc           map[string]int64
}

func readDockerAccounting(t *testing.T, procs map[string]*proc, engine []int) dockerAccounting {
	t.Helper()
	a := dockerAccounting{at: time.Now(), perProc: map[string]int64{}}
	a.machine, _ = machineTicks(t)
	a.self = cpuTicks(t, os.Getpid())
	for name, p := range procs {
		a.perProc[name] = cpuTicks(t, p.cmd.Process.Pid)
		a.procTicks += a.perProc[name]
	}
	for _, pid := range engine {
		a.engine += cpuTicks(t, pid)
		a.engineRSS += memory(t, pid).rssKiB
	}
	// The containers' CPU: the /docker cgroup holds all of them.
	for _, f := range []string{"/sys/fs/cgroup/cpuacct/docker/cpuacct.usage", "/sys/fs/cgroup/cpu,cpuacct/docker/cpuacct.usage"} {
		if b, err := os.ReadFile(f); err == nil {
			a.workloadNs, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			break
		}
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/docker/cpu.stat"); a.workloadNs == 0 && err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
				us, _ := strconv.ParseInt(v, 10, 64)
				a.workloadNs = us * 1000
			}
		}
	}
	a.load = readLoad(t)
	return a
}

// runDockerstatsChild is contrib's dockerstats receiver's Engine API
// traffic, when this binary runs as its replay (envDockerstats set): the
// running containers listed and each inspected once at the start, then
// every interval one stats call per container, all at once, without
// one-shot (the daemon samples twice, a second apart, for the previous CPU
// reading), each response decoded. The receiver itself (contrib's
// receiver/dockerstatsreceiver) cannot be built here: its
// internal/docker module is not served by the Go module proxy, at any
// version; what it does with the decoded stats (pdata) is not replayed, so
// its cost here is a lower bound.
func runDockerstatsChild() {
	sock := os.Getenv(envDockerstats)
	if sock == "" {
		return
	}
	interval, err := time.ParseDuration(os.Getenv("PEER_DOCKERSTATS_INTERVAL"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "PEER_DOCKERSTATS_INTERVAL:", err)
		os.Exit(2)
	}
	cli, err := client.New(client.WithHost("unix://" + sock))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx := context.Background()
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{Filters: make(client.Filters).Add("status", "running")})
	if err != nil {
		fmt.Fprintln(os.Stderr, "list:", err)
		os.Exit(2)
	}
	var ids []string
	for _, c := range list.Items {
		if _, err := cli.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{}); err != nil {
			fmt.Fprintln(os.Stderr, "inspect:", err)
			os.Exit(2)
		}
		ids = append(ids, c.ID)
	}
	fmt.Printf("%d running containers\n", len(ids))
	tick := time.NewTicker(interval)
	for round := 1; ; round++ {
		var ok, failed int
		var mu sync.Mutex
		var wg sync.WaitGroup
		began := time.Now()
		for _, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				var st container.StatsResponse
				res, err := cli.ContainerStats(sctx, id, client.ContainerStatsOptions{IncludePreviousSample: true})
				if err == nil {
					err = json.NewDecoder(res.Body).Decode(&st)
					res.Body.Close()
				}
				mu.Lock()
				defer mu.Unlock()
				if err != nil || st.ID == "" {
					failed++
					return
				}
				ok++
			}()
		}
		wg.Wait()
		fmt.Printf("round %d: %d stats in %s, %d failed\n", round, ok, time.Since(began).Round(time.Millisecond), failed)
		<-tick.C
	}
}

func formatDockerTable(s dockerSettings, rs []dockerResult) string {
	var b strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&b, "Docker-host benchmark: %s, %s, Docker %s, interval %s, windows %s after %s warm-up (dockerstats: %s), the engine alone %s\n\n",
		host, time.Now().UTC().Format("2006-01-02 15:04 MST"), dockerVersion(), s.interval, s.duration, s.warmup, s.replayWarmup, s.idle)
	b.WriteString("| N | what runs | ticks/min | ours ticks/min (same window) | ours/it | RSS MiB it / ours |\n|---:|---|---:|---:|---:|---|\n")
	mib := func(k int64) float64 { return float64(k) / 1024 }
	for _, r := range rs {
		if len(r.windows) < 4 {
			continue
		}
		idle, alone, cadv, ds := r.windows[0], r.windows[1], r.windows[2], r.windows[3]
		eng := func(w dockerWindow) float64 { return w.procs[dEngine].ticksPerMin }
		oursEng := eng(alone) - eng(idle) // both of ours' list calls: charged to one
		dsEng := eng(ds) - eng(alone)
		row := func(what string, it float64, itRSS int64, ours float64, oursRSS int64) {
			fmt.Fprintf(&b, "| %d | %s | %.1f | %.1f | %.2f | %.1f / %.1f |\n", r.n, what, it, ours, ours/it, mib(itRSS), mib(oursRSS))
		}
		c, o := cadv.procs[dCadvisor], cadv.procs[dOurs]
		row("collection: cAdvisor standalone (its defaults) / ours (debug exporter)", c.ticksPerMin, c.rssKiB, o.ticksPerMin, o.rssKiB)
		row("collection + the engine's extra CPU: cAdvisor standalone / ours (debug exporter)", c.ticksPerMin+max(eng(cadv)-eng(alone), 0), c.rssKiB, o.ticksPerMin+max(oursEng, 0), o.rssKiB)
		c, o = cadv.procs[dCadvisorScrape], cadv.procs[dOursHost]
		row("scraped every interval: cAdvisor standalone / ours with the shipped host config (cadvisor-compat + docker-host)", c.ticksPerMin, c.rssKiB, o.ticksPerMin, o.rssKiB)
		c, o = ds.procs[dDockerstats], ds.procs[dOurs]
		row("collection + the engine's extra CPU: dockerstats' API calls / ours (debug exporter)", c.ticksPerMin+max(dsEng, 0), c.rssKiB, o.ticksPerMin+max(oursEng, 0), o.rssKiB)
		fmt.Fprintf(&b, "| %d | the engine (dockerd, its containerd, %d shims) | alone %.1f; with ours %.1f (%+.1f, charged to ours above when positive); with ours and cAdvisor %.1f (%+.1f over ours alone); with ours and dockerstats' calls %.1f (%+.1f over ours alone) | | | engine RSS %.1f |\n",
			r.n, r.n, eng(idle), eng(alone), oursEng, eng(cadv), eng(cadv)-eng(alone), eng(ds), dsEng, mib(ds.procs[dEngine].rssKiB))
	}
	b.WriteString("\nPages scraped (bytes, series) and the windows' conditions (cores; foreign = the machine's non-idle CPU minus the processes, the engine, the test process and the containers):\n\n")
	b.WriteString("| N | window | cAdvisor page | ours page | machine | benchmark | foreign | load at the end |\n|---:|---|---|---|---:|---:|---:|---|\n")
	for _, r := range rs {
		for _, w := range r.windows {
			page := func(name string) string {
				if v, ok := w.pages[name]; ok {
					return fmt.Sprintf("%d B, %d series", v, w.series[name])
				}
				return "-"
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %.2f | %.2f | %.2f | %s |\n", r.n, w.what, page(dCadvisorScrape), page(dOursHost), w.machine, w.bench, w.foreign, w.load)
		}
	}
	return b.String()
}

// dockerVersion is the docker.io package's version (Debian's dockerd).
func dockerVersion() string {
	out, err := exec.Command("dpkg-query", "-W", "-f=${Version}", "docker.io").Output()
	if err != nil || len(out) == 0 {
		return "docker.io (version unknown)"
	}
	return "docker.io " + string(out)
}

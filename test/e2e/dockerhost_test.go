// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/dockertest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
	"github.com/containerstats/containerstatsreceiver/internal/testing/podmantest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/sidebyside"
)

// dockerHostOverlay is layered over the shipped Docker-host setup
// (config/cadvisor-compat.yaml + config/docker-host.yaml, as
// deploy/docker/compose.yaml runs them): this machine's root instead of
// /hostfs, the test dockerd's socket (%[1]s), a 1 s interval, the pull
// endpoint (%[2]s) and the health check on free loopback ports.
const dockerHostOverlay = `receivers:
  container_stats:
    root_path: /
    collection_interval: 1s
    initial_delay: 0s
    runtime:
      docker_endpoints: [%[1]s]
exporters:
  prometheus:
    endpoint: %[2]s
extensions:
  health_check:
    endpoint: 127.0.0.1:0
`

// The compared workloads (workload.Mix in the image's /bin/workload): each
// burns its CPU time, holds its anonymous memory and its active and
// inactive page cache (files /mix.* of its writable layer), creates
// /mix.ready and then sleeps, so the figures compared are settled. Two
// containers differ by 1 s of CPU time (50× the 20 ms tolerance) and
// 16 MiB or more of working set (21× hostWSTol on 2 CPUs); the smaller
// figures, 0.5 s and 12 MiB and more, are 25× and 16× the tolerances, so a
// collector recording 0 fails each row.
var (
	mixSmall = []string{"/bin/workload", "mix", "anon=8", "active=4", "inactive=8", "cpu=500", "file=/mix"}
	mixLarge = []string{"/bin/workload", "mix", "anon=24", "active=8", "inactive=8", "cpu=1500", "file=/mix"}
)

// shopMix is dockertest.ShopCompose's project with distinct workloads:
// web runs mixSmall and carries a label of its own (com.example.team),
// worker runs mixLarge.
var shopMix = fmt.Sprintf(`version: "2.4"
services:
  web:
    image: %[1]s
    command: %[2]s
    network_mode: none
    ulimits: {nproc: 1024}
    labels: {com.example.team: payments}
  worker:
    image: %[1]s
    command: %[3]s
    network_mode: none
    ulimits: {nproc: 1024}
`, dockertest.Image, flowList(mixSmall), flowList(mixLarge))

// flowList is args as a YAML flow sequence: ["a", "b"].
func flowList(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = strconv.Quote(a)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// TestDockerHost: the shipped Docker-host setup (the collector with
// config/cadvisor-compat.yaml and config/docker-host.yaml) on a real
// dockerd running a docker-compose project, scraped by a real Prometheus:
// the containers' series carry cAdvisor standalone's labels (name, image,
// container_label_com_docker_compose_project / _service, job cadvisor),
// a compose dashboard's query (CPU by service of a project) answers, and
// each service's CPU time and working set agree with cAdvisor
// standalone's and with the kernel's files of its cgroup, and with no
// other service's (sidebyside).
func TestDockerHost(t *testing.T) {
	machine.Lock(t)
	bin := collectorBin(t)
	d := dockertest.StartWith(t, dockertest.Options{ImageFiles: map[string]string{"bin/workload": workloadBin(t)}})
	cs := d.Compose(t, "shop", shopMix)
	require.Len(t, cs, 2)
	mixSettled(t, map[string]mixed{"web": {cs["web"].PID, "docker/" + cs["web"].ID}, "worker": {cs["worker"].PID, "docker/" + cs["worker"].ID}})

	pull := freeAddr(t)
	prom := startPrometheusWith(t, fmt.Sprintf(`global:
  scrape_interval: 1s
scrape_configs:
  - job_name: containerstats
    honor_labels: true
    static_configs:
      - targets: [%q]
`, pull))
	overlay := filepath.Join(t.TempDir(), "docker-host-e2e.yaml")
	require.NoError(t, os.WriteFile(overlay, []byte(fmt.Sprintf(dockerHostOverlay, d.Socket, pull)), 0o600))
	root := repoRoot(t)
	ag := start(t, "agent-docker-host", bin, []string{"HOST_NAME=docker-host-e2e"},
		"--config", filepath.Join(root, "config", "cadvisor-compat.yaml"), "--config", filepath.Join(root, "config", "docker-host.yaml"), "--config", overlay)

	t0 := time.Now()
	ws := map[string]sample{}
	eventually(t, 60*time.Second, "both services' working sets in Prometheus with cAdvisor standalone's labels", func() error {
		ag.alive(t)
		for svc, c := range cs {
			s, err := prom.query(fmt.Sprintf(`container_memory_working_set_bytes{name="shop_%s_1", container_label_com_docker_compose_project="shop", container_label_com_docker_compose_service=%q}`, svc, svc))
			if err != nil {
				return err
			}
			if len(s) != 1 {
				return fmt.Errorf("%s: %d series: %v", svc, len(s), s)
			}
			if s[0].Labels["id"] != c.ID {
				return fmt.Errorf("%s: id %q, want %s", svc, s[0].Labels["id"], c.ID)
			}
			ws[svc] = s[0]
		}
		return nil
	})
	t.Logf("both services in Prometheus %.1fs after the collector started", time.Since(t0).Seconds())
	for svc, s := range ws {
		for k, want := range map[string]string{"job": "cadvisor", "image": dockertest.Image, "node": "docker-host-e2e", "instance": "docker-host-e2e"} {
			assert.Equal(t, want, s.Labels[k], "%s: label %s: %v", svc, k, s.Labels)
		}
	}

	// A compose dashboard's panel: CPU by service of one project.
	eventually(t, 30*time.Second, "CPU rate by compose service", func() error {
		s, err := prom.query(`sum by (container_label_com_docker_compose_service) (rate(container_cpu_usage_seconds_total{container_label_com_docker_compose_project="shop"}[5s]))`)
		if err != nil {
			return err
		}
		if len(s) != 2 {
			return fmt.Errorf("%d series: %v", len(s), s)
		}
		return nil
	})

	// Standalone cAdvisor (its docker handler, its own binary's
	// housekeeping) on the same containers: CPU time and working set agree
	// with ours, on the same names, and with no other container's.
	t.Run("cadvisor standalone", func(t *testing.T) {
		names := []string{"shop_web_1", "shop_worker_1"}
		theirs := cadvisorStandalone(t, []string{"-docker", "unix://" + d.Socket}, names...)
		rows := againstCadvisor(t, theirs, names, func(name, metric string) float64 {
			us, err := prom.one(fmt.Sprintf(`%s{name=%q}`, metric, name))
			require.NoError(t, err)
			return us.Value
		})
		sidebyside.Require(t, "TestDockerHost: ours (Prometheus) against cAdvisor standalone", rows, sidebyside.Options{Apart: 4, MinRows: 4})
	})
	t.Run("kernel", func(t *testing.T) {
		rows := againstKernel(t, map[string]string{"shop_web_1": "docker/" + cs["web"].ID, "shop_worker_1": "docker/" + cs["worker"].ID},
			[]string{"shop_web_1", "shop_worker_1"}, func(name, metric string) float64 {
				us, err := prom.one(fmt.Sprintf(`%s{name=%q}`, metric, name))
				require.NoError(t, err)
				return us.Value
			})
		sidebyside.Require(t, "TestDockerHost: ours (Prometheus) against the kernel's files of the runtime's container IDs", rows, sidebyside.Options{Apart: 4, MinRows: 4})
	})

	// The shipped compose file itself, the collector in a container of
	// make image's image (loaded as docs/docker-host.md says for Podman, then
	// saved for Docker 20.10's `docker load`): the file as it is but for
	// the socket's source (the test dockerd's), the configs' absolute
	// paths and the collector service alone (the Prometheus image needs a
	// registry); the test reads the endpoint on the container's address.
	t.Run("compose file", func(t *testing.T) {
		img := os.Getenv("IMAGE_NAME")
		if img == "" {
			img = "docker.io/library/otelcol-containerstats:0.0.0-dev"
		}
		tag := img[strings.LastIndexByte(img, ':')+1:]
		pm := podmantest.New(t)
		_, err := d.Docker(nil, "load", "-i", pm.DockerArchive(t, imageArchive(t), img))
		require.NoError(t, err)
		raw, err := os.ReadFile(filepath.Join(root, "deploy", "docker", "compose.yaml"))
		require.NoError(t, err)
		text := string(raw)
		for old, repl := range map[string]string{
			"- /var/run/docker.sock:/var/run/docker.sock:ro": "- " + d.Socket + ":/var/run/docker.sock:ro",
			"- ../../config/": "- " + filepath.Join(root, "config") + "/",
		} {
			require.Contains(t, text, old)
			text = strings.ReplaceAll(text, old, repl)
		}
		t.Setenv("CONTAINERSTATS_VERSION", tag)
		t.Setenv("HOST_NAME", "compose-host")
		col := d.Compose(t, "cstest", text, "otelcol-containerstats")["otelcol-containerstats"]
		ip, err := d.Docker(nil, "inspect", "--format", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", col.ID)
		require.NoError(t, err)
		url := "http://" + strings.TrimSpace(string(ip)) + ":9464/metrics"
		want := []*regexp.Regexp{
			regexp.MustCompile(`(?m)^container_memory_working_set_bytes\{[^}]*container_label_com_docker_compose_service="web"[^}]*name="shop_web_1"[^}]*node="compose-host"`),
			regexp.MustCompile(`(?m)^container_memory_working_set_bytes\{[^}]*container_label_com_docker_compose_project="cstest"[^}]*id="` + col.ID + `"[^}]*image="otelcol-containerstats:` + regexp.QuoteMeta(tag) + `"`),
		}
		eventually(t, 60*time.Second, "the compose file's collector serves the compose labels", func() error {
			page, err := getPage(url)
			if err != nil {
				return err
			}
			for _, re := range want {
				if !re.Match(page) {
					return fmt.Errorf("%s: no line matches %s", url, re)
				}
			}
			return nil
		})
	})
}

// cadvisorStandalone runs cAdvisor as its own binary runs on a Docker or
// Podman host (tools/cadvisorpeer -standalone: the docker and podman
// handlers on the sockets flags give, its default housekeeping of 1 s,
// dynamic up to 60 s, every cgroup) and returns its /metrics once every
// container named in names has a CPU and a working-set series.
func cadvisorStandalone(t *testing.T, flags []string, names ...string) map[string][]promSample {
	t.Helper()
	bin := os.Getenv("CADVISOR_PEER_BIN")
	if bin == "" {
		bin = filepath.Join(repoRoot(t), "bin", "cadvisorpeer")
	}
	if _, err := os.Stat(bin); err != nil { //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
		need(t, "cAdvisor peer missing (make cadvisor-peer): "+err.Error())
	}
	addrFile := filepath.Join(t.TempDir(), "addr")
	cp := start(t, "cadvisor-standalone", bin, nil, append([]string{
		"-standalone",
		"-hk-interval", "1s", "-hk-max", "60s", "-cgroup-roots", "/", "-addr-file", addrFile,
	}, flags...)...)
	var theirs map[string][]promSample
	eventually(t, 60*time.Second, "cAdvisor standalone reports every container", func() error {
		cp.alive(t)
		addr, err := os.ReadFile(addrFile)
		if err != nil {
			return err
		}
		page, err := getPage("http://" + string(addr) + "/metrics")
		if err != nil {
			return err
		}
		theirs = parseExposition(t, page)
		for _, name := range names {
			for _, m := range []string{"container_cpu_usage_seconds_total", "container_memory_working_set_bytes"} {
				if _, n := sumOf(theirs, m, map[string]string{"name": name}); n == 0 {
					return fmt.Errorf("%s of %s missing", m, name)
				}
			}
		}
		return nil
	})
	return theirs
}

// againstCadvisor is the side-by-side rows (sidebyside.Require) of the
// containers named in names: each one's CPU time and working set, ours (by
// cAdvisor's names: the compat view, ours(name, metric)) against cAdvisor
// standalone's, within 20 ms (idle containers) and hostWSTol. cAdvisor's own binary collects percpu by default,
// so its CPU time is one series per core the container has run on (label
// cpu="cpu00", ...; cAdvisor leaves out a core whose count is 0, so an
// idle container may have fewer series than the machine has cores): their
// sum is the container's.
func againstCadvisor(t *testing.T, theirs map[string][]promSample, names []string, ours func(name, metric string) float64) []sidebyside.Row {
	t.Helper()
	var rows []sidebyside.Row
	for _, c := range []struct {
		metric   string
		min, max int // series cAdvisor gives: one per core used for the CPU time
		tol      float64
		unit     string
	}{
		{"container_cpu_usage_seconds_total", 1, runtime.NumCPU(), 0.02, "s"},
		{"container_memory_working_set_bytes", 1, 1, hostWSTol(), "B"},
	} {
		for _, name := range names {
			them, n := sumOf(theirs, c.metric, map[string]string{"name": name})
			require.True(t, n >= c.min && n <= c.max, "cAdvisor's %s series of %s: %d, want %d..%d", c.metric, name, n, c.min, c.max)
			rows = append(rows, sidebyside.Row{Quantity: c.metric, Entity: name, Ref: them, Ours: ours(name, c.metric), Tol: c.tol, Unit: c.unit})
		}
	}
	return rows
}

// hostWSTol is the working-set tolerance of the Docker and Podman host
// rows: 256 KiB (as the v2 guest's) plus one memcg charge batch (64 pages)
// per CPU. The kernel charges a cgroup's page counter 64 pages ahead per
// CPU and drains that stock when another cgroup charges on the CPU, so a
// settled container's usage moves by up to a batch per CPU between two
// reads (a run saw 236 KiB on 2 CPUs). The workloads are 21 MB apart and
// hold 17 MB and more, beyond 4x this on any machine of up to 64 CPUs.
func hostWSTol() float64 {
	return float64(256<<10 + 64*os.Getpagesize()*runtime.NumCPU())
}

// againstKernel is the side-by-side rows of the containers named in
// names against the kernel's files of each one's cgroup (kernelFigures),
// read by the test itself: cgroups maps a name to the cgroup's path
// relative to a hierarchy's root, made of the container ID the runtime
// returned ("docker/<id>"). Same tolerances as againstCadvisor: the
// figures are settled (mixSettled).
func againstKernel(t *testing.T, cgroups map[string]string, names []string, ours func(name, metric string) float64) []sidebyside.Row {
	t.Helper()
	const cpuMetric, wsMetric = "container_cpu_usage_seconds_total", "container_memory_working_set_bytes"
	var cpuRows, wsRows []sidebyside.Row
	for _, name := range names {
		cpu, ws, err := kernelFigures(cgroups[name])
		require.NoError(t, err, name)
		cpuRows = append(cpuRows, sidebyside.Row{Quantity: cpuMetric, Entity: name, Ref: cpu, Ours: ours(name, cpuMetric), Tol: 0.02, Unit: "s"})
		wsRows = append(wsRows, sidebyside.Row{Quantity: wsMetric, Entity: name, Ref: ws, Ours: ours(name, wsMetric), Tol: hostWSTol(), Unit: "B"})
	}
	return append(cpuRows, wsRows...)
}

// kernelFigures is the CPU time (s) and working set (bytes) of cgroup rel
// (relative to a hierarchy's root) from the kernel's files: cpuacct.usage
// (v1), cpu.stat's usage_usec (v2); memory.usage_in_bytes less
// memory.stat's total_inactive_file (v1), memory.current less
// inactive_file (v2).
func kernelFigures(rel string) (cpu, ws float64, err error) {
	var ns, usage, inactive uint64
	var errs [3]error
	if cgrouptest.V2() {
		dir := filepath.Join(cgrouptest.Base, rel)
		ns, errs[0] = statKey(filepath.Join(dir, "cpu.stat"), "usage_usec")
		ns *= 1000
		usage, errs[1] = readUint(filepath.Join(dir, "memory.current"))
		inactive, errs[2] = statKey(filepath.Join(dir, "memory.stat"), "inactive_file")
	} else {
		mem := filepath.Join(cgrouptest.Base, "memory", rel)
		ns, errs[0] = readUint(filepath.Join(cgrouptest.Base, "cpuacct", rel, "cpuacct.usage"))
		usage, errs[1] = readUint(filepath.Join(mem, "memory.usage_in_bytes"))
		inactive, errs[2] = statKey(filepath.Join(mem, "memory.stat"), "total_inactive_file")
	}
	for _, e := range errs {
		if e != nil {
			return 0, 0, e
		}
	}
	if usage > inactive {
		ws = float64(usage - inactive)
	}
	return float64(ns) / 1e9, ws, nil
}

// mixed is a container running mixSmall or mixLarge: its init process
// (the workload) and its cgroup relative to a hierarchy's root.
type mixed struct {
	pid    int
	cgroup string
}

// mixSettled waits until each workload (by container name) has created its
// ready file, looked up through /proc/<pid>/root (no exec into the
// container, whose CPU and memory it would charge): its CPU time burned,
// its memory held, idle from then on; then until the kernel's working set
// of each one's cgroup has stayed the same over three reads ¾ s apart. (A memory cgroup charges pages in batches of 64 per CPU; what a
// CPU holds charged ahead is uncharged when another cgroup charges on it,
// so a working set may move by up to 252 KiB per CPU once the workload
// idles: runs saw 236 KiB.)
func mixSettled(t *testing.T, cs map[string]mixed) {
	t.Helper()
	t0 := time.Now()
	eventually(t, 120*time.Second, "the workloads burned their CPU time and hold their memory (/mix.ready)", func() error {
		for name, c := range cs {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d/root/mix.ready", c.pid)); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		return nil
	})
	t1 := time.Now()
	last := map[string]float64{}
	same := 0
	eventually(t, 60*time.Second, "the workloads' working sets unchanged over three reads", func() error {
		moved := false
		for name, c := range cs {
			_, ws, err := kernelFigures(c.cgroup)
			if err != nil {
				return err
			}
			if prev, ok := last[name]; !ok || prev != ws {
				moved = true
			}
			last[name] = ws
		}
		if moved {
			same = 0
		} else {
			same++
		}
		if same < 2 {
			time.Sleep(500 * time.Millisecond)
			return fmt.Errorf("working sets %v", last)
		}
		return nil
	})
	t.Logf("workloads ready %.1fs after they started, working sets settled %.1fs later: %v", t1.Sub(t0).Seconds(), time.Since(t1).Seconds(), last)
}

// sumOf is the sum of metric's samples with the labels want, and how many.
func sumOf(m map[string][]promSample, metric string, want map[string]string) (float64, int) {
	var sum float64
	n := 0
	for _, s := range m[metric] {
		ok := true
		for k, v := range want {
			ok = ok && s.labels[k] == v
		}
		if ok {
			sum += s.value
			n++
		}
	}
	return sum, n
}

// TestPodmanHost: the shipped host setup on rootful Podman (Debian's 4.3,
// cgroupfs manager) through its Docker-compatible API: the container's
// series carry its name, image and allowed label, and two containers'
// CPU time and working set agree with standalone cAdvisor's podman
// handler's and with the kernel's files of their cgroups, and with no
// other container's (sidebyside).
func TestPodmanHost(t *testing.T) {
	machine.Lock(t)
	bin := collectorBin(t)
	pm := podmantest.NewWith(t, podmantest.Options{ImageFiles: map[string]string{"bin/workload": workloadBin(t)}})
	sock := pm.Service(t)
	const db, batch = "containerstats-podman-host", "containerstats-podman-batch"
	c := pm.RunLabelled(t, db, map[string]string{"com.docker.compose.project": "ledger", "com.docker.compose.service": "db"}, mixSmall...)
	cb := pm.RunLabelled(t, batch, map[string]string{"com.docker.compose.project": "ledger", "com.docker.compose.service": "batch"}, mixLarge...)
	mixSettled(t, map[string]mixed{db: {c.PID, "libpod_parent/libpod-" + c.ID}, batch: {cb.PID, "libpod_parent/libpod-" + cb.ID}})

	pull := freeAddr(t)
	overlay := filepath.Join(t.TempDir(), "podman-host-e2e.yaml")
	require.NoError(t, os.WriteFile(overlay, []byte(fmt.Sprintf(dockerHostOverlay, sock, pull)), 0o600))
	root := repoRoot(t)
	ag := start(t, "agent-podman-host", bin, []string{"HOST_NAME=podman-host-e2e"},
		"--config", filepath.Join(root, "config", "cadvisor-compat.yaml"), "--config", filepath.Join(root, "config", "docker-host.yaml"), "--config", overlay)
	theirs := cadvisorStandalone(t, []string{"-podman", "unix://" + sock, "-docker", "unix://" + filepath.Join(t.TempDir(), "none.sock")}, db, batch)

	var ours map[string][]promSample
	labels := map[string]string{
		"name": db, "id": c.ID, "image": podmantest.Image,
		"container_label_com_docker_compose_project": "ledger", "container_label_com_docker_compose_service": "db", "job": "cadvisor", "node": "podman-host-e2e",
	}
	eventually(t, 60*time.Second, "the Podman containers' series with their names", func() error {
		ag.alive(t)
		page, err := getPage("http://" + pull + "/metrics")
		if err != nil {
			return err
		}
		ours = parseExposition(t, page)
		if _, ok := find(ours, "container_memory_working_set_bytes", labels); !ok {
			return fmt.Errorf("no container_memory_working_set_bytes%v: %v", labels, ours["container_memory_working_set_bytes"])
		}
		if _, ok := find(ours, "container_memory_working_set_bytes", map[string]string{"name": batch, "id": cb.ID}); !ok {
			return fmt.Errorf("no container_memory_working_set_bytes of %s", batch)
		}
		return nil
	})
	oursOf := func(name, metric string) float64 {
		s, ok := find(ours, metric, map[string]string{"name": name})
		require.True(t, ok, "%s of %s", metric, name)
		return s.value
	}
	sidebyside.Require(t, "TestPodmanHost: ours (exporter) against cAdvisor standalone", againstCadvisor(t, theirs, []string{db, batch}, oursOf), sidebyside.Options{Apart: 4, MinRows: 4})
	sidebyside.Require(t, "TestPodmanHost: ours (exporter) against the kernel's files of the runtime's container IDs",
		againstKernel(t, map[string]string{db: "libpod_parent/libpod-" + c.ID, batch: "libpod_parent/libpod-" + cb.ID}, []string{db, batch}, oursOf),
		sidebyside.Options{Apart: 4, MinRows: 4})
}

// getPage is the body of a GET of url (an exporter's /metrics).
func getPage(url string) ([]byte, error) {
	resp, err := http.Get(url) //nolint:gosec // G107: a test: the URL of a server the test started
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

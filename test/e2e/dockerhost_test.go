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
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/dockertest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
	"github.com/containerstats/containerstatsreceiver/internal/testing/podmantest"
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

// TestDockerHost: the shipped Docker-host setup (the collector with
// config/cadvisor-compat.yaml and config/docker-host.yaml) on a real
// dockerd running a docker-compose project, scraped by a real Prometheus:
// the containers' series carry cAdvisor standalone's labels (name, image,
// container_label_com_docker_compose_project / _service, job cadvisor),
// and a compose dashboard's query (CPU by service of a project) answers.
func TestDockerHost(t *testing.T) {
	machine.Lock(t)
	bin := collectorBin(t)
	d := dockertest.Start(t)
	cs := d.Compose(t, "shop", dockertest.ShopCompose)
	require.Len(t, cs, 2)

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
	assert.GreaterOrEqual(t, ws["worker"].Value, float64(24<<20), "the worker's 24 MiB in /dev/shm")
	assert.Less(t, ws["web"].Value, float64(24<<20), "web holds no such memory")

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
	// with ours, on the same names.
	t.Run("cadvisor standalone", func(t *testing.T) {
		theirs := cadvisorStandalone(t, []string{"-docker", "unix://" + d.Socket}, "shop_web_1", "shop_worker_1")
		for svc := range cs {
			name := "shop_" + svc + "_1"
			agree(t, theirs, name, func(metric string) float64 {
				us, err := prom.one(fmt.Sprintf(`%s{name=%q}`, metric, name))
				require.NoError(t, err)
				return us.Value
			})
		}
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

// agree checks that container name's CPU time and working set, ours (by
// cAdvisor's names: the compat view) against cAdvisor standalone's, agree
// within 20 ms (idle containers) and 256 KiB (as the v2 guest's
// comparisons). cAdvisor's own binary collects percpu by default, so its
// CPU time is one series per core the container has run on (label
// cpu="cpu00", ...; cAdvisor leaves out a core whose count is 0, so an
// idle container may have fewer series than the machine has cores):
// their sum is the container's.
func agree(t *testing.T, theirs map[string][]promSample, name string, ours func(metric string) float64) {
	t.Helper()
	for _, c := range []struct {
		metric   string
		min, max int // series cAdvisor gives: one per core used for the CPU time
		tol      float64
	}{
		{"container_cpu_usage_seconds_total", 1, runtime.NumCPU(), 0.02},
		{"container_memory_working_set_bytes", 1, 1, 256 << 10},
	} {
		them, n := sumOf(theirs, c.metric, map[string]string{"name": name})
		require.True(t, n >= c.min && n <= c.max, "cAdvisor's %s series of %s: %d, want %d..%d", c.metric, name, n, c.min, c.max)
		us := ours(c.metric)
		t.Logf("%s %s: ours %v, cAdvisor standalone %v (%d series)", name, c.metric, us, them, n)
		assert.InDelta(t, them, us, c.tol, "%s %s", name, c.metric)
	}
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
// series carry its name, image and allowed label, and its CPU time and
// working set agree with standalone cAdvisor's podman handler.
func TestPodmanHost(t *testing.T) {
	machine.Lock(t)
	bin := collectorBin(t)
	pm := podmantest.New(t)
	sock := pm.Service(t)
	c := pm.RunLabelled(t, "containerstats-podman-host", map[string]string{"com.docker.compose.project": "ledger", "com.docker.compose.service": "db"},
		"sh", "-c", "dd if=/dev/zero of=/dev/shm/fill bs=1M count=20 && exec sleep 600")

	pull := freeAddr(t)
	overlay := filepath.Join(t.TempDir(), "podman-host-e2e.yaml")
	require.NoError(t, os.WriteFile(overlay, []byte(fmt.Sprintf(dockerHostOverlay, sock, pull)), 0o600))
	root := repoRoot(t)
	ag := start(t, "agent-podman-host", bin, []string{"HOST_NAME=podman-host-e2e"},
		"--config", filepath.Join(root, "config", "cadvisor-compat.yaml"), "--config", filepath.Join(root, "config", "docker-host.yaml"), "--config", overlay)
	theirs := cadvisorStandalone(t, []string{"-podman", "unix://" + sock, "-docker", "unix://" + filepath.Join(t.TempDir(), "none.sock")}, "containerstats-podman-host")

	var ours map[string][]promSample
	labels := map[string]string{
		"name": "containerstats-podman-host", "id": c.ID, "image": podmantest.Image,
		"container_label_com_docker_compose_project": "ledger", "container_label_com_docker_compose_service": "db", "job": "cadvisor", "node": "podman-host-e2e",
	}
	eventually(t, 60*time.Second, "the Podman container's series with its names", func() error {
		ag.alive(t)
		page, err := getPage("http://" + pull + "/metrics")
		if err != nil {
			return err
		}
		ours = parseExposition(t, page)
		if _, ok := find(ours, "container_memory_working_set_bytes", labels); !ok {
			return fmt.Errorf("no container_memory_working_set_bytes%v: %v", labels, ours["container_memory_working_set_bytes"])
		}
		return nil
	})
	agree(t, theirs, "containerstats-podman-host", func(metric string) float64 {
		s, ok := find(ours, metric, map[string]string{"name": "containerstats-podman-host"})
		require.True(t, ok, metric)
		return s.value
	})
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

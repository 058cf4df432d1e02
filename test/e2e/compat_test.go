// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/containerstats/containerstatsreceiver/internal/testing/containerdtest"
)

// compatRules are our recording rules and alert asking the cAdvisor view
// what the community's dashboards and mixin rules ask of /metrics/cadvisor
// (same names, selectors and kube_pod_info join; see the file's header).
const compatRules = "testdata/cadvisor-rules.yaml"

// compatOverlay is layered over config/cadvisor-compat.yaml (a second
// --config: maps merge, lists are replaced). It changes only what points
// the file at this test: the host root and runtime socket, the scrape
// interval (1 s, so that rate() has two samples within seconds), the
// exporters' endpoints, the pull endpoint's TLS (off: this test's
// Prometheus scrapes plain HTTP on loopback; the cluster test scrapes the
// shipped mutual TLS) and the pipeline's exporter list (both exporters).
// The processors, the receiver's other settings and the exporters'
// translation settings are the file's own.
const compatOverlay = receiverOverlay + `exporters:
  prometheus:
    endpoint: %[2]s
    tls:
      enabled: false
  prometheus_remote_write:
    endpoint: %[3]s
service:
  pipelines:
    metrics:
      exporters: [prometheus_remote_write, prometheus]
`

// receiverOverlay is the receiver part of a test overlay layered over a
// shipped DaemonSet config (compatOverlay, prom3Overlay): this machine's
// root and the runtime socket (%[1]s), a 1 s interval from the start; and
// the health check on a free loopback port (the file's is the pod's IP,
// MY_POD_IP, which this machine does not set: unset, it would listen on
// every address at a fixed port).
const receiverOverlay = `receivers:
  container_stats:
    root_path: /
    collection_interval: 1s
    initial_delay: 0s
    runtime:
      cri_endpoint: %[1]s
      containerd_endpoint: %[1]s
extensions:
  health_check:
    endpoint: 127.0.0.1:0
`

// kubePodInfo stands in for kube-state-metrics, which a real cluster runs
// and this machine does not: an HTTP target serving kube_pod_info for the
// test's pods on the test's node, scraped by Prometheus as job
// "kube-state-metrics" (the labels the rules' node join uses: namespace, pod,
// node; uid as kube-state-metrics has it).
func kubePodInfo(t *testing.T, node string, pods []*containerdtest.Pod) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# TYPE kube_pod_info gauge\n")
	for _, p := range pods {
		fmt.Fprintf(&b, "kube_pod_info{namespace=%q,pod=%q,uid=%q,node=%q,host_network=\"true\",created_by_kind=\"<none>\",created_by_name=\"<none>\"} 1\n",
			p.Namespace, p.Name, p.UID, node)
	}
	body := b.String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// rulesOf returns the record names and alert expressions of a rule file.
func rulesOf(t *testing.T, path string) (records []string, alerts map[string]string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	alerts = map[string]string{}
	lines := strings.Split(string(b), "\n")
	for i, line := range lines {
		l := strings.TrimSpace(line)
		if r, ok := strings.CutPrefix(l, "- record: "); ok {
			records = append(records, r)
		}
		if a, ok := strings.CutPrefix(l, "- alert: "); ok {
			// The expression: the block scalar after "expr: |".
			var expr []string
			j := i + 1
			for j < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[j]), "expr:") {
				j++
			}
			indent := -1
			for j++; j < len(lines); j++ {
				n := len(lines[j]) - len(strings.TrimLeft(lines[j], " "))
				if indent < 0 {
					indent = n
				}
				if strings.TrimSpace(lines[j]) != "" && n < indent {
					break
				}
				expr = append(expr, lines[j])
			}
			alerts[a] = strings.Join(expr, "\n")
		}
	}
	return records, alerts
}

// checkCompat runs the collector with config/cadvisor-compat.yaml against
// the CRI workloads, remote-writing to a real Prometheus that evaluates
// our cAdvisor-view recording rules (testdata/cadvisor-rules.yaml) every second (kube_pod_info from
// the stand-in above), and asserts that every rule returns exactly one
// series for every workload container, with the test's node joined in,
// and no series for anything else of the test's namespace.
func checkCompat(t *testing.T, bin string, ctrd *containerdtest.Containerd, ws []criWorkload) {
	node := fmt.Sprintf("e2e-cri-compat-%d", os.Getpid())
	rules, err := filepath.Abs(compatRules)
	require.NoError(t, err)
	records, alerts := rulesOf(t, rules)
	require.Len(t, records, 6, "recording rules in %s", compatRules)
	require.Contains(t, alerts, "ContainerCPUThrottled")

	pods := map[string]*containerdtest.Pod{}
	for _, w := range ws {
		pods[w.pod.Name] = w.pod
	}
	var podList []*containerdtest.Pod
	for _, p := range pods {
		podList = append(podList, p)
	}
	ksm := kubePodInfo(t, node, podList)
	prom := startPrometheusWith(t, fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: kube-state-metrics
    static_configs:
      - targets: [%q]
`, rules, ksm))

	pull := freeAddr(t)
	overlay := filepath.Join(t.TempDir(), "compat-e2e.yaml")
	require.NoError(t, os.WriteFile(overlay, []byte(fmt.Sprintf(compatOverlay, ctrd.Socket, pull, prom.remoteWriteURL())), 0o600))
	ag := start(t, "agent-compat", bin, []string{"K8S_NODE_NAME=" + node},
		"--config", filepath.Join(repoRoot(t), "config", "cadvisor-compat.yaml"), "--config", overlay)

	// Every rule, every workload container: exactly one series, node joined.
	const ns = "e2e-workloads"
	t0 := time.Now()
	eventually(t, 90*time.Second, "every rule returns every workload container", func() error {
		ag.alive(t)
		for _, r := range records {
			for _, w := range ws {
				s, queryErr := prom.query(fmt.Sprintf(`%s{namespace=%q, pod=%q, container=%q}`, r, w.pod.Namespace, w.pod.Name, w.cname))
				if queryErr != nil {
					return queryErr
				}
				if len(s) != 1 {
					return fmt.Errorf("%s for %s/%s: %d series: %v", r, w.pod.Name, w.cname, len(s), s)
				}
				if s[0].Labels["node"] != node {
					return fmt.Errorf("%s for %s/%s: node %q, want %q", r, w.pod.Name, w.cname, s[0].Labels["node"], node)
				}
			}
		}
		return nil
	})
	t.Logf("all %d recording rules returned all %d workload containers %.1fs after the agent started", len(records), len(ws), time.Since(t0).Seconds())
	total := 0
	for _, r := range records {
		s, queryErr := prom.query(fmt.Sprintf(`%s{namespace=%q}`, r, ns))
		require.NoError(t, queryErr)
		assert.Len(t, s, len(ws), "%s: one series per workload container and nothing else (no pod cgroup, sandbox or exited container): %v", r, s)
		total += len(s)
		for _, x := range s {
			t.Logf("%s{pod=%q, container=%q, node=%q} = %v", r, x.Labels["pod"], x.Labels["container"], x.Labels["node"], x.Value)
		}
	}
	t.Logf("%d rules x %d containers: %d series", len(records), len(ws), total)

	// Values: the busy container's CPU rate within its 0.2 CPU quota; its
	// working set the one of our own name for the same container.
	busy := ws[0]
	s, err := prom.one(fmt.Sprintf(`namespace_pod_container_node:cpu_seconds:irate{namespace=%q, pod=%q}`, ns, busy.pod.Name))
	require.NoError(t, err)
	assert.Greater(t, s.Value, 0.0, "busy CPU rate")
	assert.Less(t, s.Value, 0.3, "busy CPU rate above its 0.2 CPU quota")
	raw, err := prom.one(fmt.Sprintf(`container_cpu_usage_seconds_total{id=%q}`, busy.id))
	require.NoError(t, err)
	for k, want := range map[string]string{
		"job": "cadvisor", "metrics_path": "/metrics/cadvisor", "namespace": ns, "pod": busy.pod.Name,
		"container": busy.cname, "cpu": "total", "image": containerdtest.Image, "node": node, "instance": node,
	} {
		assert.Equal(t, want, raw.Labels[k], "container_cpu_usage_seconds_total label %s: %v", k, raw.Labels)
	}
	for k := range raw.Labels {
		assert.NotContains(t, k, "k8s_", "no label of our own names: %v", raw.Labels)
	}

	// The ContainerCPUThrottled alert expression fires for the busy
	// container (spinning under a 0.2 CPU quota: most periods throttled)
	// and for no other.
	fired, err := prom.query(alerts["ContainerCPUThrottled"])
	require.NoError(t, err)
	var mine []string
	for _, f := range fired {
		if f.Labels["namespace"] == ns {
			mine = append(mine, f.Labels["pod"]+"/"+f.Labels["container"])
		}
	}
	assert.Equal(t, []string{busy.pod.Name + "/" + busy.cname}, mine, "ContainerCPUThrottled: %v", fired)

	// The pull exporter serves the same names, job label included.
	resp, err := http.Get("http://" + pull + "/metrics")
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Contains(t, string(page), fmt.Sprintf(`container="%s"`, busy.cname))
	assert.Regexp(t, `(?m)^container_memory_working_set_bytes\{[^}]*job="cadvisor"`, string(page))
}

// TestCompatOverlayKeys: the e2e overlay changes only where the file points
// (host root, sockets, endpoints, the health check's, exporter list) and the interval, never a
// processor or a translation setting of config/cadvisor-compat.yaml, and
// every key it sets exists in the file (a renamed key would otherwise add
// a setting instead of overriding one).
func TestCompatOverlayKeys(t *testing.T) {
	overlay, err := confmap.NewRetrievedFromYAML([]byte(fmt.Sprintf(compatOverlay, "/s", "127.0.0.1:1", "http://x")))
	require.NoError(t, err)
	oc, err := overlay.AsConf()
	require.NoError(t, err)
	base, err := confmaptest.LoadConf(filepath.Join(repoRoot(t), "config", "cadvisor-compat.yaml"))
	require.NoError(t, err)
	allowed := map[string]bool{
		"receivers::container_stats::root_path":                    true,
		"receivers::container_stats::collection_interval":          true,
		"receivers::container_stats::initial_delay":                true,
		"receivers::container_stats::runtime::cri_endpoint":        true,
		"receivers::container_stats::runtime::containerd_endpoint": true,
		"exporters::prometheus::endpoint":                          true,
		"exporters::prometheus::tls::enabled":                      true,
		"exporters::prometheus_remote_write::endpoint":             true,
		"service::pipelines::metrics::exporters":                   true,
		"extensions::health_check::endpoint":                       true,
	}
	for _, k := range oc.AllKeys() {
		assert.True(t, allowed[k], "the e2e overlay sets %s", k)
		switch k {
		case "receivers::container_stats::initial_delay":
		case "exporters::prometheus::tls::enabled":
			// configoptional's switch: the file's tls section must exist.
			assert.True(t, base.IsSet("exporters::prometheus::tls::cert_file"), "config/cadvisor-compat.yaml's pull endpoint has no TLS")
		default:
			assert.True(t, base.IsSet(k), "%s is not in config/cadvisor-compat.yaml", k)
		}
	}
	assert.Len(t, oc.AllKeys(), len(allowed))
}

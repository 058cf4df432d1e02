// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package e2e

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/containerdtest"
)

// prometheus3Bin is Prometheus 3 as `make prometheus3` builds it
// (tools/prometheus3; PROMETHEUS3_BIN names it).
func prometheus3Bin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("PROMETHEUS3_BIN")
	if bin == "" {
		bin = filepath.Join(repoRoot(t), "bin", "prometheus3", "prometheus")
	}
	if _, err := os.Stat(bin); err != nil { //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
		need(t, fmt.Sprintf("Prometheus 3 binary %s missing (make prometheus3): %v", bin, err))
	}
	return bin
}

// prom3Overlay is what the test changes of the two shipped configs it
// layers (deploy/prometheus-pull/config.yaml, then
// deploy/prometheus-otlp/config.yaml): this machine's root and runtime
// socket, a 1 s interval, the health check and the pull endpoint on free
// loopback ports, and both exporters in the pipeline, the pull endpoint's
// TLS off (the
// scraping Prometheus 2 uses plain HTTP on loopback; the cluster test
// scrapes the shipped mutual TLS). The OTLP endpoint comes from the file's
// own ${env:PROMETHEUS_OTLP_ENDPOINT}. And send_timestamps: the exporter
// then serves each point with the receiver's timestamp, which the
// scraping Prometheus keeps, so both servers hold the same points at the
// same times (without it the scrape's time is the sample's, and an instant
// query of the two can be one collection apart; the shipped file leaves it
// off, so that Prometheus marks a gone container's series stale).
const prom3Overlay = receiverOverlay + `exporters:
  prometheus:
    endpoint: %[2]s
    tls:
      enabled: false
    send_timestamps: true
service:
  pipelines:
    metrics:
      exporters: [prometheus, otlp_http]
`

// Tolerances of the PromQL comparison. Both backends hold the same points
// (the receiver stamps one scrape's points with one time, the prometheus
// exporter serves those timestamps (send_timestamps) and Debian's
// Prometheus keeps them, scraping every 500 ms, twice per collection), so
// a query of gauges at a time both have reached returns the same sample in
// both. A rate may
// differ where the scraping Prometheus missed a point at its window's edge
// (a scrape late by over a second on a loaded machine): 2 % or 0.002 CPU.
const (
	prom3GaugeTolerance = 1e-9 // relative
	prom3RateTolerance  = 0.02 // relative
	prom3RateAbsolute   = 0.002
)

// checkPrometheus3 is the recommended Prometheus setup (docs/deploy.md)
// against the pull endpoint, on the CRI workloads: one agent with the two
// shipped configs layered, both exporters in one pipeline, so both paths
// carry the same scrapes. Prometheus 3 (make prometheus3) receives OTLP
// with deploy/prometheus-otlp/prometheus.yml as its config; Debian's
// Prometheus 2 scrapes the prometheus exporter every 500 ms. At a time
// both have reached, the two must hold the same metric names, the same
// label sets for the workload containers (but for the scrape's job and
// instance, which a push has no target for), and the same results for a
// set of PromQL queries within the tolerances above.
func checkPrometheus3(t *testing.T, bin string, ctrd *containerdtest.Containerd, ws []criWorkload) {
	node := fmt.Sprintf("e2e-cri-prom3-%d", os.Getpid())
	deploy := filepath.Join(repoRoot(t), "deploy")
	p3cfg, err := os.ReadFile(filepath.Join(deploy, "prometheus-otlp", "prometheus.yml"))
	require.NoError(t, err)
	p3 := launchPrometheus(t, "prometheus3", prometheus3Bin(t), freeAddr(t), string(p3cfg), "--web.enable-otlp-receiver")

	pull := freeAddr(t)
	p2 := startPrometheusWith(t, fmt.Sprintf(`global:
  scrape_interval: 500ms
  scrape_timeout: 500ms
scrape_configs:
  - job_name: otelcol
    static_configs:
      - targets: [%q]
`, pull))

	overlay := filepath.Join(t.TempDir(), "prom3-e2e.yaml")
	require.NoError(t, os.WriteFile(overlay, []byte(fmt.Sprintf(prom3Overlay, ctrd.Socket, pull)), 0o600))
	ag := start(t, "agent-prom3", bin, []string{
		"K8S_NODE_NAME=" + node,
		"PROMETHEUS_OTLP_ENDPOINT=http://" + p3.addr + "/api/v1/otlp",
	}, "--config", filepath.Join(deploy, "prometheus-pull", "config.yaml"),
		"--config", filepath.Join(deploy, "prometheus-otlp", "config.yaml"), "--config", overlay)

	backends := map[string]*prometheus{"exporter": p2, "otlp": p3}
	t0 := time.Now()
	eventually(t, 90*time.Second, "every workload with its pod name in both Prometheus servers", func() error {
		ag.alive(t)
		for name, p := range backends {
			p.proc.alive(t)
			for _, w := range ws {
				s, queryErr := p.query(fmt.Sprintf(`container_cpu_usage{container_id=%q, k8s_node_name=%q}`, w.id, node))
				if queryErr != nil {
					return fmt.Errorf("%s: %w", name, queryErr)
				}
				if len(s) == 0 || s[0].Labels["k8s_pod_name"] != w.pod.Name {
					return fmt.Errorf("%s: %s: %v", name, w.name, s)
				}
			}
		}
		return nil
	})
	t.Logf("every workload in both %.1fs after the agent started", time.Since(t0).Seconds())
	// A rate window's worth of both paths with identity resolved.
	const window = 20 * time.Second
	time.Sleep(window + 2*time.Second)

	// The evaluation time: the latest sample of the busy container's
	// working set the scraping Prometheus holds, once Prometheus 3 has
	// points at least that new.
	busy := ws[0]
	wsSel := fmt.Sprintf(`container_memory_working_set_bytes{container_id=%q, k8s_node_name=%q}`, busy.id, node)
	ts, err := p2.one("timestamp(" + wsSel + ")")
	require.NoError(t, err)
	at := time.UnixMilli(int64(math.Round(ts.Value * 1000)))
	eventually(t, 20*time.Second, "Prometheus 3 at the evaluation time", func() error {
		s, oneErr := p3.one("timestamp(" + wsSel + ")")
		if oneErr != nil {
			return oneErr
		}
		if s.Value < ts.Value {
			return fmt.Errorf("latest OTLP sample at %.3f, before %.3f", s.Value, ts.Value)
		}
		return nil
	})
	for name, p := range backends {
		s, queryAtErr := p.queryAt("timestamp("+wsSel+")", at)
		require.NoError(t, queryAtErr)
		require.Len(t, s, 1, "%s", name)
		assert.Equal(t, ts.Value, s[0].Value, "%s: the busy container's working-set sample at the evaluation time", name)
	}

	// Metric names and label sets of the workload containers' series.
	ids := make([]string, 0, len(ws))
	for _, w := range ws {
		ids = append(ids, w.id)
	}
	sel := fmt.Sprintf(`{container_id=~%q, k8s_node_name=%q}`, strings.Join(ids, "|"), node)
	series := map[string][]string{}
	for name, p := range backends {
		s, queryAtErr := p.queryAt(sel, at)
		require.NoError(t, queryAtErr)
		for _, x := range s {
			if name == "exporter" {
				assert.Equal(t, "otelcol", x.Labels["job"], "the scrape's job label")
				assert.Equal(t, pull, x.Labels["instance"], "the scrape's instance label")
				delete(x.Labels, "job")
				delete(x.Labels, "instance")
			} else {
				assert.NotContains(t, x.Labels, "job", "OTLP: no service.name, no job")
				assert.NotContains(t, x.Labels, "instance", "OTLP: no service.instance.id, no instance")
			}
			series[name] = append(series[name], labelString(x.Labels))
		}
		sort.Strings(series[name])
	}
	require.NotEmpty(t, series["exporter"])
	assert.Equal(t, series["exporter"], series["otlp"], "label sets of the workload containers' series (job and instance aside)")
	names := map[string][]string{}
	for name := range backends {
		seen := map[string]bool{}
		for _, l := range series[name] {
			seen[strings.SplitN(l, "{", 2)[0]] = true
		}
		for n := range seen {
			names[name] = append(names[name], n)
		}
		sort.Strings(names[name])
	}
	assert.Equal(t, names["exporter"], names["otlp"], "metric names")
	for want := range containerSeries {
		assert.Contains(t, names["otlp"], want, "docs/names.md name over OTLP")
	}
	t.Logf("%d series of the %d workload containers, %d metric names, the same in both: %v", len(series["otlp"]), len(ws), len(names["otlp"]), names["otlp"])

	// PromQL: the same results at the evaluation time.
	const ns = "e2e-workloads"
	queries := []struct {
		what, promql string
		rate         bool
	}{
		{"CPU rate of the busy container", fmt.Sprintf(`sum(rate(container_cpu_time_seconds_total{container_id=%q, k8s_node_name=%q}[%s]))`, busy.id, node, window), true},
		{"working set of the busy container", wsSel, false},
		{"working set of each pod, summed over its containers", fmt.Sprintf(`sum by (k8s_pod_name) (container_memory_working_set_bytes{k8s_namespace_name=%q, k8s_node_name=%q})`, ns, node), false},
		{"CPU rate of each pod, summed over its containers", fmt.Sprintf(`sum by (k8s_pod_name) (rate(container_cpu_time_seconds_total{k8s_namespace_name=%q, k8s_node_name=%q}[%s]))`, ns, node, window), true},
		{"pod cgroup working set of the busy pod", fmt.Sprintf(`k8s_pod_memory_working_set_bytes{k8s_pod_uid=%q, k8s_node_name=%q}`, busy.pod.UID, node), false},
		{"memory usage of the namespace's containers", fmt.Sprintf(`sum(container_memory_usage_bytes{k8s_namespace_name=%q, k8s_node_name=%q})`, ns, node), false},
	}
	for _, q := range queries {
		res := map[string]map[string]float64{}
		for name, p := range backends {
			s, queryAtErr := p.queryAt(q.promql, at)
			require.NoError(t, queryAtErr, "%s: %s", name, q.promql)
			res[name] = map[string]float64{}
			for _, x := range s {
				delete(x.Labels, "job")
				delete(x.Labels, "instance")
				res[name][labelString(x.Labels)] = x.Value
			}
		}
		require.NotEmpty(t, res["exporter"], "%s: no result: %s", q.what, q.promql)
		require.Equal(t, keysOf(res["exporter"]), keysOf(res["otlp"]), "%s: result series", q.what)
		for k, e := range res["exporter"] {
			o := res["otlp"][k]
			tol := prom3GaugeTolerance * math.Abs(e)
			if q.rate {
				tol = math.Max(prom3RateTolerance*math.Abs(e), prom3RateAbsolute)
			}
			assert.InDelta(t, e, o, tol, "%s %s: exporter path %v, OTLP into Prometheus 3 %v", q.what, k, e, o)
			t.Logf("%s %s: exporter path %.6g, OTLP into Prometheus 3 %.6g", q.what, k, e, o)
		}
	}
	// The busy container's rate is its 0.2 CPU quota, not a zero both agree on.
	r, err := p3.queryAt(queries[0].promql, at)
	require.NoError(t, err)
	require.Len(t, r, 1)
	assert.Greater(t, r[0].Value, 0.05, "busy CPU rate over OTLP")
	assert.Less(t, r[0].Value, 0.3, "busy CPU rate over OTLP above its 0.2 CPU quota")
}

// labelString is a series' identity: its name and its other labels, sorted.
func labelString(l map[string]string) string {
	ks := make([]string, 0, len(l))
	for k := range l {
		if k != "__name__" {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	var b strings.Builder
	b.WriteString(l["__name__"])
	b.WriteByte('{')
	for i, k := range ks {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%q", k, l[k])
	}
	b.WriteByte('}')
	return b.String()
}

func keysOf(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/kubetest"
)

// dashboardExcuses: panels of the dashboards we ship (file/panel title)
// and queries of the kubernetes-mixin-otel replacements
// (kubernetes-mixin-otel/<dashboard>/<query>) that cannot have data on this
// test node, and why. Every other panel must have data for every target;
// a panel listed here must have none (so the list stays true).
//
// blkioAccounted is the kernel's answer (cgrouptest.ProbeBlkio, at the
// start of TestClusterDaemonSet): where a container's block I/O is not
// accounted (cgroup v1 without blk-throttle active on the node's disk),
// the pod and container block I/O panels have no data; where it is, they
// must have data like every other panel.
func dashboardExcuses(blkioAccounted bool) map[string]string {
	m := map[string]string{}
	if blkioAccounted {
		return m
	}
	for _, p := range blkioPanels() {
		m[p] = blkioV1
	}
	return m
}

// blkioPanels are the panels on pod and container block I/O: ours and the
// kubernetes-mixin-otel storage panels.
func blkioPanels() []string {
	out := []string{
		"containerstats-pod.json/Disk throughput",
		"containerstats-pod.json/Disk operations",
		"containerstats-namespace.json/Disk throughput by pod",
		"containerstats-namespace.json/Disk operations by pod",
	}
	for d, queries := range map[string][]string{
		"Kubernetes / Compute Resources / Pod": {
			"iopsPodReads", "iopsPodWrites", "throughputPodRead", "throughputPodWrite",
			"iopsContainersCombined", "throughputContainersCombined", "storageReads", "storageWrites", "storageReadsPlusWrites",
			"storageReadBytes", "storageWriteBytes", "storageReadPlusWriteBytes",
		},
		"Kubernetes / Compute Resources / Namespace (Pods)": {
			"iopsReadsWrites", "throughputReadWrite", "storageReads", "storageWrites",
			"storageReadsPlusWrites", "storageReadBytes", "storageWriteBytes", "storageReadPlusWriteBytes",
		},
		"Kubernetes / Compute Resources / Cluster": {
			"iopsReadsWrites", "throughputReadWrite", "iopsReads", "iopsWrites",
			"iopsReadsWritesCombined", "throughputRead", "throughputWrite", "throughputReadWriteCombined",
		},
	} {
		for _, q := range queries {
			out = append(out, "kubernetes-mixin-otel/"+d+"/"+q)
		}
	}
	return out
}

const blkioV1 = "cgroup v1 node whose disk has no active blk-throttle (the kernel said so at the start: cgrouptest.ProbeBlkio): a container's and a pod's block I/O are not accounted (docs/blkio.md); the node's, from /proc/diskstats, has data"

// gpuMockNodes are the node names of the simulated GPU nodes whose output
// the GPU view is evaluated on (dashboards_gpu_test.go).
var gpuMockNodes = []string{"gpu-mock-a100", "gpu-mock-h100"}

// gpuMockNamespace is the namespace of the containers on the mock GPUs.
const gpuMockNamespace = "ml"

// grafanaDashboard is the part of a dashboard's JSON the test reads.
type grafanaDashboard struct {
	Title      string         `json:"title"`
	Panels     []grafanaPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type grafanaPanel struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"` // a collapsed row's
}

// evalPanel is one panel to evaluate: its key (file/title) and targets.
type evalPanel struct {
	key     string
	board   string
	targets []evalTarget
}

type evalTarget struct {
	ref, expr string
}

// loadDashboards reads dashboards/*.json: file -> dashboard.
func loadDashboards(t *testing.T) map[string]grafanaDashboard {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "dashboards", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no dashboards/*.json")
	out := map[string]grafanaDashboard{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var d grafanaDashboard
		require.NoError(t, json.Unmarshal(b, &d), f)
		out[filepath.Base(f)] = d
	}
	return out
}

// panelsOf flattens a dashboard's panels (rows' panels included, rows
// themselves left out).
func panelsOf(file string, ps []grafanaPanel) []evalPanel {
	var out []evalPanel
	for _, p := range ps {
		if p.Type == "row" {
			out = append(out, panelsOf(file, p.Panels)...)
			continue
		}
		ep := evalPanel{key: file + "/" + p.Title, board: file}
		for _, tg := range p.Targets {
			ep.targets = append(ep.targets, evalTarget{tg.RefID, tg.Expr})
		}
		out = append(out, ep)
	}
	return out
}

// mixinEntry is an entry of dashboards/mixin/kubernetes-mixin-otel.json
// (tools/dashboards/mixin.go): Expr is the mixin's own expression
// ("as-is") or ours in its place ("ours"); Compat the mixin's own where it
// selects kubeletstats' names, empty on our data as it is; Panel the
// panels that run the query, ", "-separated.
type mixinEntry struct {
	Dashboard, Panel, Query, Status, Expr, Compat string
}

func (e mixinEntry) key() string { return "kubernetes-mixin-otel/" + e.Dashboard + "/" + e.Query }

// targets is how many panel targets of the mixin run the query.
func (e mixinEntry) targets() int { return len(strings.Split(e.Panel, ", ")) }

// loadMixin reads dashboards/mixin/kubernetes-mixin-otel.json, which
// docs/dashboards.md's table is generated from.
func loadMixin(t *testing.T) []mixinEntry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "dashboards", "mixin", "kubernetes-mixin-otel.json"))
	require.NoError(t, err)
	var doc struct {
		Entries []mixinEntry `json:"entries"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	require.NotEmpty(t, doc.Entries)
	return doc.Entries
}

// mixinPanels: the expressions of the mixin table's entries that have one,
// one panel each.
func mixinPanels(t *testing.T) []evalPanel {
	t.Helper()
	var out []evalPanel
	for _, e := range loadMixin(t) {
		switch e.Status {
		case "as-is", "ours":
			require.NotEmpty(t, e.Expr, "%s/%s: status %s without an expression", e.Dashboard, e.Query, e.Status)
			out = append(out, evalPanel{
				key: e.key(), board: "kubernetes-mixin-otel (" + e.Status + ")",
				targets: []evalTarget{{"A", e.Expr}},
			})
		case "other":
			require.Empty(t, e.Expr, "%s/%s", e.Dashboard, e.Query)
			require.Empty(t, e.Compat, "%s/%s", e.Dashboard, e.Query)
		default:
			t.Errorf("%s/%s: unknown status %q", e.Dashboard, e.Query, e.Status)
		}
	}
	require.NotEmpty(t, out)
	return out
}

var varRef = regexp.MustCompile(`\$\{(\w+)(?::(\w+))?\}|\$(\w+)`)

// substitute replaces the dashboard variables of expr as Grafana would
// (${var}, ${var:pipe}, $var; multi-values as a regex alternation) and
// fails on a variable it does not know.
func substitute(t *testing.T, expr string, vars map[string]string) string {
	t.Helper()
	return varRef.ReplaceAllStringFunc(expr, func(m string) string {
		s := varRef.FindStringSubmatch(m)
		name := s[1] + s[3]
		v, ok := vars[name]
		if !ok {
			t.Errorf("expression %q: unknown variable %s", expr, m)
			return m
		}
		return v
	})
}

// panelCheck is an extra check of a panel's first target: a series of
// the entity that exercises it (label value prefix) reaches min, at the
// test's moment or, overRange, at some point of the dashboard's time
// range (max_over_time of the expression as a subquery: what the panel's
// graph shows).
type panelCheck struct {
	label, prefix string
	min           float64
	overRange     bool
}

func (c panelCheck) check(k *cluster, expr, rng string) error {
	if c.overRange {
		expr = fmt.Sprintf("max_over_time((%s)[%s:10s])", expr, rng)
	}
	rs, err := k.prom.query(expr)
	if err != nil {
		return err
	}
	var seen []string
	for _, s := range rs {
		if strings.HasPrefix(s.Labels[c.label], c.prefix) && s.Value >= c.min {
			return nil
		}
		seen = append(seen, fmt.Sprintf("%s=%g", s.Labels[c.label], s.Value))
	}
	return fmt.Errorf("no series of %s %s* reaches %g (over the range: %v): %v", c.label, c.prefix, c.min, c.overRange, seen)
}

func pod(prefix string, atLeast float64) panelCheck {
	return panelCheck{"k8s_pod_name", prefix, atLeast, false}
}

// panelChecks: what the workloads must show on the panels they exercise.
// (The client's transfer ends before the collector's first scrape of its
// pod, so its rate shows no burst: its series must be there.)
var panelChecks = map[string]panelCheck{
	// The burner's figures depend on how busy the machine is (a burner
	// that gets no CPU is not throttled either): low bars, at some point
	// of the range.
	"containerstats-pod.json/CPU usage":      {"k8s_pod_name", "cpu-burner", 0.05, true},
	"containerstats-pod.json/CPU throttling": {"k8s_pod_name", "cpu-burner", 0.02, true},
	// Throttled time varies most with the machine: a fresh-clone CI run
	// saw 0.0013 s/s at most over the range (the throttling share passed):
	// the bar asks for some throttled time, not an amount.
	"containerstats-pod.json/CPU throttled time":             {"k8s_pod_name", "cpu-burner", 1e-4, true},
	"containerstats-pod.json/Memory working set":             pod("server", 1<<20),
	"containerstats-pod.json/Network bandwidth":              pod("client", 0),
	"containerstats-pod.json/Writable layer and logs":        pod("writer", 20<<20),
	"containerstats-namespace.json/CPU usage by pod":         {"k8s_pod_name", "cpu-burner", 0.05, true},
	"containerstats-namespace.json/Network bandwidth by pod": pod("client", 0),
	// The OOM pod's kill, as the node counts it (/proc/vmstat), at some
	// point of the range.
	"containerstats-node.json/OOM kills": {"k8s_node_name", kubetest.NodeName, 0.5, true},
	// The GPU mocks (dashboards_gpu_test.go): notebook/a's and /b's own SM
	// use of the shared A100, trainer/main's 600 MiB (A100) and 4321 MiB
	// (H100), GPM activity of the H100s.
	"containerstats-gpu.json/GPU duty cycle by container": pod("notebook", 0.05),
	"containerstats-gpu.json/GPU memory by container":     pod("trainer", 600<<20),
	"containerstats-gpu.json/SM activity (GPM)":           {"k8s_node_name", "gpu-mock-h100", 0.01, false},
}

// dashboards evaluates every target of every panel of dashboards/*.json,
// and every expression of the kubernetes-mixin-otel table, against the
// cluster's Prometheus: the resource views with the variables set to the
// test's namespace, pods and node; the GPU view on the GPU mocks' output
// (pushGPUMocks). Every target must return data unless its panel is in
// dashboardExcuses, whose panels must return none.
func (k *cluster) dashboards(t *testing.T, ws []workload, started time.Time) {
	gpuNodes := k.pushGPUMocks(t)
	var pods []string
	for _, w := range ws {
		pods = append(pods, w.pod)
	}
	sort.Strings(pods)
	rng := fmt.Sprintf("%ds", int(time.Since(started).Seconds())+60)
	base := map[string]string{
		"cluster":         ".*", // no k8s_cluster_name here: All
		"namespace":       workNS,
		"pod":             strings.Join(pods, "|"),
		"node":            kubetest.NodeName,
		"__rate_interval": "1m",
		"__interval":      "10s",
		"__range":         rng,
	}
	gpu := map[string]string{}
	for name, v := range base {
		gpu[name] = v
	}
	gpu["node"] = strings.Join(gpuNodes, "|")
	gpu["namespace"] = gpuMockNamespace

	require.NotNil(t, k.blkio, "the block I/O probe did not run (TestClusterDaemonSet/blkio-accounting)")
	excuses := dashboardExcuses(k.blkio.accounted)
	t.Logf("block I/O accounted for the pods: %v (%s): %d panels excused", k.blkio.accounted, k.blkio.why, len(excuses))
	boards := loadDashboards(t)
	files := make([]string, 0, len(boards))
	for f := range boards {
		files = append(files, f)
	}
	sort.Strings(files)
	var all []evalPanel
	varsOf := map[string]map[string]string{}
	for _, f := range files {
		d := boards[f]
		vars := base
		if f == "containerstats-gpu.json" {
			vars = gpu
		}
		varsOf[f] = vars
		k.checkVariables(t, f, d, vars)
		ps := panelsOf(f, d.Panels)
		require.NotEmpty(t, ps, f)
		all = append(all, ps...)
	}
	mixin := mixinPanels(t)
	for _, p := range mixin {
		varsOf[p.board] = base
	}
	all = append(all, mixin...)

	type tally struct{ data, total int }
	counts := map[string]*tally{}
	var boardsOrder []string
	var excused []string
	seen := map[string]bool{}
	for _, p := range all {
		require.False(t, seen[p.key], "two panels %s: titles must be unique per dashboard", p.key)
		seen[p.key] = true
		require.NotEmpty(t, p.targets, "%s: no target", p.key)
		if counts[p.board] == nil {
			counts[p.board] = &tally{}
			boardsOrder = append(boardsOrder, p.board)
		}
		counts[p.board].total++
		var empty, full []string
		for _, tg := range p.targets {
			expr := substitute(t, tg.expr, varsOf[p.board])
			rs, err := k.prom.query(expr)
			if !assert.NoError(t, err, "%s target %s", p.key, tg.ref) {
				empty = append(empty, tg.ref)
				continue
			}
			if len(rs) == 0 {
				empty = append(empty, tg.ref+": "+expr)
			} else {
				full = append(full, tg.ref)
			}
		}
		why, isExcused := excuses[p.key]
		switch {
		case isExcused && len(full) > 0:
			t.Errorf("%s is excused (%s) but has data (targets %v): the excuse is wrong", p.key, why, full)
		case isExcused:
			excused = append(excused, p.key+": "+why)
		case len(empty) > 0:
			t.Errorf("%s: no data for targets %v", p.key, empty)
		default:
			counts[p.board].data++
			if c, ok := panelChecks[p.key]; ok {
				if err := c.check(k, substitute(t, p.targets[0].expr, varsOf[p.board]), rng); err != nil {
					t.Errorf("%s: %v", p.key, err)
				}
			}
		}
	}
	for _, m := range []string{"k8s_pod_memory_oom_kills_total", "container_memory_oom_kills_total"} {
		rs, err := k.prom.query(fmt.Sprintf(`max by (k8s_pod_name, k8s_container_name, k8s_container_restart_count) (max_over_time(%s{k8s_namespace_name=%q, k8s_pod_name="oom"}[%s]))`, m, workNS, rng))
		require.NoError(t, err)
		var vs []string
		for _, s := range rs {
			vs = append(vs, fmt.Sprintf("%s/%s/restart %s: %g", s.Labels["k8s_pod_name"], s.Labels["k8s_container_name"], s.Labels["k8s_container_restart_count"], s.Value))
		}
		t.Logf("the OOM pod's %s over %s, highest: %v", m, rng, vs)
	}
	for _, key := range blkioPanels() {
		assert.True(t, seen[key], "blkioPanels names %s, which no dashboard has", key)
	}
	for key := range panelChecks {
		assert.True(t, seen[key], "panelChecks names %s, which no dashboard has", key)
	}
	var b strings.Builder
	for _, f := range boardsOrder {
		fmt.Fprintf(&b, "  %s: %d panels with data / %d panels\n", f, counts[f].data, counts[f].total)
	}
	sort.Strings(excused)
	t.Logf("dashboards (variables: namespace %s, pods %s, node %s, $__rate_interval 1m, $__range %s; GPU view: nodes %s, namespace %s):\n%s%d excused:\n  %s",
		workNS, base["pod"], kubetest.NodeName, rng, gpu["node"], gpuMockNamespace, b.String(), len(excused), strings.Join(excused, "\n  "))
	k.mixinThroughKubeletstats(t, base, excuses)
}

// mixinThroughKubeletstats evaluates kubernetes-mixin-otel's own queries
// (the table's "as-is" expressions, and its network queries on
// kubeletstats' direction label, Compat) on our data as it is (k.prom)
// and on the same data passed through config/kubeletstats-compat.yaml
// (k.kubeletstatsProm, the gateway's second pipeline): through the compat
// file every one must return data, and a Compat one none on our data as it
// is (what the table says; an "as-is" one must have data there, which the
// main check requires already). A query excused in the main check (this
// node cannot have its data) must return none on either. Logs the queries
// and the panel targets that fill, each way.
func (k *cluster) mixinThroughKubeletstats(t *testing.T, vars, excuses map[string]string) {
	t.Helper()
	require.NotNil(t, k.kubeletstatsProm, "no Prometheus behind the gateway's kubeletstats-compat pipeline")
	type tally struct{ queries, targets, fullQ, fullT int }
	var asIs, compat tally // on our data as it is; through the compat file
	var compatOnly tally   // the Compat queries
	has := func(p *prometheus, expr string) bool {
		rs, err := p.query(substitute(t, expr, vars))
		require.NoError(t, err, "%s", expr)
		return len(rs) > 0
	}
	for _, e := range loadMixin(t) {
		expr := e.Compat
		if e.Status == "as-is" {
			require.Empty(t, e.Compat, "%s: as-is with a compat expression", e.key())
			expr = e.Expr
		}
		if expr == "" {
			continue
		}
		n := e.targets()
		ours, through := has(k.prom, expr), has(k.kubeletstatsProm, expr)
		asIs.queries++
		asIs.targets += n
		compat.queries++
		compat.targets += n
		if ours {
			asIs.fullQ++
			asIs.fullT += n
		}
		if through {
			compat.fullQ++
			compat.fullT += n
		}
		if e.Compat != "" {
			compatOnly.queries++
			compatOnly.targets += n
			if through {
				compatOnly.fullQ++
				compatOnly.fullT += n
			}
		}
		why, isExcused := excuses[e.key()]
		switch {
		case isExcused && (ours || through):
			t.Errorf("%s is excused (%s) but has data (as it is %v, through kubeletstats-compat %v): the excuse is wrong", e.key(), why, ours, through)
		case isExcused:
		case !through:
			t.Errorf("%s: the mixin's own query has no data through %s: %s", e.key(), kubeletstatsCompatFile, expr)
		case e.Compat != "" && ours:
			t.Errorf("%s: the mixin's own query (on kubeletstats' names) has data on ours as it is: the table says it is empty there: %s", e.key(), expr)
		}
	}
	require.Positive(t, compatOnly.queries, "no mixin query on kubeletstats' names in the table")
	t.Logf("kubernetes-mixin-otel's own queries (variables as above), with data:\n"+
		"  on our data as it is: %d / %d queries, %d / %d panel targets\n"+
		"  through %s: %d / %d queries, %d / %d panel targets\n"+
		"  of which on kubeletstats' direction label (empty as it is): %d / %d queries, %d / %d panel targets",
		asIs.fullQ, asIs.queries, asIs.fullT, asIs.targets,
		kubeletstatsCompatFile, compat.fullQ, compat.queries, compat.fullT, compat.targets,
		compatOnly.fullQ, compatOnly.queries, compatOnly.fullT, compatOnly.targets)
}

// checkVariables evaluates a dashboard's label_values variables as
// Grafana's Prometheus data source does (the series API's label values
// for the variable's selector, the variables before it substituted) and
// requires the value the test sets among them; the cluster variable,
// optional, may have none.
func (k *cluster) checkVariables(t *testing.T, file string, d grafanaDashboard, vars map[string]string) {
	t.Helper()
	lv := regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(string)
		m := lv.FindStringSubmatch(q)
		require.NotNil(t, m, "%s: variable %s: query %q is not label_values(selector, label)", file, v.Name, q)
		match := substitute(t, m[1], vars)
		u := "http://" + k.prom.addr + "/api/v1/label/" + m[2] + "/values?" + url.Values{"match[]": {match}}.Encode()
		resp, err := http.Get(u) //nolint:gosec // G107: a test: the URL of a server the test started
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		var r struct {
			Status string   `json:"status"`
			Data   []string `json:"data"`
		}
		require.NoError(t, json.Unmarshal(body, &r), "%s", body)
		require.Equal(t, "success", r.Status, "%s: variable %s: %s", file, v.Name, body)
		if v.Name == "cluster" {
			t.Logf("%s: variable cluster: %v (no k8s.cluster.name in this pipeline: All matches)", file, r.Data)
			continue
		}
		have := map[string]bool{}
		for _, val := range r.Data {
			have[val] = true
		}
		for _, want := range strings.Split(vars[v.Name], "|") {
			assert.True(t, have[want], "%s: variable %s (%s) lists %v, not the test's %s", file, v.Name, q, r.Data, want)
		}
	}
}

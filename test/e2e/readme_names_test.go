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
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/containerdtest"
)

// readmeNameExceptions: names of docs/names.md's mapping table ("ours in
// Prometheus") that may have no point on this machine or CI's, and why.
// A name here is still checked when it is served; one that is not here
// must be served. Add a row's name here only with the reason the machine
// cannot produce it (a metric that is merely off by default needs no entry:
// the test turns every metric of metadata.yaml on).
var readmeNameExceptions = map[string]string{
	"container_accelerator_duty_cycle_ratio":   "GPU: no NVIDIA GPU on CI or developer machines (go-nvml mock goldens cover it; make kube-test's GPU dashboard check finds the name in Prometheus)",
	"container_accelerator_memory_used_bytes":  "GPU: as container_accelerator_duty_cycle_ratio",
	"container_accelerator_memory_total_bytes": "GPU: as container_accelerator_duty_cycle_ratio",
	"container_disk_io_bytes_total":            "cgroup v1 block I/O: no point unless blk-throttle is active on the device (docs/blkio.md: it depends on the machine since boot); served where it is",
	"container_disk_operations_total":          "cgroup v1 block I/O: as container_disk_io_bytes_total",
	"container_disk_discard_io_bytes_total":    "cgroup v1 block I/O: as container_disk_io_bytes_total (and discards only where the kernel counts them)",
	"container_disk_discard_operations_total":  "cgroup v1 block I/O: as container_disk_discard_io_bytes_total",
	"container_pids_limit":                     "the e2e containers have no pids.max (max gives no point)",
	"container_network_io_bytes_total":         "standalone containers with their own network namespace only; the e2e runs Kubernetes pods (pod-level network). TestRealContainerNetwork covers it",
	"container_network_packet_count_total":     "as container_network_io_bytes_total",
	"container_network_errors_total":           "as container_network_io_bytes_total",
	"container_network_packet_dropped_total":   "as container_network_io_bytes_total",
	"container_memory_hugetlb_usage_bytes":     "no huge pages reserved (vm.nr_hugepages 0) and no hugetlb in kubepods' subtree_control on CI; TestRealHugetlb reserves them",
	"container_memory_hugetlb_limit_bytes":     "as container_memory_hugetlb_usage_bytes",
	"k8s_pod_memory_hugetlb_usage_bytes":       "as container_memory_hugetlb_usage_bytes",
	"k8s_pod_memory_hugetlb_limit_bytes":       "as container_memory_hugetlb_usage_bytes",
	"k8s_node_memory_hugetlb_usage_bytes":      "as container_memory_hugetlb_usage_bytes (and the node's hugetlb is in the unified tree here, whose root has no hugetlb files)",
	"k8s_pod_volume_available_bytes":           "no kubelet in the e2e: no <root>/var/lib/kubelet/pods, so no volumes (TestScrapeGoldenFilesystem's fixtures and internal/fsstats' tests cover them)",
	"k8s_pod_volume_capacity_bytes":            "as k8s_pod_volume_available_bytes",
	"k8s_pod_volume_usage_bytes":               "as k8s_pod_volume_available_bytes",
	"k8s_pod_volume_inode_count":               "as k8s_pod_volume_available_bytes",
	"k8s_pod_volume_inode_free":                "as k8s_pod_volume_available_bytes",
	"k8s_pod_volume_inode_used":                "as k8s_pod_volume_available_bytes",
	"k8s_pod_filesystem_usage_bytes":           "as k8s_pod_volume_available_bytes: without the kubelet's pod directory the pod's volumes and etc-hosts are unknown",
}

// readmeName is one name of the table's third column: a full name, or an
// abbreviation "..._suffix" of a name sharing the row's first name's stem.
type readmeName struct {
	name   string   // full name, or the suffix after "..." for an abbreviation
	abbrev bool     // "..._suffix"
	stem   string   // for an abbreviation: the row's first full name's first two tokens
	labels []string // labels written in braces
	row    string
}

var backticked = regexp.MustCompile("`([^`]+)`")

// readmeNames parses docs/names.md's "cAdvisor and kubelet names, and ours"
// table (moved there from the README): every backticked name of its third
// column.
func readmeNames(t *testing.T) []readmeName {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "names.md"))
	require.NoError(t, err)
	sec, ok := strings.CutPrefix(string(b), "# cAdvisor and kubelet names, and ours\n")
	require.True(t, ok, "docs/names.md: does not start with \"# cAdvisor and kubelet names, and ours\"")
	var out []readmeName
	header := true
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		// Split on | outside backticks (names contain "\|" in the
		// second column's attribute values).
		cols := splitRow(line)
		if len(cols) != 3 {
			continue
		}
		if header {
			require.Equal(t, "ours in Prometheus", strings.TrimSpace(cols[2]), "docs/names.md: table header")
			header = false
			continue
		}
		if strings.Trim(cols[0], " -") == "" {
			continue // the |---| line
		}
		stem := ""
		for _, m := range backticked.FindAllStringSubmatch(cols[2], -1) {
			tok := m[1]
			n := readmeName{row: strings.TrimSpace(line)}
			if i := strings.IndexByte(tok, '{'); i >= 0 {
				for _, l := range strings.Split(strings.Trim(tok[i:], "{}"), ",") {
					if l = strings.TrimSpace(l); l != "" {
						n.labels = append(n.labels, l)
					}
				}
				tok = tok[:i]
			}
			if s, ok := strings.CutPrefix(tok, "..."); ok {
				n.name, n.abbrev, n.stem = s, true, stem
			} else {
				n.name = tok
				if stem == "" {
					parts := strings.SplitN(tok, "_", 3)
					stem = strings.Join(parts[:min(2, len(parts))], "_")
				}
			}
			out = append(out, n)
		}
	}
	return out
}

func splitRow(line string) []string {
	var cols []string
	var cur strings.Builder
	inTick := false
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(strings.TrimSuffix(line, "|"), "|")
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '`':
			inTick = !inTick
			cur.WriteByte(c)
		case c == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case c == '|' && !inTick:
			cols = append(cols, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(cols, cur.String())
}

// served scrapes a prometheus exporter's page: metric name -> label names.
func served(page string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, line := range strings.Split(page, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest := line, ""
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name, rest = line[:i], line[i:]
		}
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		if strings.HasPrefix(rest, "{") {
			for _, kv := range regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="`).FindAllStringSubmatch(rest[:strings.LastIndexByte(rest, '}')+1], -1) {
				out[name][kv[1]] = true
			}
		}
	}
	return out
}

// checkReadmeNames runs the agent (config/e2e-agent.yaml) with every
// metric of metadata.yaml turned on and a prometheus exporter (the
// default translation, as docs/names.md's table assumes), scrapes it while
// the CRI workloads run, and checks each name of docs/names.md's table against
// the page: served (with the labels the table writes in braces), or listed
// in readmeNameExceptions.
func checkReadmeNames(t *testing.T, bin string, ctrd *containerdtest.Containerd, ws []criWorkload) {
	node := fmt.Sprintf("e2e-cri-names-%d", os.Getpid())
	names := readmeNames(t)
	require.Greater(t, len(names), 20, "docs/names.md: names parsed from its table")

	pull := freeAddr(t)
	var ov strings.Builder
	ov.WriteString("receivers:\n  container_stats:\n    metrics:\n")
	for _, m := range metadataDefines(t, "") {
		fmt.Fprintf(&ov, "      %s:\n        enabled: true\n", m)
	}
	fmt.Fprintf(&ov, `exporters:
  prometheus:
    endpoint: %s
    resource_constant_labels:
      included: ["*"]
service:
  pipelines:
    metrics:
      exporters: [prometheus]
`, pull)
	overlay := filepath.Join(t.TempDir(), "names.yaml")
	require.NoError(t, os.WriteFile(overlay, []byte(ov.String()), 0o600))
	ag := start(t, "agent-names", bin, []string{
		"E2E_ROOT_PATH=/", "E2E_NODE_NAME=" + node, "E2E_CRI_ENDPOINT=" + ctrd.Socket,
		// Not in this pipeline; set so that the file resolves.
		"E2E_OTLP_ENDPOINT=127.0.0.1:1", "E2E_REMOTE_WRITE_URL=http://127.0.0.1:1/api/v1/write",
	}, "--config", filepath.Join(repoRoot(t), "config", "e2e-agent.yaml"), "--config", overlay)

	var page map[string]map[string]bool
	eventually(t, 60*time.Second, "every workload's container_cpu_usage on the agent's page", func() error {
		ag.alive(t)
		resp, err := http.Get("http://" + pull + "/metrics")
		if err != nil {
			return err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		for _, w := range ws {
			if !strings.Contains(string(b), fmt.Sprintf("container_cpu_usage{container_id=%q", w.id)) &&
				!regexp.MustCompile(`(?m)^container_cpu_usage\{[^}]*container_id="`+w.id+`"`).Match(b) {
				return fmt.Errorf("%s: no container_cpu_usage yet", w.name)
			}
		}
		page = served(string(b))
		return nil
	})

	var ok, excused []string
	for _, n := range names {
		var hit string
		if n.abbrev {
			for s := range page {
				if strings.HasPrefix(s, n.stem+"_") && strings.HasSuffix(s, n.name) {
					hit = s
				}
			}
		} else if page[n.name] != nil {
			hit = n.name
		}
		if hit == "" {
			if why, found := readmeNameExceptions[n.name]; found {
				excused = append(excused, n.name+" ("+why+")")
				continue
			}
			assert.Fail(t, "docs/names.md: name not served",
				"%q (row %s) is not on the prometheus exporter's page; fix docs/names.md, or add it to readmeNameExceptions in test/e2e/readme_names_test.go with the reason this machine cannot produce it", n.name, n.row)
			continue
		}
		for _, l := range n.labels {
			assert.True(t, page[hit][l], "docs/names.md: says %s{%s}; served labels: %v", hit, l, keys(page[hit]))
		}
		ok = append(ok, hit)
	}
	sort.Strings(ok)
	t.Logf("docs/names.md: %d names served: %v", len(ok), ok)
	t.Logf("%d excused: %v", len(excused), excused)
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestReadmeNamesParse: the table parser (no machine needed): full names,
// labels in braces and abbreviations with the row's stem.
func TestReadmeNamesParse(t *testing.T) {
	names := readmeNames(t)
	byName := map[string]readmeName{}
	for _, n := range names {
		byName[n.name] = n
	}
	require.Contains(t, byName, "container_cpu_time_seconds_total")
	assert.Equal(t, []string{"cpu_mode"}, byName["container_cpu_time_seconds_total"].labels)
	require.Contains(t, byName, "_throttled_periods_total")
	assert.True(t, byName["_throttled_periods_total"].abbrev)
	assert.Equal(t, "container_cpu", byName["_throttled_periods_total"].stem)
	for _, n := range names {
		assert.NotContains(t, n.name, "`", n.row)
		assert.NotEmpty(t, n.name, n.row)
	}
	t.Logf("%d names", len(names))
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"strings"
)

// mixinEntry is one query of a panel of grafana/kubernetes-mixin-otel's
// resource dashboards (dashboards/resources/queries/<dashboard>.libsonnet
// at 1d3316e, the kubernetes-mixin templates it imports) and what
// our data does for it.
type mixinEntry struct {
	Dashboard string `json:"dashboard"` // the mixin dashboard's title
	// Panel: the titles of the panels that run the query (a table's: its
	// column's query), ", "-separated; "A / B" is one panel, the one of the
	// pair the query's direction is in. For the queries with an expression
	// the list is complete (kubernetes-mixin's templates at 23032b7): the
	// cluster test counts a query's panel targets by it.
	Panel string `json:"panel"`
	Query string `json:"query"` // the query's name in the mixin's queries/<dashboard>.libsonnet
	// Status: "as-is": the mixin's own expression (Expr, written out) has
	// data from our receiver alone; "ours": the mixin has 0 there, or an
	// expression our data does not fill (Mixin says why), and Expr is the
	// PromQL on our names to put in its place; "other": the data is not
	// ours to give (requests, quotas, allocatable: k8sclusterreceiver or
	// kube-state-metrics), no Expr.
	Status string `json:"status"`
	Mixin  string `json:"mixin"`          // what the mixin has there
	Expr   string `json:"expr,omitempty"` // evaluated by test/e2e/cluster_test.go
	// Compat: where the mixin's own expression selects a kubeletstats name
	// that differs from ours (its direction label), that expression,
	// written out: empty on our data as it is, filled on our data passed
	// through config/kubeletstats-compat.yaml. The cluster test evaluates
	// it on both (test/e2e/dashboards_test.go).
	Compat string `json:"compat,omitempty"`
}

// The mixin's variables and selectors (regex matchers of ${var:pipe}).
const (
	mxCluster = `k8s_cluster_name=~"${cluster:pipe}"`
	mxNS      = `k8s_namespace_name=~"${namespace:pipe}"`
	mxPod     = `k8s_pod_name=~"${pod:pipe}"`
	mxCtrMax  = "max by (k8s_cluster_name, k8s_namespace_name, k8s_pod_name, k8s_container_name)"
	mxPodMax  = "max by (k8s_cluster_name, k8s_namespace_name, k8s_pod_name)"
	mxRate    = "$__rate_interval"

	dPod     = "Kubernetes / Compute Resources / Pod"
	dNS      = "Kubernetes / Compute Resources / Namespace (Pods)"
	dCluster = "Kubernetes / Compute Resources / Cluster"
)

func mxRateSum(by, metric, s string) string {
	return fmt.Sprintf("sum by (%s) (rate(%s{%s}[%s]))", by, metric, s, mxRate)
}

// mixinOwn is one of the mixin's own network queries, on kubeletstats'
// direction label: its common.libsonnet rateSum (maxBy mxCtrMax) or
// rateSumPodLevel (mxPodMax), the label's matcher before the variables'
// (tsqtsq's order).
type mixinOwn struct{ by, max, metric, sel string }

func (o *mixinOwn) expr(direction string) string {
	if o == nil {
		return ""
	}
	return fmt.Sprintf("sum by (%s) (%s (rate(%s{direction=%q, %s}[%s])))", o.by, o.max, o.metric, direction, o.sel, mxRate)
}

func mixinEntries() []mixinEntry {
	pod := sel(mxCluster, mxNS, mxPod)
	ns := sel(mxCluster, mxNS)
	cl := mxCluster
	var out []mixinEntry
	add := func(d, panel, query, status, mixin, expr string) *mixinEntry {
		out = append(out, mixinEntry{Dashboard: d, Panel: panel, Query: query, Status: status, Mixin: mixin, Expr: expr})
		return &out[len(out)-1]
	}
	const zero = "`0`"
	// rw: a read/write pair on one metric for a direction label.
	disk := func(d, panel, qRead, qWrite, by, metric, s string) {
		add(d, panel, qRead, "ours", zero, mxRateSum(by, metric, sel(s, `disk_io_direction="read"`)))
		add(d, panel, qWrite, "ours", zero, mxRateSum(by, metric, sel(s, `disk_io_direction="write"`)))
	}
	// own: the mixin's own expression where it has one (on kubeletstats'
	// direction label), nil where it has 0.
	net := func(d, panel, qRx, qTx, mixin, by, metric, s string, own *mixinOwn) {
		add(d, panel, qRx, "ours", mixin, mxRateSum(by, metric, sel(s, `network_io_direction="receive"`))).Compat = own.expr("receive")
		add(d, panel, qTx, "ours", mixin, mxRateSum(by, metric, sel(s, `network_io_direction="transmit"`))).Compat = own.expr("transmit")
	}
	const dirLabel = "`k8s_pod_network_io_bytes_total{direction=...}`: kubeletstats' `direction` label, ours is `network_io_direction` (semantic conventions): empty on our data as it is"
	const errsAsDrops = "`k8s_pod_network_errors_total{direction=...}`: errors where the title says drops, and kubeletstats' `direction` label"

	// Pod.
	add(dPod, "CPU Usage, CPU Quota", "cpuUsageByContainer", "as-is", "the pod's CPU time rate",
		fmt.Sprintf("sum by (k8s_container_name) (%s (rate(k8s_pod_cpu_time_seconds_total{%s}[%s])))", mxCtrMax, pod, mxRate))
	add(dPod, "CPU Usage", "cpuRequests, cpuLimits", "other", "`k8s_container_cpu_request`/`_limit` of k8sclusterreceiver (our `container_cpu_limit` is the limit the kernel enforces)", "")
	add(dPod, "CPU Throttling", "cpuThrottling", "ours", zero,
		fmt.Sprintf("%s\n/\n%s",
			fmt.Sprintf("sum by (k8s_container_name) (increase(container_cpu_throttling_throttled_periods_total{%s}[%s]))", pod, mxRate),
			fmt.Sprintf("sum by (k8s_container_name) (increase(container_cpu_throttling_periods_total{%s}[%s]))", pod, mxRate)))
	add(dPod, "CPU Quota", "cpuRequestsByContainer, cpuUsageVsRequests, cpuLimitsByContainer, cpuUsageVsLimits", "other", "requests and limits of k8sclusterreceiver", "")
	add(dPod, "Memory Usage (WSS), Memory Quota", "memoryUsageWSS", "as-is", "the pod's working set",
		fmt.Sprintf("sum by (k8s_pod_name) (%s (k8s_pod_memory_working_set_bytes{%s}))", mxCtrMax, pod))
	add(dPod, "Memory Usage (WSS)", "memoryRequests, memoryLimits", "other", "k8sclusterreceiver's requests and limits", "")
	add(dPod, "Memory Quota", "memoryUsageRSS", "as-is", "the pod's RSS",
		fmt.Sprintf("sum by (k8s_pod_name) (%s (k8s_pod_memory_rss_bytes{%s}))", mxCtrMax, pod))
	add(dPod, "Memory Quota", "memoryUsageCache", "as-is", "usage minus RSS (our page cache itself is `k8s_pod_memory_cache_bytes`)",
		fmt.Sprintf("sum by (k8s_pod_name) (%s (k8s_pod_memory_usage_bytes{%s}) - %s (k8s_pod_memory_rss_bytes{%s}))", mxCtrMax, pod, mxCtrMax, pod))
	add(dPod, "Memory Quota", "memoryUsageSwap", "ours", zero,
		fmt.Sprintf("sum by (k8s_container_name) (%s (container_memory_swap_bytes{%s}))", mxCtrMax, pod))
	net(dPod, "Receive Bandwidth / Transmit Bandwidth", "networkReceiveBandwidth", "networkTransmitBandwidth", dirLabel, "k8s_pod_name", "k8s_pod_network_io_bytes_total", pod,
		&mixinOwn{"k8s_pod_name", mxCtrMax, "k8s_pod_network_io_bytes_total", pod})
	net(dPod, "Rate of Received Packets / Rate of Transmitted Packets", "networkReceivePackets", "networkTransmitPackets", zero, "k8s_pod_name", "k8s_pod_network_packet_count_total", pod, nil)
	net(dPod, "Rate of Received Packets Dropped / Rate of Transmitted Packets Dropped", "networkReceivePacketsDropped", "networkTransmitPacketsDropped", errsAsDrops, "k8s_pod_name", "k8s_pod_network_packet_dropped_total", pod,
		&mixinOwn{"k8s_pod_name", mxCtrMax, "k8s_pod_network_errors_total", pod})
	disk(dPod, "IOPS (Pod)", "iopsPodReads", "iopsPodWrites", "k8s_pod_name", "k8s_pod_disk_operations_total", pod)
	disk(dPod, "ThroughPut (Pod)", "throughputPodRead", "throughputPodWrite", "k8s_pod_name", "k8s_pod_disk_io_bytes_total", pod)
	add(dPod, "IOPS (Containers)", "iopsContainersCombined", "ours", zero, mxRateSum("k8s_container_name", "container_disk_operations_total", pod))
	add(dPod, "ThroughPut (Containers)", "throughputContainersCombined", "ours", zero, mxRateSum("k8s_container_name", "container_disk_io_bytes_total", pod))
	disk(dPod, "Current Storage IO", "storageReads", "storageWrites", "k8s_container_name", "container_disk_operations_total", pod)
	add(dPod, "Current Storage IO", "storageReadsPlusWrites", "ours", zero, mxRateSum("k8s_container_name", "container_disk_operations_total", pod))
	disk(dPod, "Current Storage IO", "storageReadBytes", "storageWriteBytes", "k8s_container_name", "container_disk_io_bytes_total", pod)
	add(dPod, "Current Storage IO", "storageReadPlusWriteBytes", "ours", zero, mxRateSum("k8s_container_name", "container_disk_io_bytes_total", pod))

	// Namespace (Pods).
	add(dNS, "CPU Utilisation (from requests) / (from limits), Memory Utilisation (from requests) / (from limits)", "cpuUtilisationFromRequests, ...", "other", "requests and limits of k8sclusterreceiver", "")
	add(dNS, "CPU Usage, CPU Quota", "cpuUsageByPod", "as-is", "each pod's CPU time rate",
		fmt.Sprintf("sum by (k8s_pod_name) (%s (rate(k8s_pod_cpu_time_seconds_total{%s}[%s])))", mxPodMax, ns, mxRate))
	add(dNS, "CPU Usage", "cpuQuotaRequests, cpuQuotaLimits", "other", zero+"; ResourceQuota, k8sclusterreceiver's", "")
	add(dNS, "CPU Quota", "cpuRequestsByPod, cpuUsageVsRequests, cpuLimitsByPod, cpuUsageVsLimits", "other", "requests and limits of k8sclusterreceiver", "")
	add(dNS, "Memory Usage (w/o cache), Memory Quota", "memoryUsageByPod", "as-is", "each pod's working set",
		fmt.Sprintf("sum by (k8s_pod_name) (%s (k8s_pod_memory_working_set_bytes{%s}))", mxCtrMax, ns))
	add(dNS, "Memory Usage (w/o cache)", "memoryQuotaRequests, memoryQuotaLimits", "other", zero+"; ResourceQuota, k8sclusterreceiver's", "")
	add(dNS, "Memory Quota", "memoryUsageRSS", "as-is", "each pod's RSS",
		fmt.Sprintf("sum by (k8s_pod_name) (%s (k8s_pod_memory_rss_bytes{%s}))", mxCtrMax, ns))
	add(dNS, "Memory Quota", "memoryUsageCache", "ours", zero,
		fmt.Sprintf("sum by (k8s_pod_name) (%s (k8s_pod_memory_cache_bytes{%s}))", mxPodMax, ns))
	add(dNS, "Memory Quota", "memoryUsageSwap", "ours", zero,
		fmt.Sprintf("sum by (k8s_pod_name) (%s (k8s_pod_memory_swap_bytes{%s}))", mxPodMax, ns))
	// The mixin's bandwidth time series run networkReceiveBandwidthTimeSeries
	// (and Transmit), the same expression as the table's query.
	net(dNS, "Current Network Usage, Receive Bandwidth / Transmit Bandwidth", "networkReceiveBandwidth", "networkTransmitBandwidth", dirLabel, "k8s_pod_name", "k8s_pod_network_io_bytes_total", ns,
		&mixinOwn{"k8s_namespace_name", mxPodMax, "k8s_pod_network_io_bytes_total", ns})
	net(dNS, "Current Network Usage, Rate of Received Packets / Rate of Transmitted Packets", "networkReceivePackets", "networkTransmitPackets", zero, "k8s_pod_name", "k8s_pod_network_packet_count_total", ns, nil)
	net(dNS, "Current Network Usage, Rate of Received Packets Dropped / Rate of Transmitted Packets Dropped", "networkReceivePacketsDropped", "networkTransmitPacketsDropped", errsAsDrops, "k8s_pod_name", "k8s_pod_network_packet_dropped_total", ns,
		&mixinOwn{"k8s_namespace_name", mxPodMax, "k8s_pod_network_errors_total", ns})
	add(dNS, "IOPS(Reads+Writes)", "iopsReadsWrites", "ours", zero, mxRateSum("k8s_pod_name", "k8s_pod_disk_operations_total", ns))
	add(dNS, "ThroughPut(Read+Write)", "throughputReadWrite", "ours", zero, mxRateSum("k8s_pod_name", "k8s_pod_disk_io_bytes_total", ns))
	disk(dNS, "Current Storage IO", "storageReads", "storageWrites", "k8s_pod_name", "k8s_pod_disk_operations_total", ns)
	add(dNS, "Current Storage IO", "storageReadsPlusWrites", "ours", zero, mxRateSum("k8s_pod_name", "k8s_pod_disk_operations_total", ns))
	disk(dNS, "Current Storage IO", "storageReadBytes", "storageWriteBytes", "k8s_pod_name", "k8s_pod_disk_io_bytes_total", ns)
	add(dNS, "Current Storage IO", "storageReadPlusWriteBytes", "ours", zero, mxRateSum("k8s_pod_name", "k8s_pod_disk_io_bytes_total", ns))

	// Cluster.
	add(dCluster, "CPU Utilisation", "cpuUtilisation", "other", zero+"; needs the nodes' CPU capacity (kube-state-metrics, k8sclusterreceiver)", "")
	add(dCluster, "CPU Requests Commitment, CPU Limits Commitment, Memory Requests Commitment, Memory Limits Commitment", "cpuRequestsCommitment, ...", "other", zero+"; requests, limits and allocatable: k8sclusterreceiver", "")
	add(dCluster, "Memory Utilisation", "memoryUtilisation", "ours", zero,
		fmt.Sprintf("sum(k8s_node_memory_working_set_bytes{%s})\n/\n(sum(k8s_node_memory_working_set_bytes{%s}) + sum(k8s_node_memory_available_bytes{%s}))", cl, cl, cl))
	add(dCluster, "CPU Usage, CPU Quota", "cpuUsageByNamespace", "as-is", "the cluster's CPU time rate: one series (an outer `sum` without `by`)",
		fmt.Sprintf("sum(sum by (k8s_cluster_name, k8s_namespace_name) (rate(k8s_pod_cpu_time_seconds_total{k8s_cluster_name=~\"${cluster}\"}[%s])))", mxRate))
	add(dCluster, "CPU Quota, Memory Requests by Namespace", "podsByNamespace", "ours", zero,
		fmt.Sprintf("count by (k8s_namespace_name) (%s (k8s_pod_memory_working_set_bytes{%s}))", mxPodMax, cl))
	add(dCluster, "CPU Quota, Memory Requests by Namespace", "workloadsByNamespace", "other", zero+"; workload owners: kube-state-metrics or k8sattributes", "")
	add(dCluster, "CPU Quota, Memory Requests by Namespace", "cpuRequestsByNamespace, cpuUsageVsRequests, cpuLimitsByNamespace, cpuUsageVsLimits, memoryRequestsByNamespace, ...", "other", zero+"; requests and limits: k8sclusterreceiver", "")
	add(dCluster, "Memory, Memory Requests by Namespace", "memoryUsageByNamespace", "ours", "`k8s_container_memory_request_bytes`: the requests, where the title says memory (k8sclusterreceiver's)",
		fmt.Sprintf("sum by (k8s_namespace_name) (%s (k8s_pod_memory_working_set_bytes{%s}))", mxPodMax, cl))
	net(dCluster, "Current Network Usage, Receive Bandwidth / Transmit Bandwidth", "networkReceiveBandwidth", "networkTransmitBandwidth", zero, "k8s_namespace_name", "k8s_pod_network_io_bytes_total", cl, nil)
	add(dCluster, "Average Container Bandwidth by Namespace: Received", "avgContainerReceiveBandwidth", "ours", zero+" (ours per pod: pods share a network namespace)",
		fmt.Sprintf("avg by (k8s_namespace_name) (rate(k8s_pod_network_io_bytes_total{%s}[%s]))", sel(cl, `network_io_direction="receive"`), mxRate))
	add(dCluster, "Average Container Bandwidth by Namespace: Transmitted", "avgContainerTransmitBandwidth", "ours", zero+" (ours per pod)",
		fmt.Sprintf("avg by (k8s_namespace_name) (rate(k8s_pod_network_io_bytes_total{%s}[%s]))", sel(cl, `network_io_direction="transmit"`), mxRate))
	net(dCluster, "Current Network Usage, Rate of Received Packets / Rate of Transmitted Packets", "networkReceivePackets", "networkTransmitPackets", zero, "k8s_namespace_name", "k8s_pod_network_packet_count_total", cl, nil)
	net(dCluster, "Current Network Usage, Rate of Received Packets Dropped / Rate of Transmitted Packets Dropped", "networkReceivePacketsDropped", "networkTransmitPacketsDropped", zero, "k8s_namespace_name", "k8s_pod_network_packet_dropped_total", cl, nil)
	add(dCluster, "IOPS(Reads+Writes)", "iopsReadsWrites", "ours", zero, mxRateSum("k8s_namespace_name", "k8s_pod_disk_operations_total", cl))
	add(dCluster, "ThroughPut(Read+Write)", "throughputReadWrite", "ours", zero, mxRateSum("k8s_namespace_name", "k8s_pod_disk_io_bytes_total", cl))
	disk(dCluster, "Current Storage IO", "iopsReads", "iopsWrites", "k8s_namespace_name", "k8s_pod_disk_operations_total", cl)
	add(dCluster, "Current Storage IO", "iopsReadsWritesCombined", "ours", zero, mxRateSum("k8s_namespace_name", "k8s_pod_disk_operations_total", cl))
	disk(dCluster, "Current Storage IO", "throughputRead", "throughputWrite", "k8s_namespace_name", "k8s_pod_disk_io_bytes_total", cl)
	add(dCluster, "Current Storage IO", "throughputReadWriteCombined", "ours", zero, mxRateSum("k8s_namespace_name", "k8s_pod_disk_io_bytes_total", cl))
	return out
}

// mixinFile is what dashboards/mixin/kubernetes-mixin-otel.json holds.
type mixinDoc struct {
	Source  string       `json:"source"`
	Entries []mixinEntry `json:"entries"`
}

func mixinFile() mixinDoc {
	return mixinDoc{
		Source:  "github.com/grafana/kubernetes-mixin-otel 1d3316ec53699f1a452abd9a8fc51a8653b82017 dashboards/resources, on kubernetes-mixin 23032b7c7f4217d2b64b3772b0d9f8088ab4ce1d",
		Entries: mixinEntries(),
	}
}

// mixinTable is the generated part of docs/dashboards.md: one table per
// mixin dashboard.
func mixinTable() string {
	var b strings.Builder
	last := ""
	status := map[string]string{"as-is": "filled as is", "ours": "**use ours**", "other": "not our data"}
	for _, e := range mixinEntries() {
		if e.Dashboard != last {
			if last != "" {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "#### %s\n\n| panel | mixin query | the mixin has | our data | PromQL on our names |\n|---|---|---|---|---|\n", e.Dashboard)
			last = e.Dashboard
		}
		expr := "—"
		if e.Expr != "" {
			expr = "`" + strings.ReplaceAll(strings.ReplaceAll(e.Expr, "\n", " "), "|", `\|`) + "`"
		}
		st := status[e.Status]
		if e.Compat != "" {
			st += ", or filled as is through [kubeletstats-compat](../config/kubeletstats-compat.yaml)"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", e.Panel, e.Query, strings.ReplaceAll(e.Mixin, "|", `\|`), st, expr)
	}
	return b.String()
}

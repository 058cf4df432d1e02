// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// dashboards are the dashboards we ship, one file each under dashboards/.
// Every expression uses our metric names as the prometheus and
// prometheus_remote_write exporters and Prometheus 3's OTLP receiver name
// them (docs/names.md, "cAdvisor and kubelet names, and ours"), with resource
// attributes as labels. test/e2e/cluster_test.go evaluates every target
// of every panel against the test cluster's Prometheus (the GPU view:
// against the GPU mocks' output sent through the same gateway).
func dashboards() []board {
	return []board{
		{"containerstats-pod.json", podBoard()},
		{"containerstats-namespace.json", namespaceBoard()},
		{"containerstats-node.json", nodeBoard()},
		{"containerstats-cluster.json", clusterBoard()},
		{"containerstats-gpu.json", gpuBoard()},
	}
}

// rateBy is sum by (by) (rate(metric{s}[$__rate_interval])).
func rateBy(by, metric, s string) string {
	return fmt.Sprintf("sum by (%s) (rate(%s{%s}[%s]))", by, metric, s, rate)
}

// maxBy is max by (by) (metric{s}): one value per entity even while the
// series of a container's previous run (another restart count and
// directions is a counter's receive and transmit rates (network.io.direction),
// legends prefixed with the direction.
func directions(by, metric, s, legend string) []q {
	return []q{
		{rateBy(by, metric, dir(s, "receive")), "receive " + legend},
		{rateBy(by, metric, dir(s, "transmit")), "transmit " + legend},
	}
}

// podPressure is the share of time some of a pod's tasks stalled on
// resource (PSI, k8s.pod.pressure.stall_time).
func podPressure(by, s, resource string) string {
	return rateBy(by, "k8s_pod_pressure_stall_time_seconds_total", sel(s, `pressure_resource="`+resource+`"`, `pressure_stall_type="some"`))
}

// container ID) is still within Prometheus's lookback.
func maxBy(by, metric, s string) string {
	return fmt.Sprintf("max by (%s) (%s{%s})", by, metric, s)
}

// sumBy is sum by (by) (metric{s}).
func sumBy(by, metric, s string) string {
	return fmt.Sprintf("sum by (%s) (%s{%s})", by, metric, s)
}

// throttled is the share of CFS periods throttled: throttled periods over
// periods, both as rates.
func throttled(by, prefix, s string) string {
	return fmt.Sprintf("%s\n/\n%s",
		rateBy(by, prefix+"_cpu_throttling_throttled_periods_total", s),
		rateBy(by, prefix+"_cpu_throttling_periods_total", s))
}

func dir(s, d string) string { return sel(s, `network_io_direction="`+d+`"`) }

func podBoard() *dashboard.DashboardBuilder {
	pods := sel(mCluster, mNamespace, mPod)
	ctr := "k8s_pod_name, k8s_container_name"
	lc := "{{k8s_pod_name}} / {{k8s_container_name}}"
	return newBoard("containerstats-pod", "containerstats / Pod",
		"Containers of the selected pods: CPU and throttling, memory and OOM kills, the pod's network, block I/O, filesystem and pressure (container_stats receiver).").
		WithVariable(clusterVar()).
		WithVariable(labelVar("namespace", "k8s_namespace_name", "k8s_pod_cpu_time_seconds_total", mCluster, false)).
		WithVariable(labelVar("pod", "k8s_pod_name", "k8s_pod_cpu_time_seconds_total", sel(mCluster, mNamespace), true)).
		WithRow(row("CPU")).
		WithPanel(ts("CPU usage", "CPU time per second of each container (container.cpu.time, all modes), and its CFS limit (container.cpu.limit) where one is set.", "short", 12,
			q{rateBy(ctr, "container_cpu_time_seconds_total", pods), lc},
			q{maxBy(ctr, "container_cpu_limit", pods), "limit " + lc})).
		WithPanel(ts("CPU throttling", "Share of CFS periods in which the container was throttled (container.cpu.throttling.throttled_periods / .periods); no value without a CFS limit.", "percentunit", 12,
			q{throttled(ctr, "container", pods), lc})).
		WithPanel(ts("CPU throttled time", "Time the container's threads spent throttled, per second (container.cpu.throttling.throttled_time).", "s", 12,
			q{rateBy(ctr, "container_cpu_throttling_throttled_time_seconds_total", pods), lc})).
		WithPanel(ts("CPU pressure", "PSI: share of time some of the pod's tasks stalled on CPU (k8s.pod.pressure.stall_time, cpu, some).", "percentunit", 12,
			q{podPressure("k8s_pod_name", pods, "cpu"), "{{k8s_pod_name}}"})).
		WithRow(row("Memory")).
		WithPanel(ts("Memory working set", "Working set (usage minus inactive file: what the kubelet evicts and the OOM killer weighs) and the memory limit.", "bytes", 12,
			q{maxBy(ctr, "container_memory_working_set_bytes", pods), lc},
			q{maxBy(ctr, "container_memory_limit_bytes", pods), "limit " + lc})).
		WithPanel(ts("Memory RSS, cache and swap", "Anonymous memory (rss), page cache (cache) and swap of each container.", "bytes", 12,
			q{maxBy(ctr, "container_memory_rss_bytes", pods), "rss " + lc},
			q{maxBy(ctr, "container_memory_cache_bytes", pods), "cache " + lc},
			q{maxBy(ctr, "container_memory_swap_bytes", pods), "swap " + lc})).
		WithPanel(ts("OOM kills", "OOM kills in the pod's cgroup tree since the pod started (k8s.pod.memory.oom_kills), and in each container (container.memory.oom_kills). On cgroup v2 the pod's memory.events keeps every kill. On cgroup v1 a kill is counted in the killed container's cgroup only, which is usually removed (the kill ended the container) before a scrape reads it: then neither counter shows the kill, and the k8s.container.oom_kill event (logs signal) is the reliable signal (docs/memory.md).", "short", 12,
			q{maxBy("k8s_pod_name", "k8s_pod_memory_oom_kills_total", pods), "pod {{k8s_pod_name}}"},
			q{maxBy(ctr, "container_memory_oom_kills_total", pods), lc})).
		WithPanel(ts("Memory pressure", "PSI: share of time some of the pod's tasks stalled on memory.", "percentunit", 12,
			q{podPressure("k8s_pod_name", pods, "memory"), "{{k8s_pod_name}}"})).
		WithRow(row("Network (the pod's namespace)")).
		WithPanel(ts("Network bandwidth", "Bytes per second through the pod's interfaces (k8s.pod.network.io).", "Bps", 8,
			directions("k8s_pod_name, network_interface_name", "k8s_pod_network_io_bytes_total", pods, "{{k8s_pod_name}} {{network_interface_name}}")...)).
		WithPanel(ts("Network packets", "Packets per second (k8s.pod.network.packet.count).", "pps", 8,
			directions("k8s_pod_name, network_interface_name", "k8s_pod_network_packet_count_total", pods, "{{k8s_pod_name}} {{network_interface_name}}")...)).
		WithPanel(ts("Network drops and errors", "Packets dropped (k8s.pod.network.packet.dropped) and errors (k8s.pod.network.errors) per second.", "pps", 8,
			q{rateBy("k8s_pod_name, network_io_direction", "k8s_pod_network_packet_dropped_total", pods), "dropped {{network_io_direction}} {{k8s_pod_name}}"},
			q{rateBy("k8s_pod_name, network_io_direction", "k8s_pod_network_errors_total", pods), "errors {{network_io_direction}} {{k8s_pod_name}}"})).
		WithRow(row("Block I/O and filesystem")).
		WithPanel(ts("Disk throughput", "Bytes read and written per second by each container (container.disk.io; on cgroup v1 only where blk-throttle accounts: docs/blkio.md).", "Bps", 8,
			q{rateBy(ctr+", disk_io_direction", "container_disk_io_bytes_total", pods), "{{disk_io_direction}} " + lc})).
		WithPanel(ts("Disk operations", "Read and write operations per second (container.disk.operations).", "iops", 8,
			q{rateBy(ctr+", disk_io_direction", "container_disk_operations_total", pods), "{{disk_io_direction}} " + lc})).
		WithPanel(ts("I/O pressure", "PSI: share of time some of the pod's tasks stalled on I/O.", "percentunit", 8,
			q{podPressure("k8s_pod_name", pods, "io"), "{{k8s_pod_name}}"})).
		WithPanel(ts("Writable layer and logs", "Each container's writable layer as the runtime measures it (container.filesystem.usage) and its log files (k8s.container.ephemeral_storage.usage, logs).", "bytes", 12,
			q{maxBy(ctr, "container_filesystem_usage_bytes", pods), "rootfs " + lc},
			q{maxBy(ctr, "k8s_container_ephemeral_storage_usage_bytes", sel(pods, `k8s_container_ephemeral_storage_fs_type="logs"`)), "logs " + lc})).
		WithPanel(ts("Tasks", "Processes and threads in each container (container.pids.count).", "short", 12,
			q{maxBy(ctr, "container_pids_count", pods), lc}))
}

func namespaceBoard() *dashboard.DashboardBuilder {
	ns := sel(mCluster, mNamespace)
	p := "k8s_pod_name"
	lp := "{{k8s_pod_name}}"
	return newBoard("containerstats-namespace", "containerstats / Namespace",
		"The pods of the selected namespaces: CPU and throttling, memory and OOM kills, network, block I/O, ephemeral storage and pressure (container_stats receiver).").
		WithVariable(clusterVar()).
		WithVariable(labelVar("namespace", "k8s_namespace_name", "k8s_pod_cpu_time_seconds_total", mCluster, true)).
		WithRow(row("CPU")).
		WithPanel(ts("CPU usage by pod", "CPU time per second of each pod (k8s.pod.cpu.time: its cgroup, all containers and the sandbox).", "short", 12,
			q{rateBy(p, "k8s_pod_cpu_time_seconds_total", ns), lp})).
		WithPanel(ts("CPU throttling by pod", "Share of the pod cgroup's CFS periods throttled (k8s.pod.cpu.throttling.*); no value without a pod-level limit.", "percentunit", 12,
			q{throttled(p, "k8s_pod", ns), lp})).
		WithPanel(ts("CPU throttled time by pod", "Time the pod's threads spent throttled, per second, summed over its containers (container.cpu.throttling.throttled_time).", "s", 12,
			q{rateBy(p, "container_cpu_throttling_throttled_time_seconds_total", ns), lp})).
		WithPanel(ts("CPU pressure by pod", "PSI: share of time some of the pod's tasks stalled on CPU.", "percentunit", 12,
			q{podPressure(p, ns, "cpu"), lp})).
		WithRow(row("Memory")).
		WithPanel(ts("Memory working set by pod", "Working set of each pod's cgroup (k8s.pod.memory.working_set).", "bytes", 12,
			q{maxBy(p, "k8s_pod_memory_working_set_bytes", ns), lp})).
		WithPanel(ts("Memory RSS, cache and swap", "The namespace's anonymous memory, page cache and swap (pod cgroups).", "bytes", 12,
			q{sumBy("k8s_namespace_name", "k8s_pod_memory_rss_bytes", ns), "rss {{k8s_namespace_name}}"},
			q{sumBy("k8s_namespace_name", "k8s_pod_memory_cache_bytes", ns), "cache {{k8s_namespace_name}}"},
			q{sumBy("k8s_namespace_name", "k8s_pod_memory_swap_bytes", ns), "swap {{k8s_namespace_name}}"})).
		WithPanel(ts("OOM kills by pod", "OOM kills in each pod's cgroup tree since it started (k8s.pod.memory.oom_kills). On cgroup v1 a kill that ended its container before a scrape read the container's counter is missing: the k8s.container.oom_kill event (logs signal) has it (docs/memory.md).", "short", 12,
			q{maxBy(p, "k8s_pod_memory_oom_kills_total", ns), lp})).
		WithPanel(ts("Memory pressure by pod", "PSI: share of time some of the pod's tasks stalled on memory.", "percentunit", 12,
			q{podPressure(p, ns, "memory"), lp})).
		WithRow(row("Network")).
		WithPanel(ts("Network bandwidth by pod", "Bytes per second through each pod's interfaces (k8s.pod.network.io).", "Bps", 8,
			directions(p, "k8s_pod_network_io_bytes_total", ns, lp)...)).
		WithPanel(ts("Network packets by pod", "Packets per second (k8s.pod.network.packet.count).", "pps", 8,
			directions(p, "k8s_pod_network_packet_count_total", ns, lp)...)).
		WithPanel(ts("Network drops by pod", "Packets dropped per second (k8s.pod.network.packet.dropped).", "pps", 8,
			directions(p, "k8s_pod_network_packet_dropped_total", ns, lp)...)).
		WithRow(row("Block I/O and storage")).
		WithPanel(ts("Disk throughput by pod", "Bytes read and written per second by each pod's cgroup (k8s.pod.disk.io).", "Bps", 8,
			q{rateBy(p+", disk_io_direction", "k8s_pod_disk_io_bytes_total", ns), "{{disk_io_direction}} " + lp})).
		WithPanel(ts("Disk operations by pod", "Read and write operations per second (k8s.pod.disk.operations).", "iops", 8,
			q{rateBy(p+", disk_io_direction", "k8s_pod_disk_operations_total", ns), "{{disk_io_direction}} " + lp})).
		WithPanel(ts("Ephemeral storage by pod", "Writable layers and logs of each pod's containers (k8s.container.ephemeral_storage.usage).", "bytes", 8,
			q{sumBy(p, "k8s_container_ephemeral_storage_usage_bytes", ns), lp}))
}

func nodeBoard() *dashboard.DashboardBuilder {
	nd := sel(mCluster, mNode)
	ln := "{{k8s_node_name}}"
	return newBoard("containerstats-node", "containerstats / Node",
		"The selected nodes: CPU and the most throttled pods, memory and OOM kills, network, disks, filesystems and pressure (container_stats receiver, k8s.node.* and k8s.pod.*).").
		WithVariable(clusterVar()).
		WithVariable(labelVar("node", "k8s_node_name", "k8s_node_cpu_time_seconds_total", mCluster, true)).
		WithRow(row("CPU")).
		WithPanel(ts("CPU usage", "CPU time per second of the node's root cgroup (k8s.node.cpu.time: everything on the node).", "short", 8,
			q{rateBy("k8s_node_name", "k8s_node_cpu_time_seconds_total", nd), ln})).
		WithPanel(ts("CPU usage by namespace", "CPU time per second of the node's pods, by namespace (k8s.pod.cpu.time).", "short", 8,
			q{rateBy("k8s_node_name, k8s_namespace_name", "k8s_pod_cpu_time_seconds_total", nd), "{{k8s_node_name}} {{k8s_namespace_name}}"})).
		WithPanel(ts("Most throttled pods", "The ten pods with the most throttled time per second (k8s.pod.cpu.throttling.throttled_time).", "s", 8,
			q{"topk(10, " + rateBy("k8s_node_name, k8s_namespace_name, k8s_pod_name", "k8s_pod_cpu_throttling_throttled_time_seconds_total", nd) + ")", "{{k8s_namespace_name}}/{{k8s_pod_name}}"})).
		WithRow(row("Memory")).
		WithPanel(ts("Memory", "The node's working set, RSS, page cache and swap (k8s.node.memory.*), and what is available (MemTotal minus working set).", "bytes", 12,
			q{maxBy("k8s_node_name", "k8s_node_memory_working_set_bytes", nd), "working set " + ln},
			q{maxBy("k8s_node_name", "k8s_node_memory_rss_bytes", nd), "rss " + ln},
			q{maxBy("k8s_node_name", "k8s_node_memory_cache_bytes", nd), "cache " + ln},
			q{maxBy("k8s_node_name", "k8s_node_memory_swap_bytes", nd), "swap " + ln},
			q{maxBy("k8s_node_name", "k8s_node_memory_available_bytes", nd), "available " + ln})).
		WithPanel(ts("OOM kills", "OOM kills on the node in each interval, in any cgroup or global (k8s.node.memory.oom_kills, /proc/vmstat oom_kill).", "short", 12,
			q{fmt.Sprintf("sum by (k8s_node_name) (increase(k8s_node_memory_oom_kills_total{%s}[%s]))", nd, rate), ln})).
		WithRow(row("Network")).
		WithPanel(ts("Network bandwidth", "Bytes per second through the node's interfaces (k8s.node.network.io; loopback and pod veths left out).", "Bps", 8,
			directions("k8s_node_name, network_interface_name", "k8s_node_network_io_bytes_total", nd, "{{k8s_node_name}} {{network_interface_name}}")...)).
		WithPanel(ts("Network packets", "Packets per second (k8s.node.network.packet.count).", "pps", 8,
			directions("k8s_node_name, network_interface_name", "k8s_node_network_packet_count_total", nd, "{{k8s_node_name}} {{network_interface_name}}")...)).
		WithPanel(ts("Network drops and errors", "Packets dropped and errors per second (k8s.node.network.packet.dropped, .errors).", "pps", 8,
			q{rateBy("k8s_node_name, network_io_direction", "k8s_node_network_packet_dropped_total", nd), "dropped {{network_io_direction}} " + ln},
			q{rateBy("k8s_node_name, network_io_direction", "k8s_node_network_errors_total", nd), "errors {{network_io_direction}} " + ln})).
		WithRow(row("Disks and filesystems")).
		WithPanel(ts("Disk throughput", "Bytes read and written per second per whole disk (k8s.node.disk.io, /proc/diskstats).", "Bps", 8,
			q{rateBy("k8s_node_name, system_device, disk_io_direction", "k8s_node_disk_io_bytes_total", nd), "{{disk_io_direction}} {{k8s_node_name}} {{system_device}}"})).
		WithPanel(ts("Disk operations", "Read and write operations per second per whole disk (k8s.node.disk.operations).", "iops", 8,
			q{rateBy("k8s_node_name, system_device, disk_io_direction", "k8s_node_disk_operations_total", nd), "{{disk_io_direction}} {{k8s_node_name}} {{system_device}}"})).
		WithPanel(ts("Filesystems", "The kubelet's filesystem (k8s.node.filesystem.*) and the runtime's image filesystems (k8s.node.image_filesystem.*): used and capacity.", "bytes", 8,
			q{maxBy("k8s_node_name", "k8s_node_filesystem_usage_bytes", nd), "kubelet fs used " + ln},
			q{maxBy("k8s_node_name", "k8s_node_filesystem_capacity_bytes", nd), "kubelet fs capacity " + ln},
			q{maxBy("k8s_node_name, system_filesystem_mountpoint", "k8s_node_image_filesystem_usage_bytes", nd), "images used " + ln + " {{system_filesystem_mountpoint}}"},
			q{maxBy("k8s_node_name, system_filesystem_mountpoint", "k8s_node_image_filesystem_capacity_bytes", nd), "images capacity " + ln + " {{system_filesystem_mountpoint}}"})).
		WithPanel(ts("Inodes used", "Share of the kubelet filesystem's inodes in use (k8s.node.filesystem.inode.count, .inode.free).", "percentunit", 12,
			q{fmt.Sprintf("1 - %s\n/\n%s", maxBy("k8s_node_name", "k8s_node_filesystem_inode_free", nd), maxBy("k8s_node_name", "k8s_node_filesystem_inode_count", nd)), ln})).
		WithPanel(ts("Pressure", "PSI of the whole node: share of time some (or all: full) tasks stalled, per resource (k8s.node.pressure.stall_time).", "percentunit", 12,
			q{rateBy("k8s_node_name, pressure_resource, pressure_stall_type", "k8s_node_pressure_stall_time_seconds_total", nd), "{{pressure_resource}} {{pressure_stall_type}} " + ln}))
}

func clusterBoard() *dashboard.DashboardBuilder {
	c := mCluster
	lns := "{{k8s_namespace_name}}"
	ln := "{{k8s_node_name}}"
	return newBoard("containerstats-cluster", "containerstats / Cluster",
		"Every node and namespace: CPU and throttling, memory and OOM kills, network, disks, filesystems and pressure (container_stats receiver).").
		WithVariable(clusterVar()).
		WithRow(row("CPU")).
		WithPanel(ts("CPU usage by node", "CPU time per second of each node (k8s.node.cpu.time).", "short", 8,
			q{rateBy("k8s_node_name", "k8s_node_cpu_time_seconds_total", c), ln})).
		WithPanel(ts("CPU usage by namespace", "CPU time per second of each namespace's pods (k8s.pod.cpu.time).", "short", 8,
			q{rateBy("k8s_namespace_name", "k8s_pod_cpu_time_seconds_total", c), lns})).
		WithPanel(ts("CPU throttled time by namespace", "Time the namespace's containers spent throttled, per second (container.cpu.throttling.throttled_time).", "s", 8,
			q{rateBy("k8s_namespace_name", "container_cpu_throttling_throttled_time_seconds_total", c), lns})).
		WithRow(row("Memory")).
		WithPanel(ts("Memory working set by namespace", "Working set of each namespace's pods (k8s.pod.memory.working_set).", "bytes", 8,
			q{sumBy("k8s_namespace_name", "k8s_pod_memory_working_set_bytes", c), lns})).
		WithPanel(ts("Memory utilisation by node", "Working set over MemTotal of each node (k8s.node.memory.working_set / (working_set + available)).", "percentunit", 8,
			q{fmt.Sprintf("%s\n/\n(%s + %s)", maxBy("k8s_node_name", "k8s_node_memory_working_set_bytes", c), maxBy("k8s_node_name", "k8s_node_memory_working_set_bytes", c), maxBy("k8s_node_name", "k8s_node_memory_available_bytes", c)), ln})).
		WithPanel(ts("Memory RSS, cache and swap by node", "The nodes' anonymous memory, page cache and swap (k8s.node.memory.*).", "bytes", 8,
			q{maxBy("k8s_node_name", "k8s_node_memory_rss_bytes", c), "rss " + ln},
			q{maxBy("k8s_node_name", "k8s_node_memory_cache_bytes", c), "cache " + ln},
			q{maxBy("k8s_node_name", "k8s_node_memory_swap_bytes", c), "swap " + ln})).
		WithPanel(ts("OOM kills by node", "OOM kills on each node in each interval, in any cgroup or global (k8s.node.memory.oom_kills).", "short", 12,
			q{fmt.Sprintf("sum by (k8s_node_name) (increase(k8s_node_memory_oom_kills_total{%s}[%s]))", c, rate), ln})).
		WithPanel(ts("OOM kills by namespace", "OOM kills in the namespace's pods since they started (k8s.pod.memory.oom_kills). On cgroup v1 a kill that ended its container before a scrape read the container's counter is missing: the k8s.container.oom_kill event (logs signal) has it (docs/memory.md).", "short", 12,
			q{sumBy("k8s_namespace_name", "k8s_pod_memory_oom_kills_total", c), lns})).
		WithRow(row("Network")).
		WithPanel(ts("Network bandwidth by namespace", "Bytes per second through the namespace's pods' interfaces (k8s.pod.network.io).", "Bps", 8,
			directions("k8s_namespace_name", "k8s_pod_network_io_bytes_total", c, lns)...)).
		WithPanel(ts("Network packets by namespace", "Packets per second (k8s.pod.network.packet.count).", "pps", 8,
			directions("k8s_namespace_name", "k8s_pod_network_packet_count_total", c, lns)...)).
		WithPanel(ts("Network drops by namespace", "Packets dropped per second (k8s.pod.network.packet.dropped).", "pps", 8,
			directions("k8s_namespace_name", "k8s_pod_network_packet_dropped_total", c, lns)...)).
		WithRow(row("Disks, filesystems and pressure")).
		WithPanel(ts("Disk throughput by node", "Bytes read and written per second by each node's whole disks (k8s.node.disk.io).", "Bps", 8,
			q{rateBy("k8s_node_name, disk_io_direction", "k8s_node_disk_io_bytes_total", c), "{{disk_io_direction}} " + ln})).
		WithPanel(ts("Disk operations by node", "Read and write operations per second (k8s.node.disk.operations).", "iops", 8,
			q{rateBy("k8s_node_name, disk_io_direction", "k8s_node_disk_operations_total", c), "{{disk_io_direction}} " + ln})).
		WithPanel(ts("Kubelet filesystem used by node", "Share of each node's kubelet filesystem in use (k8s.node.filesystem.usage / .capacity).", "percentunit", 8,
			q{fmt.Sprintf("%s\n/\n%s", maxBy("k8s_node_name", "k8s_node_filesystem_usage_bytes", c), maxBy("k8s_node_name", "k8s_node_filesystem_capacity_bytes", c)), ln})).
		WithPanel(ts("Pressure by node", "PSI of each node: share of time some tasks stalled, per resource (k8s.node.pressure.stall_time).", "percentunit", 24,
			q{rateBy("k8s_node_name, pressure_resource", "k8s_node_pressure_stall_time_seconds_total", sel(c, `pressure_stall_type="some"`)), "{{pressure_resource}} " + ln}))
}

func gpuBoard() *dashboard.DashboardBuilder {
	g := sel(mCluster, mNode)
	dev := "k8s_node_name, hw_id"
	ld := "{{k8s_node_name}} {{hw_id}}"
	ctrs := sel(mCluster, mNode, mNamespace)
	ctr := "k8s_namespace_name, k8s_pod_name, k8s_container_name, hw_id"
	lc := "{{k8s_namespace_name}}/{{k8s_pod_name}}/{{k8s_container_name}} {{hw_id}}"
	return newBoard("containerstats-gpu", "containerstats / GPU",
		"NVIDIA GPUs and MIG instances (NVML, hw.* metrics): use, memory, temperature, power, clocks, XID and ECC errors, remapped rows, PCIe and NVLink; and each container's use of them (container.accelerator.*).").
		WithVariable(clusterVar()).
		WithVariable(labelVar("node", "k8s_node_name", "hw_gpu_memory_limit_bytes", mCluster, true)).
		WithVariable(labelVar("namespace", "k8s_namespace_name", "container_accelerator_memory_total_bytes", sel(mCluster, mNode), true)).
		WithRow(row("Use")).
		WithPanel(ts("GPU utilization", "Share of time a kernel ran on the GPU (hw.gpu.utilization, general), as nvidia-smi's GPU-Util.", "percentunit", 8,
			q{maxBy(dev, "hw_gpu_utilization_ratio", sel(g, `hw_gpu_task="general"`)), ld})).
		WithPanel(ts("GPU memory", "Device memory used (hw.gpu.memory.usage, the driver's reservation included) and its size (hw.gpu.memory.limit), per GPU and MIG instance.", "bytes", 8,
			q{maxBy(dev, "hw_gpu_memory_usage_bytes", g), "used " + ld},
			q{maxBy(dev, "hw_gpu_memory_limit_bytes", g), "total " + ld})).
		WithPanel(ts("SM activity (GPM)", "NVML GPM activity by kind over the scrape interval (hw.gpu.activity; Hopper and later).", "percentunit", 8,
			q{maxBy(dev+", hw_gpu_activity_kind", "hw_gpu_activity_ratio", g), "{{hw_gpu_activity_kind}} " + ld})).
		WithRow(row("Device health")).
		WithPanel(ts("Temperature", "GPU and memory temperature (hw.temperature, hw.gpu.memory.temperature).", "celsius", 8,
			q{maxBy(dev, "hw_temperature_celsius", g), "gpu " + ld},
			q{maxBy(dev, "hw_gpu_memory_temperature_celsius", g), "memory " + ld})).
		WithPanel(ts("Power", "Power drawn (hw.power) and the enforced power limit (hw.gpu.power.limit).", "watt", 8,
			q{maxBy(dev, "hw_power_watts", g), "draw " + ld},
			q{maxBy(dev, "hw_gpu_power_limit_watts", g), "limit " + ld})).
		WithPanel(ts("Clock event reasons", "Why the clocks are held down now: 1 per active reason (hw.gpu.clock.event_reasons: power cap, thermal slowdown, ...).", "short", 8,
			q{maxBy(dev+", hw_gpu_clock_event_reason", "hw_gpu_clock_event_reasons_ratio", g), "{{hw_gpu_clock_event_reason}} " + ld})).
		WithPanel(ts("XID errors", "XID events in the time range, by code (hw.gpu.xid.errors).", "short", 8,
			q{fmt.Sprintf("sum by (%s, hw_gpu_xid) (increase(hw_gpu_xid_errors_total{%s}[$__range]))", dev, g), "XID {{hw_gpu_xid}} " + ld})).
		WithPanel(ts("ECC errors", "Memory ECC errors since the driver loaded (hw.errors, gpu) and over the GPU's life (hw.gpu.memory.ecc.lifetime_errors).", "short", 8,
			q{maxBy(dev+", error_type", "hw_errors_total", sel(g, `hw_type="gpu"`)), "{{error_type}} " + ld},
			q{maxBy(dev+", error_type", "hw_gpu_memory_ecc_lifetime_errors_total", g), "lifetime {{error_type}} " + ld})).
		WithPanel(ts("Remapped rows", "Rows remapped by cause (hw.gpu.memory.remap.rows) and remap pending or failed (hw.gpu.memory.remap.status).", "short", 8,
			q{maxBy(dev+", hw_gpu_memory_remap_cause", "hw_gpu_memory_remap_rows_total", g), "{{hw_gpu_memory_remap_cause}} " + ld},
			q{maxBy(dev+", hw_gpu_memory_remap_state", "hw_gpu_memory_remap_status_ratio", g), "{{hw_gpu_memory_remap_state}} " + ld})).
		WithRow(row("Interconnect and clocks")).
		WithPanel(ts("PCIe throughput", "PCIe bytes per second as NVML samples them (hw.gpu.pcie.throughput), and replays per second (hw.gpu.pcie.replays).", "Bps", 8,
			q{maxBy(dev+", network_io_direction", "hw_gpu_pcie_throughput_bytes_per_second", g), "{{network_io_direction}} " + ld},
			q{rateBy(dev, "hw_gpu_pcie_replays_total", g), "replays/s " + ld})).
		WithPanel(ts("NVLink throughput", "NVLink bytes per second, all links (hw.gpu.io).", "Bps", 8,
			q{rateBy(dev+", network_io_direction", "hw_gpu_io_bytes_total", g), "{{network_io_direction}} " + ld})).
		WithPanel(ts("Clocks", "SM and memory clocks (hw.gpu.clock.frequency) and their maxima (hw.gpu.clock.frequency.limit).", "hertz", 8,
			q{maxBy(dev+", hw_gpu_clock_domain", "hw_gpu_clock_frequency_hertz", g), "{{hw_gpu_clock_domain}} " + ld},
			q{maxBy(dev+", hw_gpu_clock_domain", "hw_gpu_clock_frequency_limit_hertz", g), "max {{hw_gpu_clock_domain}} " + ld})).
		WithRow(row("Per container")).
		WithPanel(ts("GPU duty cycle by container", "The container's own processes' SM utilization on each GPU it uses (container.accelerator.duty_cycle); a shared GPU's value is never copied onto each of its users.", "percentunit", 12,
			q{maxBy(ctr, "container_accelerator_duty_cycle_ratio", ctrs), lc})).
		WithPanel(ts("GPU memory by container", "Device memory of the container's own processes (container.accelerator.memory.used) and the device's size (.memory.total).", "bytes", 12,
			q{maxBy(ctr, "container_accelerator_memory_used_bytes", ctrs), "used " + lc},
			q{maxBy(ctr, "container_accelerator_memory_total_bytes", ctrs), "total " + lc}))
}

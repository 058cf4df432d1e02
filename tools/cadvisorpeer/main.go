// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

// Command cadvisorpeer runs cAdvisor as a library the way the kubelet embeds
// it, for `make bench-peer` (test/peer): manager.New with an in-memory stats
// cache, the kubelet's housekeeping settings and metric set, and cAdvisor's
// Prometheus collectors (container and machine) on a loopback /metrics
// endpoint, as the kubelet serves /metrics/cadvisor.
//
// It lives in its own module (tools/cadvisorpeer/go.mod) so that cAdvisor's
// dependencies never enter the receiver's module; the version is pinned there.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	// The handlers of standalone cAdvisor's Docker and Podman containers
	// (the kubelet registers neither): without their sockets they decline
	// at Start, and every cgroup is a raw container, as in the kubelet.
	_ "github.com/google/cadvisor/container/docker/install"
	_ "github.com/google/cadvisor/container/podman/install"
	"github.com/google/cadvisor/lib/cache/memory"
	"github.com/google/cadvisor/lib/container"
	"github.com/google/cadvisor/lib/manager"
	"github.com/google/cadvisor/lib/metrics"
	info "github.com/google/cadvisor/lib/model"
	"github.com/google/cadvisor/lib/utils/sysfs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/utils/clock"
)

// The kubelet's settings, as k8s.io/kubernetes v1.34.4 sets them
// (pkg/kubelet/cadvisor/cadvisor_linux.go lines 58-61): stats kept 2
// minutes, housekeeping every 10 s (the housekeeping_interval flag the
// kubelet's init overrides, lines 66-67; event storage off, lines 69-70),
// stretched up to 15 s for containers whose stats do not change (dynamic
// housekeeping: manager.HousekeepingConfig, lines 106-110).
const (
	statsCacheDuration          = 2 * time.Minute
	defaultHousekeepingInterval = 10 * time.Second
	maxHousekeepingInterval     = 15 * time.Second
)

// kubeletMetrics is the set the kubelet gives cAdvisor's manager
// (includedMetrics of cadvisor.New, cadvisor_linux.go lines 87-104, passed to
// manager.New at line 113): what housekeeping collects. PressureMetrics when
// the KubeletPSI feature gate is on (lines 98-99; pkg/features/
// kube_features.go lines 1401-1404: beta and on by default since 1.34), and
// DiskUsageMetrics when legacy stats or local storage capacity isolation is
// on (line 103; the latter is the kubelet's default). Under those defaults
// it is also the set /metrics/cadvisor exports (pkg/kubelet/server/server.go
// lines 440-453: the same families, DiskUsageMetrics unconditionally,
// PressureMetrics under the same gate).
func kubeletMetrics(psi bool) container.MetricSet {
	s := container.MetricSet{
		container.CpuUsageMetrics:     struct{}{},
		container.MemoryUsageMetrics:  struct{}{},
		container.CpuLoadMetrics:      struct{}{},
		container.DiskIOMetrics:       struct{}{},
		container.NetworkUsageMetrics: struct{}{},
		container.AppMetrics:          struct{}{},
		container.ProcessMetrics:      struct{}{},
		container.OOMMetrics:          struct{}{},
		container.DiskUsageMetrics:    struct{}{},
	}
	if psi {
		s[container.PressureMetrics] = struct{}{}
	}
	return s
}

// standaloneMetrics is what cAdvisor's own binary collects by default: every
// kind but its --disable_metrics default (advtcp, cpu_topology, cpuset,
// hugetlb, memory_numa, process, referenced_memory, resctrl, sched, tcp,
// udp; cAdvisor's docs/runtime_options.md). perf_event stays inert without
// a perf configuration, cpuLoad without the load reader.
func standaloneMetrics() container.MetricSet {
	s := container.MetricSet{}
	for k := range container.AllMetrics {
		s[k] = struct{}{}
	}
	for _, k := range []container.MetricKind{container.NetworkAdvancedTcpUsageMetrics, container.CPUTopologyMetrics, container.CPUSetMetrics,
		container.HugetlbUsageMetrics, container.MemoryNumaMetrics, container.ProcessMetrics, container.ReferencedMemoryMetrics,
		container.ResctrlMetrics, container.ProcessSchedulerMetrics, container.NetworkTcpUsageMetrics, container.NetworkUdpUsageMetrics} {
		delete(s, k)
	}
	return s
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address of the /metrics endpoint")
	addrFile := flag.String("addr-file", "", "write the listening address into this file once serving")
	hk := flag.Duration("hk-interval", defaultHousekeepingInterval, "housekeeping interval (cAdvisor's housekeeping_interval)")
	maxHK := flag.Duration("hk-max", maxHousekeepingInterval, "largest housekeeping interval (dynamic housekeeping)")
	dynamic := flag.Bool("hk-dynamic", true, "dynamic housekeeping (the kubelet: on)")
	// The kubelet's cgroupRoots (cmd/kubelet/app/server.go lines 748-766):
	// the node-allocatable root (/kubepods with the cgroupfs driver and
	// cgroups per QoS), plus the kubelet's own cgroup when it can tell it
	// (cpu and memory in the same cgroup, or --kubelet-cgroups) and
	// --runtime-cgroups / --system-cgroups when set. The benchmark passes
	// /kubepods alone: the kubelet's own cgroup would be one more container
	// here (or "/", every cgroup of the machine, where the harness runs
	// without CPU accounting).
	roots := flag.String("cgroup-roots", "/kubepods", "comma-separated raw cgroup prefixes cAdvisor tracks (the kubelet: its node-allocatable root, its own cgroup, runtime and system cgroups)")
	pressure := flag.Bool("pressure", true, "the kubelet's KubeletPSI feature gate (on by default since Kubernetes 1.34): PSI collected by housekeeping and exported")
	loadReader := flag.Bool("enable-load-reader", false, "cAdvisor's netlink CPU load reader, as cAdvisor's own binary wires it for --enable_load_reader (the kubelet never does)")
	// Standalone cAdvisor on a Docker or Podman host (its docker and
	// podman handlers name the containers; their sockets: cAdvisor's own
	// --docker and --podman flags): its default labels, name, image and
	// container_label_<key>. Its own binary's housekeeping defaults are
	// 1 s, dynamic up to 60 s: pass -hk-interval 1s -hk-max 60s, and
	// -cgroup-roots / (it tracks every cgroup).
	standalone := flag.Bool("standalone", false, "label series as standalone cAdvisor does (name, image, container_label_<key>) instead of as the kubelet does")
	metricSet := flag.String("metrics", "", "what housekeeping collects and /metrics exports: kubelet (the kubelet's set, -pressure as its gate) or standalone (cAdvisor's own binary's defaults); default: standalone with -standalone, else kubelet")
	flag.Parse()
	if *metricSet == "" {
		*metricSet = "kubelet"
		if *standalone {
			*metricSet = "standalone"
		}
	}
	var set container.MetricSet
	switch *metricSet {
	case "kubelet":
		set = kubeletMetrics(*pressure)
	case "standalone":
		set = standaloneMetrics()
	default:
		log.Fatalf("-metrics %q: neither kubelet nor standalone", *metricSet)
	}

	cflags := map[string]string{
		"housekeeping_interval":     hk.String(),
		"event_storage_event_limit": "default=0",
		"event_storage_age_limit":   "default=0",
	}
	if *loadReader {
		cflags["enable_load_reader"] = "true"
		manager.CpuLoadReaderFactory = newLoadReader
	}
	for name, v := range cflags {
		if err := flag.Set(name, v); err != nil {
			log.Fatalf("cAdvisor flag %s: %v", name, err)
		}
	}

	m, err := manager.New(memory.New(statsCacheDuration, nil), sysfs.NewRealSysFs(),
		manager.HousekeepingConfig{Interval: maxHK, AllowDynamic: dynamic},
		set, strings.Split(*roots, ","), nil, "", 0)
	if err != nil {
		log.Fatalf("cadvisor manager: %v", err)
	}
	if err := m.Start(); err != nil {
		log.Fatalf("cadvisor start: %v", err)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewPrometheusMachineCollector(m, set))
	labels := metrics.ContainerLabelsFunc(kubeletLabels)
	if *standalone {
		labels = metrics.DefaultContainerLabels
	}
	reg.MustRegister(metrics.NewPrometheusCollector(m, labels, set, clock.RealClock{},
		info.RequestOptions{IdType: info.TypeName, Count: 1, Recursive: true}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte(ln.Addr().String()), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	go func() { log.Fatal(http.Serve(ln, mux)) }()
	fmt.Fprintf(os.Stderr, "cadvisorpeer: serving /metrics on %s\n", ln.Addr())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	_ = m.Stop()
}

// kubeletLabels mirrors the kubelet's containerPrometheusLabelsFunc: id and
// name, image, and the container/pod/namespace names from the Kubernetes
// labels a runtime handler attaches (empty for raw cgroups, as here).
func kubeletLabels(c *info.ContainerInfo) map[string]string {
	var name, image string
	if len(c.Aliases) > 0 {
		name = c.Aliases[0]
	}
	image = c.Spec.Image
	return map[string]string{
		metrics.LabelID:    c.Name,
		metrics.LabelName:  name,
		metrics.LabelImage: image,
		"container":        c.Spec.Labels["io.kubernetes.container.name"],
		"pod":              c.Spec.Labels["io.kubernetes.pod.name"],
		"namespace":        c.Spec.Labels["io.kubernetes.pod.namespace"],
	}
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux && v2guest

package v2node

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/containerstats/containerstatsreceiver/internal/testing/sidebyside"
)

// What the kubelet serves with PodAndContainerStatsFromCRI off and on
// (KEP-2371), beside ours, for the same pods (TestFieldNote2's): which
// series each side gives, and for every quantity both give, that the
// values agree at the kubelet's sample time. The table goes to
// cristats.md (docs/kube.md quotes it).

// gateView is what the kubelet served under one setting of the gate.
type gateView struct {
	gate               string // "off", "on"
	cadvisor, resource string // /metrics/cadvisor, /metrics/resource
	// cadvisorTook is how long /metrics/cadvisor took: with the gate on,
	// containerd stamps each container's figures after reading them (the
	// shim's Metrics call, up to a second each on the emulated guest), so
	// such a figure was read within that long before its time.
	cadvisorTook time.Duration
	summary      statsapi.Summary
}

// gateRun is the comparison: TestFieldNote2's containers and scrapes.
type gateRun struct {
	t       *testing.T
	runtime string // "containerd", "cri-o": which has a row asserts
	prefix  string // of the result files
	ctrs    map[string][2]string
	running func() map[string][2]string
	scrape  func() // appends one scrape to ours
	ours    *samples
	views   []gateView
}

// probe reads one kubelet figure: its value in our unit, its sample time,
// and how wide that time is (the Summary API's whole seconds).
type probe struct {
	name string
	get  func(v *gateView) (val float64, at time.Time, width time.Duration, ok bool)
	// whole: the figure is truncated to whole units under this view (the
	// CRI metrics are integers: containerd divides µs by 10^6 for its
	// seconds counters).
	whole func(v *gateView) bool
}

// gateRow is a quantity of one entity. A nil probe: the endpoint has no
// such series at all (whatever the gate); ours nil: we have none.
type gateRow struct {
	family, entity              string
	cadvisor, resource, summary *probe
	// has is which endpoint gives the figure under which gate, asserted:
	// six characters for /metrics/cadvisor gate off, on,
	// /metrics/resource off, on, /stats/summary off, on; '+' present,
	// '-' absent, '.' no probe (the endpoint has no such series at all),
	// '~' present, or absent where the kubelet's cAdvisor has not found
	// the container's scope yet or left it unnamed (the scope there with
	// an empty name: 'u' in the table); view waits for it first.
	has string
	// stale, set for a runtime, is why that runtime's kubelet's
	// /metrics/cadvisor figure of the row lags the kernel: shown, not
	// compared.
	stale      map[string]string
	ours       []string // our key; a trailing * takes the first key with that prefix
	unit       string
	tol        func(kubelet float64) float64
	oursAbsent string // why ours gives no point (then asserted absent)
	noFloor    string // sidebyside.Row.NoFloor: why the figure may be below 4× the tolerance
	oursIf     func() (bool, string)
}

func cad(metric string, labels map[string]string) *probe { return expoProbe(metric, labels, false, 1) }

func res(metric string, labels map[string]string) *probe { return expoProbe(metric, labels, true, 1) }

func expoProbe(metric string, labels map[string]string, resource bool, scale float64) *probe {
	return &probe{name: "`" + metric + "`", get: func(v *gateView) (float64, time.Time, time.Duration, bool) {
		text := v.cadvisor
		if resource {
			text = v.resource
		}
		val, at, ok := expoSample(text, metric, labels)
		if !resource && v.gate == "on" {
			return val * scale, at.Add(-v.cadvisorTook), v.cadvisorTook, ok
		}
		return val * scale, at, 0, ok
	}, whole: func(v *gateView) bool {
		return !resource && v.gate == "on" && strings.HasSuffix(metric, "_seconds_total")
	}}
}

// sum reads /stats/summary; fn returns the value in our unit and its time.
func sum(name string, fn func(s *statsapi.Summary) (float64, metav1.Time, bool)) *probe {
	return sumG(name, func(s *statsapi.Summary, _ string) (float64, metav1.Time, bool) { return fn(s) })
}

// sumG is sum where the figure's unit depends on the gate.
func sumG(name string, fn func(s *statsapi.Summary, gate string) (float64, metav1.Time, bool)) *probe {
	if !strings.Contains(name, "`") {
		name = "`" + name + "`"
	}
	return &probe{name: name, get: func(v *gateView) (float64, time.Time, time.Duration, bool) {
		val, at, ok := fn(&v.summary, v.gate)
		return val, at.Time, time.Second, ok
	}}
}

// psiProbe is a container's PSI total in /stats/summary, in seconds.
// The API documents nanoseconds, which the CRI path gives (containerd
// multiplies the kernel's µs by 1000): the gate on. With the gate off the
// kubelet takes a container's stats from cAdvisor where cAdvisor has the
// container (the kernel's µs copied as they are) and from CRI (ns) where
// it does not yet: the view's /metrics/cadvisor tells which, so the unit
// is known, never matched.
func psiProbe(kind, ctr string, fn func(cs *statsapi.ContainerStats) (*statsapi.PSIStats, metav1.Time, bool)) *probe {
	return &probe{name: "`" + kind + ".psi.some.total` (µs from cAdvisor, ns from CRI)", get: func(v *gateView) (float64, time.Time, time.Duration, bool) {
		cs := summaryCtr(&v.summary, ctr)
		if cs == nil {
			return 0, time.Time{}, 0, false
		}
		p, at, ok := fn(cs)
		if !ok || p == nil {
			return 0, time.Time{}, 0, false
		}
		val, t, ok := psiSome(p, at, psiUnit(v, ctr))
		return val, t.Time, time.Second, ok
	}}
}

// psiUnit is the unit of a container's PSI totals in the view's
// /stats/summary: ns with the gate on; with it off µs where cAdvisor
// serves the container's series, ns where it does not.
func psiUnit(v *gateView, ctr string) float64 {
	if v.gate == "on" {
		return 1e-9
	}
	if _, _, ok := expoSample(v.cadvisor, "container_pressure_cpu_waiting_seconds_total", ctrLabels(ctr)); ok {
		return 1e-6
	}
	return 1e-9
}

// named is p with the table's name for it.
func named(p *probe, name string) *probe { p.name = name; return p }

func summaryPod(s *statsapi.Summary, name string) *statsapi.PodStats {
	for i := range s.Pods {
		if p := &s.Pods[i]; p.PodRef.Name == name+"-"+nodeName && p.PodRef.Namespace == "fieldnote" {
			return p
		}
	}
	return nil
}

func summaryCtr(s *statsapi.Summary, name string) *statsapi.ContainerStats {
	if p := summaryPod(s, name); p != nil {
		for i := range p.Containers {
			if p.Containers[i].Name == name {
				return &p.Containers[i]
			}
		}
	}
	return nil
}

func u64s(p *uint64, scale float64) (float64, bool) {
	if p == nil {
		return 0, false
	}
	return float64(*p) * scale, true
}

// cpuOf, memOf, ... pick a stats struct's figure; ok false when absent.
func cpuTime(c *statsapi.CPUStats) (float64, metav1.Time, bool) {
	if c == nil {
		return 0, metav1.Time{}, false
	}
	v, ok := u64s(c.UsageCoreNanoSeconds, 1e-9)
	return v, c.Time, ok
}

// psiSome is a PSI total in seconds from the Summary API's figure in unit
// seconds per unit: the API documents nanoseconds, which the CRI path
// gives (containerd multiplies the kernel's µs by 1000), but a figure the
// kubelet takes from cAdvisor (the node's; containers' and pods' with the
// gate off) is the kernel's µs copied as they are.
func psiSome(p *statsapi.PSIStats, at metav1.Time, unit float64) (float64, metav1.Time, bool) {
	if p == nil {
		return 0, at, false
	}
	return float64(p.Some.Total) * unit, at, true
}

// gateCtrs are the containers (and their pods) compared by every quantity
// each of them has far above its tolerance: their figures differ by more
// than 4× the row's tolerance (TestFieldNote2's workloads).
var gateCtrs = []string{"burner", "mixed", "cache"}

// rows are the gate rows, with which endpoint gives each under which
// gate on CRI-O where it differs from containerd (hasCRIO).
func (g *gateRun) rows() []gateRow {
	rs := g.rowsContainerd()
	if g.runtime == "cri-o" {
		for i := range rs {
			if h, ok := hasCRIO[rs[i].family+", "+rs[i].entity]; ok {
				rs[i].has = h
			}
		}
	}
	return rs
}

// hasCRIO is gateRow.has on CRI-O 1.34 (family, entity) with its default
// configuration, seen for real in the v2 guest (TestFieldNote2CRIO,
// 2026-12-05). Where it differs from containerd: with the gate on,
// /metrics/cadvisor has no container or pod series (CRI-O answers
// ListPodSandboxMetrics only for the families its included_pod_metrics
// names: none by default); /stats/summary has no container PSI (CRI-O's
// CRI stats carry none; the node's comes from cAdvisor); a pod's network
// is in /stats/summary with the gate on only (drop_infra_ctr: no infra
// container whose network namespace cAdvisor would read), a host-network
// pod's too (the node's interfaces); the writable layer is in
// /metrics/cadvisor with the gate off (containerd: with it on).
var hasCRIO = map[string]string{
	"CPU time, burner container":              "+-++++",
	"CPU time, burner pod":                    "+-++++",
	"memory working set, burner container":    "+-++++",
	"memory working set, burner pod":          "+-++++",
	"memory usage, burner container":          "+-..++",
	"memory RSS (anon), burner container":     "+-..++",
	"CPU time, mixed container":               "+-++++",
	"CPU time, mixed pod":                     "+-++++",
	"memory working set, mixed container":     "+-++++",
	"memory working set, mixed pod":           "+-++++",
	"memory usage, mixed container":           "+-..++",
	"memory RSS (anon), mixed container":      "+-..++",
	"CPU time, cache container":               "+-++++",
	"CPU time, cache pod":                     "+-++++",
	"memory working set, cache container":     "+-++++",
	"memory working set, cache pod":           "+-++++",
	"memory usage, cache container":           "+-..++",
	"memory RSS (anon), cache container":      "+-..++",
	"memory page cache, mixed container":      "+-....",
	"memory page cache, cache container":      "+-....",
	"CPU time, node":                          "+-++++",
	"memory working set, node":                "+-++++",
	"PSI cpu some, burner container":          "+-..+-",
	"PSI memory some, pressure container":     "+-..+-",
	"PSI io some, pressure container":         "+-..+-",
	"PSI cpu some, node":                      "+-..++",
	"hugetlb usage 2 MB, burner container":    "--....",
	"hugetlb limit 2 MB, burner container":    "--....",
	"hugetlb limit 2 MB, burner pod":          "......",
	"CPU quota (limit), burner container":     "+-....",
	"CFS period, burner container":            "+-....",
	"CFS periods, burner container":           "+-....",
	"CFS throttled periods, burner container": "+-....",
	"CFS throttled time, burner container":    "+-....",
	"tasks (pids.current), burner container":  "+-....",
	"processes, burner pod":                   "+-..++",
	"network receive bytes, net pod eth0":     "--..-+",
	"network receive bytes, host-network pod": "--..-+",
	"writable layer usage, cache container":   "+-..++",
	"node filesystem capacity, node":          "+-..++",
}

// rowsContainerd are the gate rows as the kubelet on containerd gives
// them.
func (g *gateRun) rowsContainerd() []gateRow {
	c, p := ctrLabels, podLabels
	pod := func(name string) map[string]string { l := p(name); l["container"] = ""; return l }
	node := map[string]string{"id": "/"}
	iface := func(l map[string]string, name string) map[string]string { l["interface"] = name; return l }
	mem := func(b float64) func(float64) float64 { return func(float64) float64 { return b } }
	byCtr := func(name string, fn func(*statsapi.ContainerStats) (float64, metav1.Time, bool)) func(*statsapi.Summary) (float64, metav1.Time, bool) {
		return func(s *statsapi.Summary) (float64, metav1.Time, bool) {
			if cs := summaryCtr(s, name); cs != nil {
				return fn(cs)
			}
			return 0, metav1.Time{}, false
		}
	}
	byPod := func(name string, fn func(*statsapi.PodStats) (float64, metav1.Time, bool)) func(*statsapi.Summary) (float64, metav1.Time, bool) {
		return func(s *statsapi.Summary) (float64, metav1.Time, bool) {
			if ps := summaryPod(s, name); ps != nil {
				return fn(ps)
			}
			return 0, metav1.Time{}, false
		}
	}
	ws := func(m *statsapi.MemoryStats) (float64, metav1.Time, bool) {
		if m == nil {
			return 0, metav1.Time{}, false
		}
		v, ok := u64s(m.WorkingSetBytes, 1)
		return v, m.Time, ok
	}
	memOf := func(pick func(m *statsapi.MemoryStats) *uint64) func(cs *statsapi.ContainerStats) (float64, metav1.Time, bool) {
		return func(cs *statsapi.ContainerStats) (float64, metav1.Time, bool) {
			if cs.Memory == nil {
				return 0, metav1.Time{}, false
			}
			v, ok := u64s(pick(cs.Memory), 1)
			return v, cs.Memory.Time, ok
		}
	}
	burnerScope := func() string { return cgroupOf(g.ctrs["burner"][0]) }
	var rows []gateRow
	// CPU time and memory of each compared container and pod: every
	// endpoint has the containers under either gate, /metrics/cadvisor
	// loses the pods with the gate on. The CPU time is bounded by our
	// scrapes around the kubelet's read (samples.bounds): 20 ms + 1 %
	// for every container and pod (the pod's was 100 ms + 1 % when ours were
	// interpolated at the kubelet's stamp).
	for _, n := range gateCtrs {
		// The kubelet's cAdvisor had the BestEffort cache container's scope
		// with no labels at all (no container, pod, image or name; its pod
		// slice named) in two runs of three, and in a later run not at all
		// after a minute of views (it finds a scope made just after its
		// slice at its next global housekeeping), so that
		// /metrics/cadvisor had none of its figures with the gate off:
		// '~'. The others were named in every run.
		cadOff := "+"
		if n == "cache" {
			cadOff = "~"
		}
		rows = append(rows, gateRow{
			family: "CPU time", entity: n + " container", unit: "s", tol: cpuTol, has: cadOff + "+++++",
			cadvisor: cad("container_cpu_usage_seconds_total", c(n)), resource: res("container_cpu_usage_seconds_total", c(n)),
			summary: sum("cpu.usageCoreNanoSeconds", byCtr(n, func(cs *statsapi.ContainerStats) (float64, metav1.Time, bool) { return cpuTime(cs.CPU) })),
			ours:    []string{"c:" + n + "|cpu"},
		}, gateRow{
			family: "CPU time", entity: n + " pod", unit: "s", tol: cpuTol, has: "+-++++",
			cadvisor: cad("container_cpu_usage_seconds_total", pod(n)), resource: res("pod_cpu_usage_seconds_total", p(n)),
			summary: sum("cpu.usageCoreNanoSeconds", byPod(n, func(ps *statsapi.PodStats) (float64, metav1.Time, bool) { return cpuTime(ps.CPU) })),
			ours:    []string{"p:" + n + "|k8s.pod.cpu.time"},
		}, gateRow{
			family: "memory working set", entity: n + " container", unit: "MiB", tol: mem(256 << 10), has: cadOff + "+++++",
			cadvisor: cad("container_memory_working_set_bytes", c(n)), resource: res("container_memory_working_set_bytes", c(n)),
			summary: sum("memory.workingSetBytes", byCtr(n, func(cs *statsapi.ContainerStats) (float64, metav1.Time, bool) { return ws(cs.Memory) })),
			ours:    []string{"c:" + n + "|container.memory.working_set"},
		}, gateRow{
			family: "memory working set", entity: n + " pod", unit: "MiB", tol: mem(1 << 20), has: "+-++++",
			cadvisor: cad("container_memory_working_set_bytes", pod(n)), resource: res("pod_memory_working_set_bytes", p(n)),
			summary: sum("memory.workingSetBytes", byPod(n, func(ps *statsapi.PodStats) (float64, metav1.Time, bool) { return ws(ps.Memory) })),
			ours:    []string{"p:" + n + "|k8s.pod.memory.working_set"},
		}, gateRow{
			family: "memory usage", entity: n + " container", unit: "MiB", tol: mem(256 << 10), has: cadOff + "+..++",
			cadvisor: cad("container_memory_usage_bytes", c(n)),
			summary:  sum("memory.usageBytes", byCtr(n, memOf(func(m *statsapi.MemoryStats) *uint64 { return m.UsageBytes }))),
			ours:     []string{"c:" + n + "|container.memory.usage"},
		}, gateRow{
			family: "memory RSS (anon)", entity: n + " container", unit: "MiB", tol: mem(256 << 10), has: cadOff + "+..++",
			cadvisor: cad("container_memory_rss", c(n)),
			summary:  sum("memory.rssBytes", byCtr(n, memOf(func(m *statsapi.MemoryStats) *uint64 { return m.RSSBytes }))),
			ours:     []string{"c:" + n + "|container.memory.rss"},
		})
	}
	// The burner holds no page cache (below the floor): mixed and cache.
	for _, n := range []string{"mixed", "cache"} {
		has := "++...."
		if n == "cache" {
			has = "~+...." // as above
		}
		rows = append(rows, gateRow{
			family: "memory page cache", entity: n + " container", unit: "MiB", tol: mem(256 << 10), has: has,
			cadvisor: cad("container_memory_cache", c(n)),
			ours:     []string{"c:" + n + "|container.memory.cache"},
		})
	}
	return append(rows, []gateRow{
		{
			family: "CPU time", entity: "node", unit: "s", tol: func(v float64) float64 { return 0.25 + 0.01*v }, has: "+-++++",
			cadvisor: cad("container_cpu_usage_seconds_total", node), resource: res("node_cpu_usage_seconds_total", nil),
			summary: sum("node.cpu.usageCoreNanoSeconds", func(s *statsapi.Summary) (float64, metav1.Time, bool) { return cpuTime(s.Node.CPU) }),
			ours:    []string{"n|k8s.node.cpu.time"},
		},
		// The node's working set moves with every process of the node (the
		// kubelet, just restarted, and our test): 5 %.
		{
			family: "memory working set", entity: "node", unit: "MiB", tol: func(v float64) float64 { return 0.05 * v }, has: "+-++++",
			cadvisor: cad("container_memory_working_set_bytes", node), resource: res("node_memory_working_set_bytes", nil),
			summary: sum("node.memory.workingSetBytes", func(s *statsapi.Summary) (float64, metav1.Time, bool) { return ws(s.Node.Memory) }),
			ours:    []string{"n|k8s.node.memory.working_set"},
		},
		// PSI: the burner waits for its CPU quota; the pressure container
		// wrote and read back 128 MiB under a 16 MiB limit (reclaim and the
		// disk), then sleeps: its totals stand still at tens of tolerances.
		{
			family: "PSI cpu some", entity: "burner container", unit: "s", tol: cpuTol, has: "+-..++",
			cadvisor: cad("container_pressure_cpu_waiting_seconds_total", c("burner")),
			summary: psiProbe("cpu", "burner", func(cs *statsapi.ContainerStats) (*statsapi.PSIStats, metav1.Time, bool) {
				if cs.CPU == nil {
					return nil, metav1.Time{}, false
				}
				return cs.CPU.PSI, cs.CPU.Time, true
			}),
			ours: []string{"c:burner|container.pressure.stall_time/cpu/some"},
		},
		{
			family: "PSI memory some", entity: "pressure container", unit: "s", tol: cpuTol, has: "+-..++",
			cadvisor: cad("container_pressure_memory_waiting_seconds_total", c("pressure")),
			summary: psiProbe("memory", "pressure", func(cs *statsapi.ContainerStats) (*statsapi.PSIStats, metav1.Time, bool) {
				if cs.Memory == nil {
					return nil, metav1.Time{}, false
				}
				return cs.Memory.PSI, cs.Memory.Time, true
			}),
			ours: []string{"c:pressure|container.pressure.stall_time/memory/some"},
		},
		{
			family: "PSI io some", entity: "pressure container", unit: "s", tol: cpuTol, has: "+-..++",
			// The disk is the host's page cache: 0.812 s on a loaded machine,
			// 0.016 s on a quiet one (below 4× 20 ms).
			noFloor:  "the io stall depends on the host's disk: 0.016 to 0.812 s seen",
			cadvisor: cad("container_pressure_io_waiting_seconds_total", c("pressure")),
			summary: psiProbe("io", "pressure", func(cs *statsapi.ContainerStats) (*statsapi.PSIStats, metav1.Time, bool) {
				if cs.IO == nil {
					return nil, metav1.Time{}, false
				}
				return cs.IO.PSI, cs.IO.Time, true
			}),
			ours: []string{"c:pressure|container.pressure.stall_time/io/some"},
		},
		// The node's: from cAdvisor's root cgroup under either gate, the
		// kernel's µs as they are (not the documented ns).
		{
			family: "PSI cpu some", entity: "node", unit: "s", tol: cpuTol, has: "+-..++",
			cadvisor: cad("container_pressure_cpu_waiting_seconds_total", node),
			summary: named(sum("", func(s *statsapi.Summary) (float64, metav1.Time, bool) {
				if s.Node.CPU == nil {
					return 0, metav1.Time{}, false
				}
				return psiSome(s.Node.CPU.PSI, s.Node.CPU.Time, 1e-6)
			}), "`node.cpu.psi.some.total` (µs, not the documented ns)"),
			ours: []string{"n|k8s.node.pressure.stall_time/cpu/some"},
		},
		{
			family: "hugetlb usage 2 MB", entity: "burner container", unit: "MiB", tol: mem(0), has: "--....",
			cadvisor: cad("container_hugetlb_usage_bytes", c("burner")),
			ours:     []string{"c:burner|container.memory.hugetlb.usage/2MB"},
		},
		{
			family: "hugetlb limit 2 MB", entity: "burner container", unit: "MiB", tol: mem(0), has: "--....",
			cadvisor: cad("container_hugetlb_max_usage_bytes", c("burner")),
			ours:     []string{"c:burner|container.memory.hugetlb.limit/2MB"},
			oursIf: func() (bool, string) {
				b, err := os.ReadFile(filepath.Join(burnerScope(), "hugetlb.2MB.max"))
				v := strings.TrimSpace(string(b))
				return err == nil && v != "max", "hugetlb.2MB.max " + v
			},
		},
		{
			family: "hugetlb limit 2 MB", entity: "burner pod", unit: "MiB", tol: mem(0), has: "......",
			ours: []string{"p:burner|k8s.pod.memory.hugetlb.limit/2MB"},
			oursIf: func() (bool, string) {
				b, err := os.ReadFile(filepath.Join(filepath.Dir(burnerScope()), "hugetlb.2MB.max"))
				v := strings.TrimSpace(string(b))
				return err == nil && v != "max", "hugetlb.2MB.max " + v
			},
		},
		{
			family: "CPU quota (limit)", entity: "burner container", unit: "cores", tol: mem(1e-9), has: "+-....",
			cadvisor: quotaProbe(c("burner")),
			ours:     []string{"c:burner|container.cpu.limit"},
		},
		{
			family: "CFS period", entity: "burner container", unit: " µs", tol: mem(0), has: "++....",
			cadvisor:   cad("container_spec_cpu_period", c("burner")),
			oursAbsent: "folded into container.cpu.limit (quota / period)",
		},
		{
			family: "CFS periods", entity: "burner container", unit: "", tol: func(v float64) float64 { return 3 + 0.01*v }, has: "++....",
			cadvisor: cad("container_cpu_cfs_periods_total", c("burner")),
			ours:     []string{"c:burner|container.cpu.throttling.periods"},
		},
		{
			family: "CFS throttled periods", entity: "burner container", unit: "", tol: func(v float64) float64 { return 3 + 0.01*v }, has: "++....",
			cadvisor: cad("container_cpu_cfs_throttled_periods_total", c("burner")),
			ours:     []string{"c:burner|container.cpu.throttling.throttled_periods"},
		},
		// Bounded by our scrapes around cAdvisor's read (it stamps after
		// reading): 20 ms + 1 %, as CPU time (100 ms + 1 % while ours were
		// interpolated at the stamp: a CI run's 2.693 s against 2.561 s).
		{
			family: "CFS throttled time", entity: "burner container", unit: "s", tol: cpuTol, has: "++....",
			cadvisor: cad("container_cpu_cfs_throttled_seconds_total", c("burner")),
			ours:     []string{"c:burner|container.cpu.throttling.throttled_time"},
		},
		// Threads come and go in the Go workload: bounded by our scrapes, exact.
		{
			family: "tasks (pids.current)", entity: "burner container", unit: "", tol: mem(0), has: "++....",
			cadvisor: cad("container_threads", c("burner")),
			ours:     []string{"c:burner|container.pids.count"},
		},
		{
			family: "processes", entity: "burner pod", unit: "", tol: mem(0), has: "++..++",
			cadvisor: cad("container_processes", c("burner")),
			summary: sum("process_stats.process_count", byPod("burner", func(ps *statsapi.PodStats) (float64, metav1.Time, bool) {
				if ps.ProcessStats == nil {
					return 0, metav1.Time{}, false
				}
				v, ok := u64s(ps.ProcessStats.ProcessCount, 1)
				return v, metav1.Time{}, ok
			})),
			oursAbsent: "tasks (threads) instead: container.pids.count, k8s.pod.pids.count",
		},
		// Ten pings of 1000 bytes, ended before any comparison: 2 KiB for
		// the neighbours' broadcasts (IPv6 and ARP) bounded counters miss.
		{
			family: "network receive bytes", entity: "net pod eth0", unit: " B", tol: mem(2048), has: "++..++",
			cadvisor: cad("container_network_receive_bytes_total", iface(p(netPod), "eth0")),
			summary: sum("network.rxBytes", byPod(netPod, func(ps *statsapi.PodStats) (float64, metav1.Time, bool) {
				if ps.Network == nil {
					return 0, metav1.Time{}, false
				}
				for _, i := range ps.Network.Interfaces {
					if i.Name == "eth0" {
						v, ok := u64s(i.RxBytes, 1)
						return v, ps.Network.Time, ok
					}
				}
				return 0, metav1.Time{}, false
			})),
			ours: []string{"p:" + netPod + "|k8s.pod.network.io/eth0/receive"},
		},
		{
			family: "network receive bytes", entity: "host-network pod", unit: " B", tol: mem(4096), has: "+-..--",
			cadvisor: cad("container_network_receive_bytes_total", p("mixed")),
			summary: sum("network.rxBytes", byPod("mixed", func(ps *statsapi.PodStats) (float64, metav1.Time, bool) {
				if ps.Network == nil || ps.Network.RxBytes == nil {
					return 0, metav1.Time{}, false
				}
				return float64(*ps.Network.RxBytes), ps.Network.Time, true
			})),
			oursAbsent: "the node's interfaces: no pod points",
		},
		{
			family: "writable layer usage", entity: "cache container", unit: "MiB", tol: mem(64 << 10), has: "-+..++",
			// cAdvisor's CRI-O handler measures the layer itself, at
			// discovery and then about once a minute: a run saw 8 KiB
			// (the empty layer) while it held 40 MiB.
			stale:    map[string]string{"cri-o": "cAdvisor measures CRI-O's writable layer itself, about once a minute: seen 8 KiB while it held 40 MiB"},
			cadvisor: cad("container_fs_usage_bytes", c("cache")),
			summary: sum("rootfs.usedBytes", byCtr("cache", func(cs *statsapi.ContainerStats) (float64, metav1.Time, bool) {
				if cs.Rootfs == nil {
					return 0, metav1.Time{}, false
				}
				v, ok := u64s(cs.Rootfs.UsedBytes, 1)
				return v, cs.Rootfs.Time, ok
			})),
			ours: []string{"c:cache|container.filesystem.usage"},
		},
		{
			family: "node filesystem capacity", entity: "node", unit: "MiB", tol: func(v float64) float64 { return 0.01 * v }, has: "+-..++",
			cadvisor: cad("container_fs_limit_bytes", map[string]string{"id": "/", "device": "/dev/vda"}), // the guest's root
			summary: sum("node.fs.capacityBytes", func(s *statsapi.Summary) (float64, metav1.Time, bool) {
				if s.Node.Fs == nil {
					return 0, metav1.Time{}, false
				}
				v, ok := u64s(s.Node.Fs.CapacityBytes, 1)
				return v, s.Node.Fs.Time, ok
			}),
			ours: []string{"n|k8s.node.filesystem.capacity*"},
		},
	}...)
}

// quotaProbe is cAdvisor's container_spec_cpu_quota over
// container_spec_cpu_period: the limit in cores.
func quotaProbe(labels map[string]string) *probe {
	return &probe{name: "`container_spec_cpu_quota` / `container_spec_cpu_period`", get: func(v *gateView) (float64, time.Time, time.Duration, bool) {
		q, at, ok := expoSample(v.cadvisor, "container_spec_cpu_quota", labels)
		per, _, ok2 := expoSample(v.cadvisor, "container_spec_cpu_period", labels)
		if !ok || !ok2 || per == 0 {
			return 0, at, 0, false
		}
		return q / per, at, 0, true
	}}
}

// oursKey is the key of ours that the row names in scrape sm ("" if none).
func oursKey(r gateRow, sm sample) string {
	for _, k := range r.ours {
		if p, ok := strings.CutSuffix(k, "*"); ok {
			var keys []string
			for have := range sm.values {
				if strings.HasPrefix(have, p) {
					keys = append(keys, have)
				}
			}
			sort.Strings(keys)
			if len(keys) > 0 {
				return keys[0]
			}
			continue
		}
		if _, ok := sm.values[k]; ok {
			return k
		}
	}
	return ""
}

// view fetches the kubelet's three endpoints and scrapes once more, until
// every timed kubelet figure of the rows lies between our scrapes (the
// caller has scraped every 2 s for a while before: the kubelet's cAdvisor
// samples are up to 15 s old) and every figure a row says the endpoint
// has under the gate is there.
func (g *gateRun) view(gate string) gateView {
	t := g.t
	var missing, absent []string
	var last gateView
	var lastSummary string
	for range 15 {
		v := gateView{gate: gate}
		var err error
		t0 := time.Now()
		v.cadvisor, err = httpGet(kubeletRO + "/metrics/cadvisor")
		require.NoError(t, err)
		t1 := time.Now()
		v.cadvisorTook = t1.Sub(t0)
		v.resource, err = httpGet(kubeletRO + "/metrics/resource")
		require.NoError(t, err)
		t2 := time.Now()
		s, err := httpGet(kubeletRO + "/stats/summary")
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal([]byte(s), &v.summary))
		t3 := time.Now()
		// A Summary figure's time is a whole second: the scrape after it
		// must follow that second's end.
		time.Sleep(time.Second)
		g.scrape()
		t.Logf("gate %s: fetched /metrics/cadvisor in %s, /metrics/resource in %s, /stats/summary in %s; our scrape took %s",
			gate, t1.Sub(t0).Round(time.Millisecond), t2.Sub(t1).Round(time.Millisecond), t3.Sub(t2).Round(time.Millisecond), (time.Since(t3) - time.Second).Round(time.Millisecond))
		missing, absent = missing[:0], absent[:0]
		gi := map[string]int{"off": 0, "on": 1}[gate]
		for _, r := range g.rows() {
			for e, pr := range []*probe{r.cadvisor, r.resource, r.summary} {
				if pr == nil {
					continue
				}
				_, at, w, ok := pr.get(&v)
				if ok && timed(at) && !g.ours.bracket(at, at.Add(w)) {
					missing = append(missing, fmt.Sprintf("%s %s %s at %s", r.family, r.entity, pr.name, at.Format(time.StampMilli)))
				}
				// A figure the row says this endpoint has under this gate
				// and that is not there yet: the kubelet's cAdvisor finds
				// the containers again after the kubelet's restart (on a
				// loaded host, seconds after the static pods are
				// reported). compare asserts presence on the view kept.
				if !ok && 2*e+gi < len(r.has) && (r.has[2*e+gi] == '+' || r.has[2*e+gi] == '~' && (pr != r.cadvisor || !unnamed(v.cadvisor, r.entity, g.ctrs))) {
					absent = append(absent, fmt.Sprintf("%s %s %s", r.family, r.entity, pr.name))
				}
			}
		}
		last, lastSummary = v, s
		if len(missing) == 0 && len(absent) == 0 {
			break
		}
		time.Sleep(2 * time.Second)
	}
	require.Empty(t, missing, "gate %s: kubelet figures outside our scrapes", gate)
	if len(absent) > 0 {
		t.Logf("gate %s: figures the rows expect and the kubelet never gave (compare fails on them): %s", gate, strings.Join(absent, "; "))
	}
	writeResult(t, g.prefix+"metrics-cadvisor-gate-"+gate+".txt", []byte(last.cadvisor))
	writeResult(t, g.prefix+"stats-summary-gate-"+gate+".json", []byte(lastSummary))
	require.Equal(t, g.ctrs, g.running(), "the kubelet replaced a container")
	return last
}

// compare writes the table and asserts: ours present where the row says
// we give it (absent where it says we do not); which endpoint has each
// row under which gate (the row's has); and, per endpoint and gate, the
// side-by-side rule (sidebyside.Require): every kubelet figure that has
// ours beside it lies within the row's tolerance of ours bounded by our
// scrapes around its read, every other entity's figure of the quantity
// fails that comparison, each figure is above 4× its tolerance, and the
// entities are more than 4× apart.
func (g *gateRun) compare() {
	t := g.t
	ours := *g.ours
	lastScrape := ours[len(ours)-1]
	endpoints := []string{"/metrics/cadvisor", "/metrics/resource", "/stats/summary"}
	var tb strings.Builder
	fmt.Fprintf(&tb, "| quantity | entity | kubelet series | `/metrics/cadvisor` gate off | gate on | `/metrics/resource` gate off | gate on | `/stats/summary` gate off | gate on | ours |\n")
	fmt.Fprintf(&tb, "|---|---|---|---|---|---|---|---|---|---|\n")
	byView := make([][]sidebyside.Row, 2*len(endpoints))
	want := make([]int, 2*len(endpoints))
	var presence []string
	var onlyOurs, notOn, notCadOn []string
	for _, r := range g.rows() {
		key := oursKey(r, lastScrape)
		wantOurs := r.oursAbsent == ""
		why := ""
		if r.oursIf != nil {
			wantOurs, why = r.oursIf()
		}
		switch {
		case r.ours == nil:
		case wantOurs:
			assert.NotEmpty(t, key, "%s, %s: ours has no %v (%s)", r.family, r.entity, r.ours, why)
		default:
			assert.Empty(t, key, "%s, %s: ours has %s (%s%s)", r.family, r.entity, key, r.oursAbsent, why)
		}
		quantity := r.family + " (" + r.entity[strings.LastIndexByte(r.entity, ' ')+1:] + ")"
		if r.entity == "node" {
			quantity = r.family + " (node)"
		}
		var names, cells []string
		var has strings.Builder
		kubeletHas, onHas, cadOnHas := false, false, false
		for e, pr := range []*probe{r.cadvisor, r.resource, r.summary} {
			if pr == nil {
				cells = append(cells, "—", "—")
				has.WriteString("..")
				continue
			}
			names = append(names, pr.name)
			for i := range g.views {
				v := &g.views[i]
				val, at, w, ok := pr.get(v)
				if !ok {
					if pr == r.cadvisor && unnamed(v.cadvisor, r.entity, g.ctrs) {
						cells = append(cells, "absent (unnamed)")
						has.WriteByte('u')
						continue
					}
					cells = append(cells, "absent")
					has.WriteByte('-')
					continue
				}
				has.WriteByte('+')
				kubeletHas = true
				if v.gate == "on" {
					onHas = true
					cadOnHas = cadOnHas || pr == r.cadvisor
				}
				cell := fmtValue(val, r.unit)
				if lag := r.stale[g.runtime]; lag != "" && pr == r.cadvisor && key != "" {
					cell += fmt.Sprintf(" (not compared: %s; ours %s)", lag, fmtValue(ours.last(key), r.unit))
					cells = append(cells, cell)
					continue
				}
				if key != "" {
					lo, hi := ours.last(key), ours.last(key)
					if timed(at) {
						var okb bool
						lo, hi, okb = ours.bounds(key, at, at.Add(w))
						require.True(t, okb, "%s, %s, %s gate %s: ours around %s", r.family, r.entity, pr.name, v.gate, at.Format(time.StampMilli))
					}
					row := boundedRow(quantity, r.entity, val, lo, hi, r.tol(val), sbUnit(r.unit))
					row.NoFloor = r.noFloor
					if pr.whole != nil && pr.whole(v) {
						// containerd's integer seconds: ours truncated.
						tol := r.tol(val)
						row.Pass = func(k float64) bool { return k >= math.Floor(lo-tol) && k <= math.Floor(hi+tol) }
						row.Shown += " (truncated)"
						cell += " (whole)"
					}
					byView[2*e+i] = append(byView[2*e+i], row)
					if !row.Pass(val) {
						cell += " ✗"
					}
				}
				cells = append(cells, cell)
			}
		}
		assert.True(t, presenceMatches(r.has, has.String()), "%s, %s: want %s, got %s", r.family, r.entity, r.has, has.String())
		assert.Equal(t, len(r.has), has.Len(), "%s, %s: which endpoint gives it under which gate (/metrics/cadvisor off, on, /metrics/resource off, on, /stats/summary off, on)", r.family, r.entity)
		presence = append(presence, fmt.Sprintf("| %s | %s | %s |", r.family, r.entity, strings.Join(strings.Split(has.String(), ""), " | ")))
		if key != "" {
			for i, c := range r.has {
				if c == '+' && (i >= 2 || r.stale[g.runtime] == "") { // a stale cAdvisor figure is not compared
					want[i]++
				}
			}
		}
		oursCell := "—"
		switch {
		case key != "":
			oursCell = fmt.Sprintf("`%s` %s", key[strings.IndexByte(key, '|')+1:], fmtValue(ours.last(key), r.unit))
		case r.oursAbsent != "":
			oursCell = "— (" + r.oursAbsent + ")"
		case why != "":
			oursCell = "absent (" + why + ")"
		}
		if key != "" && !kubeletHas {
			onlyOurs = append(onlyOurs, r.family+", "+r.entity)
		}
		if key != "" && !onHas {
			notOn = append(notOn, r.family+", "+r.entity)
		}
		if key != "" && !cadOnHas {
			notCadOn = append(notCadOn, r.family+", "+r.entity)
		}
		fmt.Fprintf(&tb, "| %s | %s | %s | %s | %s |\n", r.family, r.entity, strings.Join(names, ", "), strings.Join(cells, " | "), oursCell)
	}
	fmt.Fprintf(&tb, "\nOnly ours, under either setting of the gate: %s.\n", strings.Join(onlyOurs, "; "))
	fmt.Fprintf(&tb, "\nOurs, and no endpoint of the kubelet with the gate on: %s.\n", strings.Join(notOn, "; "))
	fmt.Fprintf(&tb, "\nOurs, and not `/metrics/cadvisor` with the gate on: %s.\n", strings.Join(notCadOn, "; "))
	fmt.Fprintf(&tb, "\nWhich endpoint gives each row under which gate (asserted; + present, - absent, . no such series, u absent with the container's scope there unnamed; rows whose cAdvisor cell may be either are marked ~ in the test):\n\n| quantity | entity | cadvisor off | on | resource off | on | summary off | on |\n|---|---|---|---|---|---|---|---|\n%s\n", strings.Join(presence, "\n"))
	for i, rows := range byView {
		if want[i] == 0 && len(rows) == 0 {
			continue
		}
		title := fmt.Sprintf("%s, gate %s", endpoints[i/2], g.views[i%2].gate)
		res := sidebyside.Require(t, title, rows, sidebyside.Options{Apart: 4, MinRows: want[i]})
		fmt.Fprintf(&tb, "\n%s: %d rows, wrong mappings that would pass: %d of %d tried\n\n%s\n", title, len(rows), res.Wrong, res.Compared, strings.Join(res.Table, "\n"))
	}
	writeResult(t, g.prefix+"cristats.md", []byte(tb.String()))
	t.Logf("the kubelet's stats on %s with PodAndContainerStatsFromCRI off and on, beside ours:\n%s", g.runtime, tb.String())
}

// timed reports whether a kubelet figure has a sample time: not the zero
// time, nor the Unix epoch (the kubelet on CRI-O with
// PodAndContainerStatsFromCRI stamps a pod's network figures 1970-01-01,
// CRI-O's CRI stats giving them no time).
func timed(at time.Time) bool { return !at.IsZero() && at.Unix() != 0 }

// sbUnit is a table unit as sidebyside formats it.
func sbUnit(unit string) string {
	switch unit {
	case "MiB", " B":
		return "B"
	case "s":
		return "s"
	}
	return ""
}

// presenceMatches reports whether the presence got (gateRow.has's
// characters, 'u' for absent and unnamed) is what want allows.
func presenceMatches(want, got string) bool {
	if len(want) != len(got) {
		return false
	}
	for i := range len(want) {
		if want[i] != got[i] && want[i] != '~' {
			return false
		}
	}
	return true
}

// unnamed reports whether the kubelet's cAdvisor exposition has the
// scope of the entity's container ("<name> container") with an empty
// name label: cAdvisor has the cgroup but did not name it.
func unnamed(expo, entity string, ctrs map[string][2]string) bool {
	name, ok := strings.CutSuffix(entity, " container")
	if !ok || ctrs[name][0] == "" {
		return false
	}
	scope := strings.TrimPrefix(cgroupOf(ctrs[name][0]), cgRoot)
	for _, line := range strings.Split(expo, "\n") {
		if strings.Contains(line, `id="`+scope+`"`) && strings.Contains(line, `name=""`) {
			return true
		}
	}
	return false
}

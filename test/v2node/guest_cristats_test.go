// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux && v2guest

package v2node

import (
	"encoding/json"
	"fmt"
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
	// alt, when not 0, is another scale the figure may come in under
	// this view (the Summary's container PSI with the gate off: psiOff).
	alt func(v *gateView) float64
}

// gateRow is a quantity of one entity. A nil probe: the endpoint has no
// such series at all (whatever the gate); ours nil: we have none.
type gateRow struct {
	family, entity              string
	cadvisor, resource, summary *probe
	ours                        []string // our key; a trailing * takes the first key with that prefix
	counter                     bool     // interpolate ours between scrapes
	unit                        string
	tol                         func(kubelet float64) float64
	oursAbsent                  string // why ours gives no point (then asserted absent)
	oursIf                      func() (bool, string)
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

// psiUnit is a container's PSI total's unit in the Summary API, in
// seconds: with the gate off the kubelet takes it from cAdvisor (the
// kernel's µs as they are), with it on from CRI (ns, as documented).
func psiUnit(gate string) float64 {
	if gate == "on" {
		return 1e-9
	}
	return 1e-6
}

// psiOff is psiUnit's exception: with the gate off, a container's figure
// is CRI's (ns) where cAdvisor's cache has no stats of that container
// yet; both were seen. A figure that agrees with ours in neither unit
// fails.
const psiOff = 1e-3

// psiAlt is p, which with the gate off may also come in CRI's ns where it
// was read as cAdvisor's µs.
func psiAlt(p *probe) *probe {
	p.alt = func(v *gateView) float64 {
		if v.gate == "off" {
			return psiOff
		}
		return 0
	}
	return p
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

func (g *gateRun) rows() []gateRow {
	c, p := ctrLabels, podLabels
	pod := func(name string) map[string]string { l := p(name); l["container"] = ""; return l }
	node := map[string]string{"id": "/"}
	iface := func(l map[string]string, name string) map[string]string { l["interface"] = name; return l }
	cpuTol := func(v float64) float64 { return 0.02 + 0.01*v }
	podCPUTol := func(v float64) float64 { return 0.1 + 0.01*v }
	mem := func(b float64) func(float64) float64 { return func(float64) float64 { return b } }
	byCtr := func(name string, fn func(*statsapi.ContainerStats) (float64, metav1.Time, bool)) func(*statsapi.Summary) (float64, metav1.Time, bool) {
		return func(s *statsapi.Summary) (float64, metav1.Time, bool) {
			if cs := summaryCtr(s, name); cs != nil {
				return fn(cs)
			}
			return 0, metav1.Time{}, false
		}
	}
	byCtrG := func(name string, fn func(cs *statsapi.ContainerStats, gate string) (float64, metav1.Time, bool)) func(*statsapi.Summary, string) (float64, metav1.Time, bool) {
		return func(s *statsapi.Summary, gate string) (float64, metav1.Time, bool) {
			if cs := summaryCtr(s, name); cs != nil {
				return fn(cs, gate)
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
	burnerScope := func() string { return cgroupOf(g.ctrs["burner"][0]) }
	return []gateRow{
		{
			family: "CPU time", entity: "burner container", counter: true, unit: "s", tol: cpuTol,
			cadvisor: cad("container_cpu_usage_seconds_total", c("burner")), resource: res("container_cpu_usage_seconds_total", c("burner")),
			summary: sum("cpu.usageCoreNanoSeconds", byCtr("burner", func(cs *statsapi.ContainerStats) (float64, metav1.Time, bool) { return cpuTime(cs.CPU) })),
			ours:    []string{"c:burner|cpu"},
		},
		{
			family: "CPU time", entity: "burner pod", counter: true, unit: "s", tol: podCPUTol,
			cadvisor: cad("container_cpu_usage_seconds_total", pod("burner")), resource: res("pod_cpu_usage_seconds_total", p("burner")),
			summary: sum("cpu.usageCoreNanoSeconds", byPod("burner", func(ps *statsapi.PodStats) (float64, metav1.Time, bool) { return cpuTime(ps.CPU) })),
			ours:    []string{"p:burner|k8s.pod.cpu.time"},
		},
		{
			family: "CPU time", entity: "node", counter: true, unit: "s", tol: func(v float64) float64 { return 0.25 + 0.01*v },
			cadvisor: cad("container_cpu_usage_seconds_total", node), resource: res("node_cpu_usage_seconds_total", nil),
			summary: sum("node.cpu.usageCoreNanoSeconds", func(s *statsapi.Summary) (float64, metav1.Time, bool) { return cpuTime(s.Node.CPU) }),
			ours:    []string{"n|k8s.node.cpu.time"},
		},
		{
			family: "memory working set", entity: "mixed container", unit: "MiB", tol: mem(256 << 10),
			cadvisor: cad("container_memory_working_set_bytes", c("mixed")), resource: res("container_memory_working_set_bytes", c("mixed")),
			summary: sum("memory.workingSetBytes", byCtr("mixed", func(cs *statsapi.ContainerStats) (float64, metav1.Time, bool) { return ws(cs.Memory) })),
			ours:    []string{"c:mixed|container.memory.working_set"},
		},
		{
			family: "memory working set", entity: "mixed pod", unit: "MiB", tol: mem(1 << 20),
			cadvisor: cad("container_memory_working_set_bytes", pod("mixed")), resource: res("pod_memory_working_set_bytes", p("mixed")),
			summary: sum("memory.workingSetBytes", byPod("mixed", func(ps *statsapi.PodStats) (float64, metav1.Time, bool) { return ws(ps.Memory) })),
			ours:    []string{"p:mixed|k8s.pod.memory.working_set"},
		},
		// The node's working set moves with every process of the node (the
		// kubelet, just restarted, and our test): 5 %.
		{
			family: "memory working set", entity: "node", unit: "MiB", tol: func(v float64) float64 { return 0.05 * v },
			cadvisor: cad("container_memory_working_set_bytes", node), resource: res("node_memory_working_set_bytes", nil),
			summary: sum("node.memory.workingSetBytes", func(s *statsapi.Summary) (float64, metav1.Time, bool) { return ws(s.Node.Memory) }),
			ours:    []string{"n|k8s.node.memory.working_set"},
		},
		{
			family: "memory usage", entity: "mixed container", unit: "MiB", tol: mem(256 << 10),
			cadvisor: cad("container_memory_usage_bytes", c("mixed")),
			summary: sum("memory.usageBytes", byCtr("mixed", func(cs *statsapi.ContainerStats) (float64, metav1.Time, bool) {
				if cs.Memory == nil {
					return 0, metav1.Time{}, false
				}
				v, ok := u64s(cs.Memory.UsageBytes, 1)
				return v, cs.Memory.Time, ok
			})),
			ours: []string{"c:mixed|container.memory.usage"},
		},
		{
			family: "memory RSS (anon)", entity: "mixed container", unit: "MiB", tol: mem(256 << 10),
			cadvisor: cad("container_memory_rss", c("mixed")),
			summary: sum("memory.rssBytes", byCtr("mixed", func(cs *statsapi.ContainerStats) (float64, metav1.Time, bool) {
				if cs.Memory == nil {
					return 0, metav1.Time{}, false
				}
				v, ok := u64s(cs.Memory.RSSBytes, 1)
				return v, cs.Memory.Time, ok
			})),
			ours: []string{"c:mixed|container.memory.rss"},
		},
		{
			family: "memory page cache", entity: "mixed container", unit: "MiB", tol: mem(256 << 10),
			cadvisor: cad("container_memory_cache", c("mixed")),
			ours:     []string{"c:mixed|container.memory.cache"},
		},
		{
			family: "PSI cpu some", entity: "burner container", counter: true, unit: "s", tol: cpuTol,
			cadvisor: cad("container_pressure_cpu_waiting_seconds_total", c("burner")),
			summary: psiAlt(sumG("`cpu.psi.some.total` (µs or ns with the gate off, ns on)", byCtrG("burner", func(cs *statsapi.ContainerStats, gate string) (float64, metav1.Time, bool) {
				if cs.CPU == nil {
					return 0, metav1.Time{}, false
				}
				return psiSome(cs.CPU.PSI, cs.CPU.Time, psiUnit(gate))
			}))),
			ours: []string{"c:burner|container.pressure.stall_time/cpu/some"},
		},
		{
			family: "PSI memory some", entity: "mixed container", counter: true, unit: "s", tol: cpuTol,
			cadvisor: cad("container_pressure_memory_waiting_seconds_total", c("mixed")),
			summary: psiAlt(sumG("`memory.psi.some.total` (µs or ns with the gate off, ns on)", byCtrG("mixed", func(cs *statsapi.ContainerStats, gate string) (float64, metav1.Time, bool) {
				if cs.Memory == nil {
					return 0, metav1.Time{}, false
				}
				return psiSome(cs.Memory.PSI, cs.Memory.Time, psiUnit(gate))
			}))),
			ours: []string{"c:mixed|container.pressure.stall_time/memory/some"},
		},
		{
			family: "PSI io some", entity: "mixed container", counter: true, unit: "s", tol: cpuTol,
			cadvisor: cad("container_pressure_io_waiting_seconds_total", c("mixed")),
			summary: psiAlt(sumG("`io.psi.some.total` (µs or ns with the gate off, ns on)", byCtrG("mixed", func(cs *statsapi.ContainerStats, gate string) (float64, metav1.Time, bool) {
				if cs.IO == nil {
					return 0, metav1.Time{}, false
				}
				return psiSome(cs.IO.PSI, cs.IO.Time, psiUnit(gate))
			}))),
			ours: []string{"c:mixed|container.pressure.stall_time/io/some"},
		},
		{
			family: "PSI cpu some", entity: "node", counter: true, unit: "s", tol: podCPUTol,
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
			family: "hugetlb usage 2 MB", entity: "burner container", unit: "MiB", tol: mem(0),
			cadvisor: cad("container_hugetlb_usage_bytes", c("burner")),
			ours:     []string{"c:burner|container.memory.hugetlb.usage/2MB"},
		},
		{
			family: "hugetlb limit 2 MB", entity: "burner container", unit: "MiB", tol: mem(0),
			cadvisor: cad("container_hugetlb_max_usage_bytes", c("burner")),
			ours:     []string{"c:burner|container.memory.hugetlb.limit/2MB"},
			oursIf: func() (bool, string) {
				b, err := os.ReadFile(filepath.Join(burnerScope(), "hugetlb.2MB.max"))
				v := strings.TrimSpace(string(b))
				return err == nil && v != "max", "hugetlb.2MB.max " + v
			},
		},
		{
			family: "hugetlb limit 2 MB", entity: "burner pod", unit: "MiB", tol: mem(0),
			ours: []string{"p:burner|k8s.pod.memory.hugetlb.limit/2MB"},
			oursIf: func() (bool, string) {
				b, err := os.ReadFile(filepath.Join(filepath.Dir(burnerScope()), "hugetlb.2MB.max"))
				v := strings.TrimSpace(string(b))
				return err == nil && v != "max", "hugetlb.2MB.max " + v
			},
		},
		{
			family: "CPU quota (limit)", entity: "burner container", unit: "cores", tol: mem(1e-9),
			cadvisor: quotaProbe(c("burner")),
			ours:     []string{"c:burner|container.cpu.limit"},
		},
		{
			family: "CFS period", entity: "burner container", unit: " µs", tol: mem(0),
			cadvisor:   cad("container_spec_cpu_period", c("burner")),
			oursAbsent: "folded into container.cpu.limit (quota / period)",
		},
		{
			family: "CFS periods", entity: "burner container", counter: true, unit: "", tol: func(v float64) float64 { return 3 + 0.01*v },
			cadvisor: cad("container_cpu_cfs_periods_total", c("burner")),
			ours:     []string{"c:burner|container.cpu.throttling.periods"},
		},
		{
			family: "CFS throttled periods", entity: "burner container", counter: true, unit: "", tol: func(v float64) float64 { return 3 + 0.01*v },
			cadvisor: cad("container_cpu_cfs_throttled_periods_total", c("burner")),
			ours:     []string{"c:burner|container.cpu.throttling.throttled_periods"},
		},
		// cAdvisor samples with the gate off, at its own time, ~50-100 ms from
		// where ours are read in a scrape (as a pod's CPU): 100 ms + 1 %.
		{
			family: "CFS throttled time", entity: "burner container", counter: true, unit: "s", tol: podCPUTol,
			cadvisor: cad("container_cpu_cfs_throttled_seconds_total", c("burner")),
			ours:     []string{"c:burner|container.cpu.throttling.throttled_time"},
		},
		{
			family: "tasks (pids.current)", entity: "burner container", unit: "", tol: mem(2),
			cadvisor: cad("container_threads", c("burner")),
			ours:     []string{"c:burner|container.pids.count"},
		},
		{
			family: "processes", entity: "burner pod", unit: "", tol: mem(0),
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
		{
			family: "network receive bytes", entity: "net pod eth0", unit: " B", tol: mem(4096),
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
			family: "network receive bytes", entity: "host-network pod", unit: " B", tol: mem(4096),
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
			family: "writable layer usage", entity: "cache container", unit: "MiB", tol: mem(64 << 10),
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
			family: "node filesystem capacity", entity: "node", unit: "MiB", tol: func(v float64) float64 { return 0.01 * v },
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
	}
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
// samples are up to 15 s old).
func (g *gateRun) view(gate string) gateView {
	t := g.t
	var missing []string
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
		missing = missing[:0]
		for _, r := range g.rows() {
			for _, pr := range []*probe{r.cadvisor, r.resource, r.summary} {
				if pr == nil {
					continue
				}
				if _, at, w, ok := pr.get(&v); ok && !at.IsZero() && (!g.ours.bracket(at) || !g.ours.bracket(at.Add(w))) {
					missing = append(missing, fmt.Sprintf("%s %s %s at %s", r.family, r.entity, pr.name, at.Format(time.StampMilli)))
				}
			}
		}
		if len(missing) == 0 {
			writeResult(t, "metrics-cadvisor-gate-"+gate+".txt", []byte(v.cadvisor))
			writeResult(t, "stats-summary-gate-"+gate+".json", []byte(s))
			require.Equal(t, g.ctrs, g.running(), "the kubelet replaced a container")
			return v
		}
		time.Sleep(2 * time.Second)
	}
	require.Empty(t, missing, "gate %s: kubelet figures outside our scrapes", gate)
	return gateView{}
}

// compare writes the table and asserts: ours present where the row says
// we give it (absent where it says we do not), and every kubelet figure
// that has ours beside it within the row's tolerance of ours at its
// sample time.
func (g *gateRun) compare() {
	t := g.t
	ours := *g.ours
	lastScrape := ours[len(ours)-1]
	var tb strings.Builder
	fmt.Fprintf(&tb, "| quantity | entity | kubelet series | `/metrics/cadvisor` gate off | gate on | `/metrics/resource` gate off | gate on | `/stats/summary` gate off | gate on | ours |\n")
	fmt.Fprintf(&tb, "|---|---|---|---|---|---|---|---|---|---|\n")
	var onlyOurs, notOn, notCadOn []string
	for _, r := range g.rows() {
		key := oursKey(r, lastScrape)
		want := r.oursAbsent == ""
		why := ""
		if r.oursIf != nil {
			want, why = r.oursIf()
		}
		switch {
		case r.ours == nil:
		case want:
			assert.NotEmpty(t, key, "%s, %s: ours has no %v (%s)", r.family, r.entity, r.ours, why)
		default:
			assert.Empty(t, key, "%s, %s: ours has %s (%s%s)", r.family, r.entity, key, r.oursAbsent, why)
		}
		var names []string
		var cells []string
		kubeletHas, onHas, cadOnHas := false, false, false
		for _, pr := range []*probe{r.cadvisor, r.resource, r.summary} {
			if pr == nil {
				cells = append(cells, "—", "—")
				continue
			}
			names = append(names, pr.name)
			for i := range g.views {
				v := &g.views[i]
				val, at, w, ok := pr.get(v)
				if !ok {
					cells = append(cells, "absent")
					continue
				}
				kubeletHas = true
				if v.gate == "on" {
					onHas = true
					cadOnHas = cadOnHas || pr == r.cadvisor
				}
				cell := fmtValue(val, r.unit)
				if key != "" {
					var lo, hi float64
					if at.IsZero() {
						lo = ours.last(key)
						hi = lo
					} else {
						lo, hi = ours.span(key, at, w, r.counter)
					}
					tol := r.tol(val)
					if pr.whole != nil && pr.whole(v) {
						lo-- // the kubelet's figure is ours truncated
						cell += " (whole)"
					}
					ok := val >= lo-tol && val <= hi+tol
					if !ok && pr.alt != nil {
						if a := pr.alt(v); a != 0 && val*a >= lo-r.tol(val*a) && val*a <= hi+r.tol(val*a) {
							val, tol, ok = val*a, r.tol(val*a), true
							cell = fmtValue(val, r.unit) + " (ns)"
						}
					}
					assert.True(t, ok, "%s, %s, %s gate %s: the kubelet's %s, ours %s .. %s (tolerance %s)",
						r.family, r.entity, pr.name, v.gate, fmtValue(val, r.unit), fmtValue(lo, r.unit), fmtValue(hi, r.unit), fmtValue(tol, r.unit))
					if !ok {
						cell += " ✗"
					}
				}
				cells = append(cells, cell)
			}
		}
		oursCell := "—"
		switch {
		case key != "":
			v := ours.last(key)
			oursCell = fmt.Sprintf("`%s` %s", key[strings.IndexByte(key, '|')+1:], fmtValue(v, r.unit))
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
	writeResult(t, "cristats.md", []byte(tb.String()))
	t.Logf("the kubelet's stats with PodAndContainerStatsFromCRI off and on, beside ours:\n%s", tb.String())
}

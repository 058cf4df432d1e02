// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// kindPlan is what a scrape reads for one entity kind (node, pod,
// container), derived once at Start from the enabled metrics: a file no
// enabled metric needs is never opened, and a failed read costs (and
// reports) only the points of the enabled metrics that needed it.
//
// A metric family plugs in with three pieces: a want/points pair here,
// filled by a plan<Family> function called from newPlan; a read in
// readCgroup (cgroup.go) guarded by the want, whose error lands in stats;
// and a record step that reports that error with the family's points. Its
// points also count in points(), so a vanished cgroup counts them.
type kindPlan struct {
	// CPU time and usage: cpuacct.usage* / cpuacct.stat (v1), cpu.stat (v2).
	cpu    bool
	cpuPts int
	// Memory files (cgroupfs.MemoryWant). For the node, OOM kills and
	// faults come from /proc/vmstat and available's capacity from
	// /proc/meminfo instead.
	mem    cgroupfs.MemoryWant
	memPts int
	// Node only: /proc/meminfo always (meminfo) or only when the v2 root's
	// memory.stat lacks anon and file (meminfoFallback), /proc/vmstat.
	meminfo, meminfoFallback bool
	vmstat                   bool
	// The points of node memory metrics that depend on each /proc file.
	meminfoPts, fallbackPts, vmstatPts int
	// CFS bandwidth: throttling, limit, shares or weight (pods, containers).
	bw    cgroupfs.CPUWant
	bwPts int
	// Thread states and load average (containers; pods sum theirs).
	tasks    bool
	tasksPts int
	// Pressure stall information.
	psi    bool
	psiPts int
}

// points is every point an entity of this kind would have had: what a
// vanished cgroup costs.
func (p *kindPlan) points() int {
	return p.cpuPts + p.memPts + p.bwPts + p.tasksPts + p.psiPts
}

// any reports whether anything at all is read for this kind.
func (p *kindPlan) any() bool {
	return p.cpu || p.mem.Any() || p.meminfo || p.meminfoFallback || p.vmstat || p.bw.Any() || p.tasks || p.psi
}

func count(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// newPlan derives the plans of the three kinds; statsV1 is the layout's.
func newPlan(m *metadata.MetricsConfig, statsV1 bool) [3]kindPlan {
	var p [3]kindPlan
	for k := range p {
		kind := cgroupKind(k)
		planCPU(&p[k], kind, m)
		planMemory(&p[k], kind, m, statsV1)
		planBandwidth(&p[k], kind, m)
		planTasks(&p[k], kind, m)
		planPSI(&p[k], kind, m)
	}
	return p
}

func planCPU(p *kindPlan, k cgroupKind, m *metadata.MetricsConfig) {
	var t, u bool
	switch k {
	case kindNode:
		t, u = m.K8sNodeCPUTime.Enabled, m.K8sNodeCPUUsage.Enabled
	case kindPod:
		t, u = m.K8sPodCPUTime.Enabled, m.K8sPodCPUUsage.Enabled
	default:
		t, u = m.ContainerCPUTime.Enabled, m.ContainerCPUUsage.Enabled
	}
	p.cpu = t || u
	p.cpuPts = 2*count(t) + count(u) // time: user and system
}

// memoryMetrics are the memory metrics of one kind that are enabled.
type memoryMetrics struct {
	usage, workingSet, rss, cache, mapped, swap, limit, available, oomKills, faults bool
}

func memoryEnabled(k cgroupKind, m *metadata.MetricsConfig) memoryMetrics {
	switch k {
	case kindNode:
		return memoryMetrics{
			usage: m.K8sNodeMemoryUsage.Enabled, workingSet: m.K8sNodeMemoryWorkingSet.Enabled,
			rss: m.K8sNodeMemoryRss.Enabled, cache: m.K8sNodeMemoryCache.Enabled,
			mapped: m.K8sNodeMemoryMappedFile.Enabled, swap: m.K8sNodeMemorySwap.Enabled,
			available: m.K8sNodeMemoryAvailable.Enabled, oomKills: m.K8sNodeMemoryOomKills.Enabled,
			faults: m.K8sNodePagingFaults.Enabled,
		}
	case kindPod:
		return memoryMetrics{
			usage: m.K8sPodMemoryUsage.Enabled, workingSet: m.K8sPodMemoryWorkingSet.Enabled,
			rss: m.K8sPodMemoryRss.Enabled, cache: m.K8sPodMemoryCache.Enabled,
			mapped: m.K8sPodMemoryMappedFile.Enabled, swap: m.K8sPodMemorySwap.Enabled,
			limit: m.K8sPodMemoryLimit.Enabled, available: m.K8sPodMemoryAvailable.Enabled,
			oomKills: m.K8sPodMemoryOomKills.Enabled, faults: m.K8sPodPagingFaults.Enabled,
		}
	default:
		return memoryMetrics{
			usage: m.ContainerMemoryUsage.Enabled, workingSet: m.ContainerMemoryWorkingSet.Enabled,
			rss: m.ContainerMemoryRss.Enabled, cache: m.ContainerMemoryCache.Enabled,
			mapped: m.ContainerMemoryMappedFile.Enabled, swap: m.ContainerMemorySwap.Enabled,
			limit: m.ContainerMemoryLimit.Enabled, available: m.ContainerMemoryAvailable.Enabled,
			oomKills: m.ContainerMemoryOomKills.Enabled, faults: m.ContainerPagingFaults.Enabled,
		}
	}
}

// planMemory maps memory metrics to files. Working set is usage minus
// memory.stat's inactive file; available is the limit (the node: MemTotal)
// minus the working set; faults come from memory.stat (the node:
// /proc/vmstat). The v2 root has no memory.current: the node's usage is
// anon + file from its memory.stat, or from /proc/meminfo's LRU lists when
// that lacks them (nodeMemory).
func planMemory(p *kindPlan, k cgroupKind, m *metadata.MetricsConfig, statsV1 bool) {
	e := memoryEnabled(k, m)
	ws := e.workingSet || e.available
	p.mem = cgroupfs.MemoryWant{
		Usage: e.usage || ws,
		Stat:  ws || e.rss || e.cache || e.mapped || e.faults,
		Swap:  e.swap,
		Limit: e.limit || e.available,
		OOM:   e.oomKills,
	}
	p.memPts = count(e.usage, e.workingSet, e.rss, e.cache, e.mapped, e.swap, e.limit, e.available, e.oomKills) + 2*count(e.faults)
	if k != kindNode {
		return
	}
	p.mem.Limit, p.mem.OOM = false, false           // the root has no limit; kills from vmstat
	p.mem.Stat = ws || e.rss || e.cache || e.mapped // faults from vmstat
	p.vmstat = e.oomKills || e.faults
	p.vmstatPts = count(e.oomKills) + 2*count(e.faults)
	p.meminfo = e.available
	p.meminfoPts = count(e.available)
	if !statsV1 {
		usage := e.usage || ws
		p.mem.Usage = false // the v2 root has no memory.current
		p.mem.Stat = p.mem.Stat || usage
		if e.swap {
			p.meminfo = true // SwapTotal - SwapFree
			p.meminfoPts += count(e.swap)
		}
		p.meminfoFallback = usage || e.rss || e.cache || e.mapped
		p.fallbackPts = count(e.usage, e.workingSet, e.rss, e.cache, e.mapped)
	}
}

func planBandwidth(p *kindPlan, k cgroupKind, m *metadata.MetricsConfig) {
	var periods, throttled, throttledTime, limit, shares, weight bool
	switch k {
	case kindPod:
		periods, throttled, throttledTime = m.K8sPodCPUThrottlingPeriods.Enabled, m.K8sPodCPUThrottlingThrottledPeriods.Enabled, m.K8sPodCPUThrottlingThrottledTime.Enabled
		limit, shares, weight = m.K8sPodCPULimit.Enabled, m.K8sPodCPUShares.Enabled, m.K8sPodCPUWeight.Enabled
	case kindContainer:
		periods, throttled, throttledTime = m.ContainerCPUThrottlingPeriods.Enabled, m.ContainerCPUThrottlingThrottledPeriods.Enabled, m.ContainerCPUThrottlingThrottledTime.Enabled
		limit, shares, weight = m.ContainerCPULimit.Enabled, m.ContainerCPUShares.Enabled, m.ContainerCPUWeight.Enabled
	default:
		return // the root cgroup has no quota
	}
	p.bw = cgroupfs.CPUWant{Throttling: periods || throttled || throttledTime, Limit: limit, Shares: shares || weight}
	p.bwPts = count(periods, throttled, throttledTime, limit, shares, weight)
}

// planTasks: the pod metrics are sums over containers, so they make the
// containers' thread states read too; only containers read them.
func planTasks(p *kindPlan, k cgroupKind, m *metadata.MetricsConfig) {
	if k != kindContainer {
		return
	}
	p.tasks = m.ContainerTasks.Enabled || m.ContainerCPULoadAverage10s.Enabled ||
		m.K8sPodTasks.Enabled || m.K8sPodCPULoadAverage10s.Enabled
	p.tasksPts = len(taskStateAttr)*count(m.ContainerTasks.Enabled) + count(m.ContainerCPULoadAverage10s.Enabled)
}

func planPSI(p *kindPlan, k cgroupKind, m *metadata.MetricsConfig) {
	var stall, a10, a60, a300 bool
	switch k {
	case kindNode:
		stall, a10, a60, a300 = m.K8sNodePressureStallTime.Enabled, m.K8sNodePressureAvg10.Enabled, m.K8sNodePressureAvg60.Enabled, m.K8sNodePressureAvg300.Enabled
	case kindPod:
		stall, a10, a60, a300 = m.K8sPodPressureStallTime.Enabled, m.K8sPodPressureAvg10.Enabled, m.K8sPodPressureAvg60.Enabled, m.K8sPodPressureAvg300.Enabled
	default:
		stall, a10, a60, a300 = m.ContainerPressureStallTime.Enabled, m.ContainerPressureAvg10.Enabled, m.ContainerPressureAvg60.Enabled, m.ContainerPressureAvg300.Enabled
	}
	p.psi = stall || a10 || a60 || a300
	p.psiPts = len(psiResources) * 2 * count(stall, a10, a60, a300) // some and full per resource
}

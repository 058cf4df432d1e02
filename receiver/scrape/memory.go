// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"errors"
	"fmt"
	"io/fs"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/calc"
	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/procfs"
)

type gaugeFn = func(*metadata.MetricsBuilder, pcommon.Timestamp, int64)

// memoryRecorders are the memory metrics of one entity kind: the node,
// pods, containers and system containers share one recording path and one
// set of definitions. The node has no limit (the root cgroup has none); a
// system container has usage and working set only (the zero recorder
// records nothing).
type memoryRecorders struct {
	usage, workingSet, swap, limit, available, oomKills recorder[gaugeFn]
	// stat are the gauges taken as they are from memory.stat (on the v2
	// node without one, from /proc/meminfo's equivalents where it has them).
	stat     []statGauge
	faults   recorder[func(*metadata.MetricsBuilder, pcommon.Timestamp, int64, metadata.AttributeSystemPagingFaultType)]
	refaults recorder[func(*metadata.MetricsBuilder, pcommon.Timestamp, int64, metadata.AttributeLinuxMemoryLru)]
}

// statGauge is a memory.stat value recorded as it is.
type statGauge struct {
	recorder[gaugeFn]
	value func(*cgroupfs.MemoryStat) cgroupfs.U64
}

func anon(s *cgroupfs.MemoryStat) cgroupfs.U64   { return s.Anon }
func file(s *cgroupfs.MemoryStat) cgroupfs.U64   { return s.File }
func mapped(s *cgroupfs.MemoryStat) cgroupfs.U64 { return s.MappedFile }
func shmem(s *cgroupfs.MemoryStat) cgroupfs.U64  { return s.Shmem }

func memoryTable(m *metadata.MetricsConfig) [numKinds]memoryRecorders {
	return [numKinds]memoryRecorders{
		kindNode: {
			usage:      rec(m.K8sNodeMemoryUsage.Enabled, mbT.RecordK8sNodeMemoryUsageDataPoint),
			workingSet: rec(m.K8sNodeMemoryWorkingSet.Enabled, mbT.RecordK8sNodeMemoryWorkingSetDataPoint),
			swap:       rec(m.K8sNodeMemorySwap.Enabled, mbT.RecordK8sNodeMemorySwapDataPoint),
			available:  rec(m.K8sNodeMemoryAvailable.Enabled, mbT.RecordK8sNodeMemoryAvailableDataPoint),
			oomKills:   rec(m.K8sNodeMemoryOomKills.Enabled, mbT.RecordK8sNodeMemoryOomKillsDataPoint),
			stat: []statGauge{
				{rec(m.K8sNodeMemoryRss.Enabled, mbT.RecordK8sNodeMemoryRssDataPoint), anon},
				{rec(m.K8sNodeMemoryCache.Enabled, mbT.RecordK8sNodeMemoryCacheDataPoint), file},
				{rec(m.K8sNodeMemoryMappedFile.Enabled, mbT.RecordK8sNodeMemoryMappedFileDataPoint), mapped},
				{rec(m.K8sNodeMemoryShmem.Enabled, mbT.RecordK8sNodeMemoryShmemDataPoint), shmem},
			},
			faults: rec(m.K8sNodePagingFaults.Enabled, mbT.RecordK8sNodePagingFaultsDataPoint),
		},
		kindPod: {
			usage:      rec(m.K8sPodMemoryUsage.Enabled, mbT.RecordK8sPodMemoryUsageDataPoint),
			workingSet: rec(m.K8sPodMemoryWorkingSet.Enabled, mbT.RecordK8sPodMemoryWorkingSetDataPoint),
			swap:       rec(m.K8sPodMemorySwap.Enabled, mbT.RecordK8sPodMemorySwapDataPoint),
			limit:      rec(m.K8sPodMemoryLimit.Enabled, mbT.RecordK8sPodMemoryLimitDataPoint),
			available:  rec(m.K8sPodMemoryAvailable.Enabled, mbT.RecordK8sPodMemoryAvailableDataPoint),
			oomKills:   rec(m.K8sPodMemoryOomKills.Enabled, mbT.RecordK8sPodMemoryOomKillsDataPoint),
			stat: []statGauge{
				{rec(m.K8sPodMemoryRss.Enabled, mbT.RecordK8sPodMemoryRssDataPoint), anon},
				{rec(m.K8sPodMemoryCache.Enabled, mbT.RecordK8sPodMemoryCacheDataPoint), file},
				{rec(m.K8sPodMemoryMappedFile.Enabled, mbT.RecordK8sPodMemoryMappedFileDataPoint), mapped},
				{rec(m.K8sPodMemoryShmem.Enabled, mbT.RecordK8sPodMemoryShmemDataPoint), shmem},
			},
			faults:   rec(m.K8sPodPagingFaults.Enabled, mbT.RecordK8sPodPagingFaultsDataPoint),
			refaults: rec(m.K8sPodMemoryRefaults.Enabled, mbT.RecordK8sPodMemoryRefaultsDataPoint),
		},
		kindContainer: {
			usage:      rec(m.ContainerMemoryUsage.Enabled, mbT.RecordContainerMemoryUsageDataPoint),
			workingSet: rec(m.ContainerMemoryWorkingSet.Enabled, mbT.RecordContainerMemoryWorkingSetDataPoint),
			swap:       rec(m.ContainerMemorySwap.Enabled, mbT.RecordContainerMemorySwapDataPoint),
			limit:      rec(m.ContainerMemoryLimit.Enabled, mbT.RecordContainerMemoryLimitDataPoint),
			available:  rec(m.ContainerMemoryAvailable.Enabled, mbT.RecordContainerMemoryAvailableDataPoint),
			oomKills:   rec(m.ContainerMemoryOomKills.Enabled, mbT.RecordContainerMemoryOomKillsDataPoint),
			stat: []statGauge{
				{rec(m.ContainerMemoryRss.Enabled, mbT.RecordContainerMemoryRssDataPoint), anon},
				{rec(m.ContainerMemoryCache.Enabled, mbT.RecordContainerMemoryCacheDataPoint), file},
				{rec(m.ContainerMemoryMappedFile.Enabled, mbT.RecordContainerMemoryMappedFileDataPoint), mapped},
				{rec(m.ContainerMemoryShmem.Enabled, mbT.RecordContainerMemoryShmemDataPoint), shmem},
			},
			faults:   rec(m.ContainerPagingFaults.Enabled, mbT.RecordContainerPagingFaultsDataPoint),
			refaults: rec(m.ContainerMemoryRefaults.Enabled, mbT.RecordContainerMemoryRefaultsDataPoint),
		},
		// A system container has the two the kubelet's summary has for it.
		kindSystem: {
			usage:      rec(m.K8sNodeSystemContainerMemoryUsage.Enabled, mbT.RecordK8sNodeSystemContainerMemoryUsageDataPoint),
			workingSet: rec(m.K8sNodeSystemContainerMemoryWorkingSet.Enabled, mbT.RecordK8sNodeSystemContainerMemoryWorkingSetDataPoint),
		},
	}
}

// statOn is how many of r's memory.stat gauges are enabled.
func (r *memoryRecorders) statOn() int {
	n := 0
	for i := range r.stat {
		n += count(r.stat[i].on)
	}
	return n
}

// memoryPlan is what the memory family reads for one kind. For the node,
// OOM kills and faults come from /proc/vmstat and available's capacity
// from /proc/meminfo instead of cgroup files.
type memoryPlan struct {
	want cgroupfs.MemoryWant
	pts  int
	// Node only: /proc/meminfo always (meminfo) or only when the v2 root's
	// memory.stat lacks anon and file (meminfoFallback), /proc/vmstat.
	meminfo, meminfoFallback bool
	vmstat                   bool
	// The points of node memory metrics that depend on each /proc file.
	meminfoPts, fallbackPts, vmstatPts int
}

// planMemory maps memory metrics to files. Working set is usage minus
// memory.stat's inactive file; available is the limit (the node: MemTotal)
// minus the working set; faults come from memory.stat (the node:
// /proc/vmstat). The v2 root has no memory.current: the node's usage is
// anon + file from its memory.stat, or from /proc/meminfo's LRU lists when
// that lacks them (nodeMemory).
func planMemory(r *memoryRecorders, k cgroupKind, statsV1 bool) memoryPlan {
	var p memoryPlan
	ws := r.workingSet.on || r.available.on
	stat := r.statOn()
	p.want = cgroupfs.MemoryWant{
		Usage: r.usage.on || ws,
		Stat:  ws || stat > 0 || r.faults.on || r.refaults.on,
		Swap:  r.swap.on,
		Limit: r.limit.on || r.available.on,
		OOM:   r.oomKills.on,
	}
	p.pts = count(r.usage.on, r.workingSet.on, r.swap.on, r.limit.on, r.available.on, r.oomKills.on) + stat +
		2*count(r.faults.on, r.refaults.on)
	if k != kindNode {
		return p
	}
	p.want.Limit, p.want.OOM = false, false // the root has no limit; kills from vmstat
	p.want.Stat = ws || stat > 0            // faults from vmstat
	p.vmstat = r.oomKills.on || r.faults.on
	p.vmstatPts = count(r.oomKills.on) + 2*count(r.faults.on)
	p.meminfo = r.available.on
	p.meminfoPts = count(r.available.on)
	if !statsV1 {
		usage := r.usage.on || ws
		p.want.Usage = false // the v2 root has no memory.current
		p.want.Stat = p.want.Stat || usage
		if r.swap.on {
			p.meminfo = true // SwapTotal - SwapFree
			p.meminfoPts += count(r.swap.on)
		}
		p.meminfoFallback = usage || stat > 0
		p.fallbackPts = count(r.usage.on, r.workingSet.on) + stat
	}
	return p
}

// memoryFamily is memory usage, working set, RSS, cache, mapped file,
// swap, limit, available, OOM kills and page faults: the cgroup's memory
// files (cgroupfs.MemoryWant); for the node also /proc/meminfo and
// /proc/vmstat.
type memoryFamily struct {
	noSums
	v    *env
	slot int
	rec  [numKinds]memoryRecorders
	plan [numKinds]memoryPlan
	cur  cgroupfs.MemoryStat
	err  error
}

func newMemoryFamily(v *env, m *metadata.MetricsConfig, slot int) family {
	f := &memoryFamily{v: v, slot: slot, rec: memoryTable(m)}
	on := false
	for k := range f.plan {
		f.plan[k] = planMemory(&f.rec[k], cgroupKind(k), v.layout.StatsV1())
		on = on || f.plan[k].pts > 0
	}
	if !on {
		return nil
	}
	return f
}

func (f *memoryFamily) read(e *entity) {
	f.cur, f.err = cgroupfs.MemoryStat{}, nil
	if want := f.plan[e.kind].want; want.Any() {
		f.cur, f.err = f.readMemory(e, want)
		if want.OOM && e.kind == kindContainer {
			e.hand.oomTried = true
			if f.err == nil {
				e.hand.oomKills = f.cur.OOMKills
			}
		}
	}
}

func (f *memoryFamily) readErr() error { return f.err }

func (f *memoryFamily) points(k cgroupKind, _ *series) int { return f.plan[k].pts }

func (f *memoryFamily) record(e *entity, errs *scrapererror.ScrapeErrors) {
	p := &f.plan[e.kind]
	switch {
	case f.err != nil:
		errs.AddPartial(p.pts, fmt.Errorf("%s: %w", e.name, f.err))
	case p.want.Any() || e.kind == kindNode && p.pts > 0:
		f.recordMemory(e, p, f.cur, errs)
	}
}

// readMemory reads an entity's memory accounting. On v1 a pod's OOM kills
// are summed over its subtree, since the kernel counts a kill only in the
// victim's own cgroup there (v2's memory.events is already hierarchical).
//
// The pod's walk reuses what this scrape read already: the pod's own
// counter (just now, with its memory) and its containers' (read before the
// pods, kept in oomRead), so only cgroups nobody read (the sandbox, a
// container filtered out, sub-cgroups) are read again.
func (f *memoryFamily) readMemory(e *entity, want cgroupfs.MemoryWant) (cgroupfs.MemoryStat, error) {
	v, p := f.v, e.pass
	mem, err := v.reader.Memory(e.rel, want)
	if err != nil || !want.OOM || !v.layout.StatsV1() || e.kind != kindContainer && e.kind != kindPod {
		return mem, err
	}
	if mem.OOMKills.OK {
		if p.oomRead == nil {
			p.oomRead = map[string]uint64{}
		}
		p.oomRead[e.rel] = mem.OOMKills.V
	}
	if e.kind == kindPod {
		oom := stateOf[oomTree](e.st, f.slot)
		mem.OOMKills, err = oom.update(func(fn func(string, uint64)) error { return v.reader.OOMKillsTreeV1(e.rel, p.oomRead, fn) })
	}
	return mem, err
}

// oomTree keeps a v1 pod's OOM kill total monotonic while its containers
// come and go: the last counter of each cgroup in the subtree, and the kills
// of cgroups that have since been removed.
type oomTree struct {
	last    map[string]uint64
	retired uint64
}

// update walks the subtree with walk and returns the pod's total: the
// current counters plus those of removed cgroups. No counter anywhere (a
// kernel before 4.13) gives no value.
func (o *oomTree) update(walk func(func(string, uint64)) error) (cgroupfs.U64, error) {
	cur := make(map[string]uint64, len(o.last))
	if err := walk(func(rel string, v uint64) { cur[rel] = v }); err != nil {
		return cgroupfs.U64{}, err
	}
	for rel, v := range o.last {
		if _, ok := cur[rel]; !ok {
			o.retired += v
		}
	}
	o.last = cur
	if len(cur) == 0 && o.retired == 0 {
		return cgroupfs.U64{}, nil
	}
	total := o.retired
	for _, v := range cur {
		total += v
	}
	return cgroupfs.Some(total), nil
}

func recordIf(mb *metadata.MetricsBuilder, r recorder[gaugeFn], ts pcommon.Timestamp, v cgroupfs.U64) {
	if r.on && v.OK {
		r.record(mb, ts, calc.ClampInt64(v.V))
	}
}

// recordMemory records an entity's memory points with one definition for
// every entity: working set = usage - inactive file, floored at 0;
// available = limit - working set where a finite limit exists. A value the
// kernel did not provide gives no point.
func (f *memoryFamily) recordMemory(e *entity, p *memoryPlan, mem cgroupfs.MemoryStat, errs *scrapererror.ScrapeErrors) {
	capacity := mem.Limit
	if e.kind == kindNode {
		mem, capacity = f.nodeMemory(p, mem, errs)
	}
	rec, mb, ts := &f.rec[e.kind], f.v.mb, e.ts
	recordIf(mb, rec.usage, ts, mem.Usage)
	for i := range rec.stat {
		recordIf(mb, rec.stat[i].recorder, ts, rec.stat[i].value(&mem))
	}
	recordIf(mb, rec.swap, ts, mem.Swap)
	recordIf(mb, rec.oomKills, ts, mem.OOMKills)
	if rec.limit.on && mem.Limit.Finite() {
		rec.limit.record(mb, ts, calc.ClampInt64(mem.Limit.V))
	}
	if rec.faults.on && mem.PgFault.OK && mem.PgMajFault.OK {
		rec.faults.record(mb, ts, calc.ClampInt64(mem.PgMajFault.V), metadata.AttributeSystemPagingFaultTypeMajor)
		// The kernel's pgfault counts major faults too.
		rec.faults.record(mb, ts, calc.ClampInt64(calc.Available(mem.PgFault.V, mem.PgMajFault.V)), metadata.AttributeSystemPagingFaultTypeMinor)
	}
	if rec.refaults.on {
		if mem.RefaultAnon.OK {
			rec.refaults.record(mb, ts, calc.ClampInt64(mem.RefaultAnon.V), metadata.AttributeLinuxMemoryLruAnon)
		}
		if mem.RefaultFile.OK {
			rec.refaults.record(mb, ts, calc.ClampInt64(mem.RefaultFile.V), metadata.AttributeLinuxMemoryLruFile)
		}
	}
	if !mem.Usage.OK || !mem.InactiveFile.OK {
		return
	}
	ws := calc.WorkingSet(mem.Usage.V, mem.InactiveFile.V)
	recordIf(mb, rec.workingSet, ts, cgroupfs.Some(ws))
	if rec.available.on && capacity.Finite() {
		rec.available.record(mb, ts, calc.ClampInt64(calc.Available(capacity.V, ws)))
	}
}

// nodeMemory applies the node rules. Usage where the root cgroup has no
// usage file (cgroup v2): anon + file from the root's memory.stat, or the
// same sum from /proc/meminfo's LRU lists when the root has no memory.stat;
// never MemTotal - MemFree, which also counts kernel memory and buffers.
// Swap on v2 is SwapTotal - SwapFree. The node's capacity for available is
// MemTotal; its OOM kills and faults
// come from /proc/vmstat, the only place that counts them node-wide.
func (f *memoryFamily) nodeMemory(p *memoryPlan, mem cgroupfs.MemoryStat, errs *scrapererror.ScrapeErrors) (cgroupfs.MemoryStat, cgroupfs.Limit) {
	mem.Limit = cgroupfs.Limit{} // the root cgroup has no limit
	var capacity cgroupfs.Limit
	var mi procfs.Meminfo
	fallback := p.meminfoFallback && !mem.Usage.OK && (!mem.Anon.OK || !mem.File.OK)
	if p.meminfo || fallback {
		var err error
		if mi, err = f.v.proc.Meminfo(); err != nil {
			lost := p.meminfoPts
			if fallback {
				lost += p.fallbackPts // usage, working set, rss, cache and mapped file depended on it too
			}
			errs.AddPartial(lost, fmt.Errorf("node memory: %w", err))
		} else if mi.MemTotal.OK && p.meminfo {
			capacity = cgroupfs.Limit{V: mi.MemTotal.V, OK: true}
		}
	}
	if !mem.Usage.OK && p.meminfoFallback {
		mem = nodeUsageV2(mem, mi)
	}
	if !f.v.layout.StatsV1() && !mem.Swap.OK && mi.SwapTotal.OK && mi.SwapFree.OK {
		// The v2 root has no memory.swap.current: swap in use on the node.
		mem.Swap = cgroupfs.Some(calc.Available(mi.SwapTotal.V, mi.SwapFree.V))
	}
	mem.OOMKills, mem.PgFault, mem.PgMajFault = cgroupfs.U64{}, cgroupfs.U64{}, cgroupfs.U64{}
	if !p.vmstat {
		return mem, capacity
	}
	vm, err := f.v.proc.Vmstat()
	if errors.Is(err, fs.ErrNotExist) {
		return mem, capacity // no /proc/vmstat: absent, no points
	}
	if err != nil {
		errs.AddPartial(p.vmstatPts, fmt.Errorf("node memory: %w", err))
		return mem, capacity
	}
	mem.OOMKills, mem.PgFault, mem.PgMajFault = vm.OOMKill, vm.PgFault, vm.PgMajFault
	return mem, capacity
}

// nodeUsageV2 is the v2 node rule: the root's memory.stat when it has anon
// and file, else the same quantities from /proc/meminfo (mi may be empty).
func nodeUsageV2(mem cgroupfs.MemoryStat, mi procfs.Meminfo) cgroupfs.MemoryStat {
	if mem.Anon.OK && mem.File.OK {
		mem.Usage = cgroupfs.Some(mem.Anon.V + mem.File.V)
		return mem
	}
	if !mi.ActiveAnon.OK || !mi.InactiveAnon.OK || !mi.ActiveFile.OK || !mi.InactiveFile.OK {
		return mem
	}
	anon := mi.ActiveAnon.V + mi.InactiveAnon.V
	file := mi.ActiveFile.V + mi.InactiveFile.V
	return cgroupfs.MemoryStat{
		Usage:        cgroupfs.Some(anon + file),
		InactiveFile: mi.InactiveFile,
		Anon:         cgroupfs.Some(anon),
		File:         cgroupfs.Some(file),
		MappedFile:   mi.Mapped,
		Swap:         mem.Swap,
	}
}

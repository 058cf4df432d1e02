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

type gaugeFn func(*metadata.MetricsBuilder, pcommon.Timestamp, int64)

// memoryRecorders are the memory metrics of one entity kind, as method
// expressions: the node, pods, containers and system containers share one
// recording path and one set of definitions. limit is nil for the node:
// the root cgroup has no limit; a system container has usage and working
// set only (a nil recorder records nothing).
type memoryRecorders struct {
	usage, workingSet, rss, cache, mapped, swap, limit, available, oomKills gaugeFn
	faults                                                                  func(*metadata.MetricsBuilder, pcommon.Timestamp, int64, metadata.AttributeSystemPagingFaultType)
	refaults                                                                func(*metadata.MetricsBuilder, pcommon.Timestamp, int64, metadata.AttributeLinuxMemoryLru)
}

var memoryRec = [...]memoryRecorders{
	kindNode: {
		usage: mbT.RecordK8sNodeMemoryUsageDataPoint, workingSet: mbT.RecordK8sNodeMemoryWorkingSetDataPoint,
		rss: mbT.RecordK8sNodeMemoryRssDataPoint, cache: mbT.RecordK8sNodeMemoryCacheDataPoint,
		mapped: mbT.RecordK8sNodeMemoryMappedFileDataPoint, swap: mbT.RecordK8sNodeMemorySwapDataPoint,
		available: mbT.RecordK8sNodeMemoryAvailableDataPoint, oomKills: mbT.RecordK8sNodeMemoryOomKillsDataPoint,
		faults: mbT.RecordK8sNodePagingFaultsDataPoint,
	},
	kindPod: {
		usage: mbT.RecordK8sPodMemoryUsageDataPoint, workingSet: mbT.RecordK8sPodMemoryWorkingSetDataPoint,
		rss: mbT.RecordK8sPodMemoryRssDataPoint, cache: mbT.RecordK8sPodMemoryCacheDataPoint,
		mapped: mbT.RecordK8sPodMemoryMappedFileDataPoint, swap: mbT.RecordK8sPodMemorySwapDataPoint,
		limit: mbT.RecordK8sPodMemoryLimitDataPoint, available: mbT.RecordK8sPodMemoryAvailableDataPoint,
		oomKills: mbT.RecordK8sPodMemoryOomKillsDataPoint, faults: mbT.RecordK8sPodPagingFaultsDataPoint,
		refaults: mbT.RecordK8sPodMemoryRefaultsDataPoint,
	},
	kindContainer: {
		usage: mbT.RecordContainerMemoryUsageDataPoint, workingSet: mbT.RecordContainerMemoryWorkingSetDataPoint,
		rss: mbT.RecordContainerMemoryRssDataPoint, cache: mbT.RecordContainerMemoryCacheDataPoint,
		mapped: mbT.RecordContainerMemoryMappedFileDataPoint, swap: mbT.RecordContainerMemorySwapDataPoint,
		limit: mbT.RecordContainerMemoryLimitDataPoint, available: mbT.RecordContainerMemoryAvailableDataPoint,
		oomKills: mbT.RecordContainerMemoryOomKillsDataPoint, faults: mbT.RecordContainerPagingFaultsDataPoint,
		refaults: mbT.RecordContainerMemoryRefaultsDataPoint,
	},
	// A system container has the two the kubelet's summary has for it.
	kindSystem: {usage: mbT.RecordK8sNodeSystemContainerMemoryUsageDataPoint, workingSet: mbT.RecordK8sNodeSystemContainerMemoryWorkingSetDataPoint},
}

// memoryMetrics are the memory metrics of one kind that are enabled.
type memoryMetrics struct {
	usage, workingSet, rss, cache, mapped, swap, limit, available, oomKills, faults, refaults bool
}

// memoryEnabled is which of kind k's recorders (memoryRec) record an
// enabled metric.
func memoryEnabled(k cgroupKind, m *metadata.MetricsConfig) memoryMetrics {
	r := &memoryRec[k]
	on := func(rec any) bool { return enabled(m, rec) }
	return memoryMetrics{
		usage: on(r.usage), workingSet: on(r.workingSet), rss: on(r.rss), cache: on(r.cache), mapped: on(r.mapped),
		swap: on(r.swap), limit: on(r.limit), available: on(r.available), oomKills: on(r.oomKills), faults: on(r.faults),
		refaults: on(r.refaults),
	}
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
func planMemory(k cgroupKind, m *metadata.MetricsConfig, statsV1 bool) memoryPlan {
	var p memoryPlan
	e := memoryEnabled(k, m)
	ws := e.workingSet || e.available
	p.want = cgroupfs.MemoryWant{
		Usage: e.usage || ws,
		Stat:  ws || e.rss || e.cache || e.mapped || e.faults || e.refaults,
		Swap:  e.swap,
		Limit: e.limit || e.available,
		OOM:   e.oomKills,
	}
	p.pts = count(e.usage, e.workingSet, e.rss, e.cache, e.mapped, e.swap, e.limit, e.available, e.oomKills) + 2*count(e.faults, e.refaults)
	if k != kindNode {
		return p
	}
	p.want.Limit, p.want.OOM = false, false          // the root has no limit; kills from vmstat
	p.want.Stat = ws || e.rss || e.cache || e.mapped // faults from vmstat
	p.vmstat = e.oomKills || e.faults
	p.vmstatPts = count(e.oomKills) + 2*count(e.faults)
	p.meminfo = e.available
	p.meminfoPts = count(e.available)
	if !statsV1 {
		usage := e.usage || ws
		p.want.Usage = false // the v2 root has no memory.current
		p.want.Stat = p.want.Stat || usage
		if e.swap {
			p.meminfo = true // SwapTotal - SwapFree
			p.meminfoPts += count(e.swap)
		}
		p.meminfoFallback = usage || e.rss || e.cache || e.mapped
		p.fallbackPts = count(e.usage, e.workingSet, e.rss, e.cache, e.mapped)
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
	plan [numKinds]memoryPlan
	cur  cgroupfs.MemoryStat
	err  error
}

func newMemoryFamily(v *env, m *metadata.MetricsConfig, slot int) family {
	f := &memoryFamily{v: v, slot: slot}
	any := false
	for k := range f.plan {
		f.plan[k] = planMemory(cgroupKind(k), m, v.layout.StatsV1())
		any = any || f.plan[k].pts > 0
	}
	if !any {
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

func recordIf(mb *metadata.MetricsBuilder, fn gaugeFn, ts pcommon.Timestamp, v cgroupfs.U64) {
	if fn != nil && v.OK {
		fn(mb, ts, calc.ClampInt64(v.V))
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
	rec, mb, ts := &memoryRec[e.kind], f.v.mb, e.ts
	recordIf(mb, rec.usage, ts, mem.Usage)
	recordIf(mb, rec.rss, ts, mem.Anon)
	recordIf(mb, rec.cache, ts, mem.File)
	recordIf(mb, rec.mapped, ts, mem.MappedFile)
	recordIf(mb, rec.swap, ts, mem.Swap)
	recordIf(mb, rec.oomKills, ts, mem.OOMKills)
	if rec.limit != nil && mem.Limit.Finite() {
		rec.limit(mb, ts, calc.ClampInt64(mem.Limit.V))
	}
	if rec.faults != nil && mem.PgFault.OK && mem.PgMajFault.OK {
		rec.faults(mb, ts, calc.ClampInt64(mem.PgMajFault.V), metadata.AttributeSystemPagingFaultTypeMajor)
		// The kernel's pgfault counts major faults too.
		rec.faults(mb, ts, calc.ClampInt64(calc.Available(mem.PgFault.V, mem.PgMajFault.V)), metadata.AttributeSystemPagingFaultTypeMinor)
	}
	if rec.refaults != nil {
		if mem.RefaultAnon.OK {
			rec.refaults(mb, ts, calc.ClampInt64(mem.RefaultAnon.V), metadata.AttributeLinuxMemoryLruAnon)
		}
		if mem.RefaultFile.OK {
			rec.refaults(mb, ts, calc.ClampInt64(mem.RefaultFile.V), metadata.AttributeLinuxMemoryLruFile)
		}
	}
	if !mem.Usage.OK || !mem.InactiveFile.OK {
		return
	}
	ws := calc.WorkingSet(mem.Usage.V, mem.InactiveFile.V)
	rec.workingSet(mb, ts, calc.ClampInt64(ws))
	if rec.available != nil && capacity.Finite() {
		rec.available(mb, ts, calc.ClampInt64(calc.Available(capacity.V, ws)))
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
	fallback := p.meminfoFallback && !mem.Usage.OK && !(mem.Anon.OK && mem.File.OK)
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

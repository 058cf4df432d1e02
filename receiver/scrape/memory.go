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
// expressions: the node, pods and containers share one recording path and
// one set of definitions. limit is nil for the node: the root cgroup has
// no limit.
type memoryRecorders struct {
	usage, workingSet, rss, cache, mapped, swap, limit, available, oomKills gaugeFn
	faults                                                                  func(*metadata.MetricsBuilder, pcommon.Timestamp, int64, metadata.AttributeSystemPagingFaultType)
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
	},
	kindContainer: {
		usage: mbT.RecordContainerMemoryUsageDataPoint, workingSet: mbT.RecordContainerMemoryWorkingSetDataPoint,
		rss: mbT.RecordContainerMemoryRssDataPoint, cache: mbT.RecordContainerMemoryCacheDataPoint,
		mapped: mbT.RecordContainerMemoryMappedFileDataPoint, swap: mbT.RecordContainerMemorySwapDataPoint,
		limit: mbT.RecordContainerMemoryLimitDataPoint, available: mbT.RecordContainerMemoryAvailableDataPoint,
		oomKills: mbT.RecordContainerMemoryOomKillsDataPoint, faults: mbT.RecordContainerPagingFaultsDataPoint,
	},
}

// readMemory reads an entity's memory accounting. On v1 a pod's OOM kills
// are summed over its subtree, since the kernel counts a kill only in the
// victim's own cgroup there (v2's memory.events is already hierarchical).
func (s *Scraper) readMemory(e entity, want cgroupfs.MemoryWant) (cgroupfs.MemoryStat, error) {
	mem, err := s.reader.Memory(e.rel, want)
	if err != nil || e.kind != kindPod || !want.OOM || !s.layout.StatsV1() {
		return mem, err
	}
	if e.st.oom == nil {
		e.st.oom = &oomTree{}
	}
	mem.OOMKills, err = e.st.oom.update(func(fn func(string, uint64)) error { return s.reader.OOMKillsTreeV1(e.rel, fn) })
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
		fn(mb, ts, clampInt64(v.V))
	}
}

// recordMemory records an entity's memory points with one definition for
// every entity: working set = usage - inactive file, floored at 0;
// available = limit - working set where a finite limit exists. A value the
// kernel did not provide gives no point.
func (s *Scraper) recordMemory(ts pcommon.Timestamp, e entity, p *kindPlan, mem cgroupfs.MemoryStat, errs *scrapererror.ScrapeErrors) {
	capacity := mem.Limit
	if e.kind == kindNode {
		mem, capacity = s.nodeMemory(p, mem, errs)
	}
	rec, mb := &memoryRec[e.kind], s.mb
	recordIf(mb, rec.usage, ts, mem.Usage)
	recordIf(mb, rec.rss, ts, mem.Anon)
	recordIf(mb, rec.cache, ts, mem.File)
	recordIf(mb, rec.mapped, ts, mem.MappedFile)
	recordIf(mb, rec.swap, ts, mem.Swap)
	recordIf(mb, rec.oomKills, ts, mem.OOMKills)
	if rec.limit != nil && mem.Limit.Finite() {
		rec.limit(mb, ts, clampInt64(mem.Limit.V))
	}
	if mem.PgFault.OK && mem.PgMajFault.OK {
		rec.faults(mb, ts, clampInt64(mem.PgMajFault.V), metadata.AttributeSystemPagingFaultTypeMajor)
		// The kernel's pgfault counts major faults too.
		rec.faults(mb, ts, clampInt64(calc.Available(mem.PgFault.V, mem.PgMajFault.V)), metadata.AttributeSystemPagingFaultTypeMinor)
	}
	if !mem.Usage.OK || !mem.InactiveFile.OK {
		return
	}
	ws := calc.WorkingSet(mem.Usage.V, mem.InactiveFile.V)
	rec.workingSet(mb, ts, clampInt64(ws))
	if capacity.Finite() {
		rec.available(mb, ts, clampInt64(calc.Available(capacity.V, ws)))
	}
}

// nodeMemory applies the node rules. Usage where the root cgroup has no
// usage file (cgroup v2): anon + file from the root's memory.stat, or the
// same sum from /proc/meminfo's LRU lists when the root has no memory.stat;
// never MemTotal - MemFree, which also counts kernel memory and buffers.
// Swap on v2 is SwapTotal - SwapFree. The node's capacity for available is
// MemTotal; its OOM kills and faults
// come from /proc/vmstat, the only place that counts them node-wide.
func (s *Scraper) nodeMemory(p *kindPlan, mem cgroupfs.MemoryStat, errs *scrapererror.ScrapeErrors) (cgroupfs.MemoryStat, cgroupfs.Limit) {
	mem.Limit = cgroupfs.Limit{} // the root cgroup has no limit
	var capacity cgroupfs.Limit
	var mi procfs.Meminfo
	fallback := p.meminfoFallback && !mem.Usage.OK && !(mem.Anon.OK && mem.File.OK)
	if p.meminfo || fallback {
		var err error
		if mi, err = s.proc.Meminfo(); err != nil {
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
	if !s.layout.StatsV1() && !mem.Swap.OK && mi.SwapTotal.OK && mi.SwapFree.OK {
		// The v2 root has no memory.swap.current: swap in use on the node.
		mem.Swap = cgroupfs.Some(calc.Available(mi.SwapTotal.V, mi.SwapFree.V))
	}
	mem.OOMKills, mem.PgFault, mem.PgMajFault = cgroupfs.U64{}, cgroupfs.U64{}, cgroupfs.U64{}
	if !p.vmstat {
		return mem, capacity
	}
	vm, err := s.proc.Vmstat()
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

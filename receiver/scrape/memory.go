// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/calc"
	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
)

// memoryPoints is what a failed memory read costs: usage, working set.
const memoryPoints = 2

// memoryRecorders are the memory metrics of one entity kind.
type memoryRecorders struct {
	usage      func(pcommon.Timestamp, int64)
	workingSet func(pcommon.Timestamp, int64)
}

func (s *Scraper) memoryRecordersFor(k cgroupKind) memoryRecorders {
	mb := s.mb
	switch k {
	case kindNode:
		return memoryRecorders{mb.RecordK8sNodeMemoryUsageDataPoint, mb.RecordK8sNodeMemoryWorkingSetDataPoint}
	case kindPod:
		return memoryRecorders{mb.RecordK8sPodMemoryUsageDataPoint, mb.RecordK8sPodMemoryWorkingSetDataPoint}
	default:
		return memoryRecorders{mb.RecordContainerMemoryUsageDataPoint, mb.RecordContainerMemoryWorkingSetDataPoint}
	}
}

// recordMemory records usage and working set with one definition for every
// entity: working set = usage - inactive file, floored at 0.
func (s *Scraper) recordMemory(ts pcommon.Timestamp, e entity, mem cgroupfs.MemoryStat, errs *scrapererror.ScrapeErrors) {
	if e.kind == kindNode && !mem.Usage.OK {
		mem = s.nodeMemoryV2(mem, errs)
	}
	if !mem.Usage.OK {
		return
	}
	rec := s.memoryRecordersFor(e.kind)
	rec.usage(ts, clampInt64(mem.Usage.V))
	if mem.InactiveFile.OK {
		rec.workingSet(ts, clampInt64(calc.WorkingSet(mem.Usage.V, mem.InactiveFile.V)))
	}
}

// nodeMemoryV2 applies the node rule where the root cgroup has no usage file
// (cgroup v2): usage = anon + file from the root's memory.stat, or the same
// sum from /proc/meminfo when the root has no memory.stat. Never
// MemTotal - MemFree, which also counts kernel memory and buffers.
func (s *Scraper) nodeMemoryV2(mem cgroupfs.MemoryStat, errs *scrapererror.ScrapeErrors) cgroupfs.MemoryStat {
	if mem.Anon.OK && mem.File.OK {
		mem.Usage = cgroupfs.Some(mem.Anon.V + mem.File.V)
		return mem
	}
	mi, err := s.proc.Meminfo()
	if err != nil {
		errs.AddPartial(memoryPoints, fmt.Errorf("node memory: %w", err))
		return mem
	}
	if mi.ActiveAnon == nil || mi.InactiveAnon == nil || mi.ActiveFile == nil || mi.InactiveFile == nil {
		return mem
	}
	mem.Usage = cgroupfs.Some(*mi.ActiveAnon + *mi.InactiveAnon + *mi.ActiveFile + *mi.InactiveFile)
	mem.InactiveFile = cgroupfs.Some(*mi.InactiveFile)
	return mem
}

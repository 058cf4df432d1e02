// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/calc"
	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// recorders are the MetricsBuilder methods of one entity kind, so the node,
// pods and containers share one recording path and one set of definitions.
type recorders struct {
	cpuTime  func(pcommon.Timestamp, float64, metadata.AttributeCPUMode)
	cpuUsage func(pcommon.Timestamp, float64)
	memUsage func(pcommon.Timestamp, int64)
	memWS    func(pcommon.Timestamp, int64)
}

func (s *Scraper) recordersFor(k cgroupKind) recorders {
	mb := s.mb
	switch k {
	case kindNode:
		return recorders{mb.RecordK8sNodeCPUTimeDataPoint, mb.RecordK8sNodeCPUUsageDataPoint,
			mb.RecordK8sNodeMemoryUsageDataPoint, mb.RecordK8sNodeMemoryWorkingSetDataPoint}
	case kindPod:
		return recorders{mb.RecordK8sPodCPUTimeDataPoint, mb.RecordK8sPodCPUUsageDataPoint,
			mb.RecordK8sPodMemoryUsageDataPoint, mb.RecordK8sPodMemoryWorkingSetDataPoint}
	default:
		return recorders{mb.RecordContainerCPUTimeDataPoint, mb.RecordContainerCPUUsageDataPoint,
			mb.RecordContainerMemoryUsageDataPoint, mb.RecordContainerMemoryWorkingSetDataPoint}
	}
}

// Points lost when a read group fails, for scrapererror.AddPartial.
const (
	cpuPoints    = 3 // user time, system time, usage
	memoryPoints = 2 // usage, working set
)

// recordCgroup reads the CPU and memory of one cgroup, then records them.
// Everything is read before anything is recorded, so a cgroup that vanishes
// half-way leaves nothing in the builder. It returns false when the cgroup
// vanished: its points are dropped and reported as a partial error.
func (s *Scraper) recordCgroup(now time.Time, rel string, kind cgroupKind, st *series, name string, errs *scrapererror.ScrapeErrors) bool {
	cpu, cpuErr := s.reader.CPU(rel)
	mem, memErr := s.reader.Memory(rel)
	if errors.Is(cpuErr, cgroupfs.ErrVanished) || errors.Is(memErr, cgroupfs.ErrVanished) {
		errs.AddPartial(cpuPoints+memoryPoints, fmt.Errorf("%s: %w", name, cgroupfs.ErrVanished))
		return false
	}
	ts := pcommon.NewTimestampFromTime(now)
	rec := s.recordersFor(kind)
	if cpuErr != nil {
		errs.AddPartial(cpuPoints, fmt.Errorf("%s: %w", name, cpuErr))
	} else {
		s.recordCPU(ts, now, cpu, st, rec)
	}
	if memErr != nil {
		errs.AddPartial(memoryPoints, fmt.Errorf("%s: %w", name, memErr))
		return true
	}
	if kind == kindNode && !mem.Usage.OK {
		mem = s.nodeMemoryV2(mem, errs)
	}
	if mem.Usage.OK {
		rec.memUsage(ts, clampInt64(mem.Usage.V))
		if mem.InactiveFile.OK {
			rec.memWS(ts, clampInt64(calc.WorkingSet(mem.Usage.V, mem.InactiveFile.V)))
		}
	}
	return true
}

func (s *Scraper) recordCPU(ts pcommon.Timestamp, now time.Time, cpu cgroupfs.CPUStat, st *series, rec recorders) {
	if cpu.User.OK {
		rec.cpuTime(ts, float64(cpu.User.V)/1e9, metadata.AttributeCPUModeUser)
	}
	if cpu.System.OK {
		rec.cpuTime(ts, float64(cpu.System.V)/1e9, metadata.AttributeCPUModeSystem)
	}
	if !cpu.Usage.OK {
		st.hasCPU = false
		return
	}
	cur := calc.Sample{Value: cpu.Usage.V, At: now}
	if st.hasCPU {
		if cores, ok := calc.CPUCores(st.lastCPU, cur); ok {
			rec.cpuUsage(ts, cores)
		}
	}
	st.lastCPU, st.hasCPU = cur, true
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

func clampInt64(v uint64) int64 {
	if v > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(v)
}

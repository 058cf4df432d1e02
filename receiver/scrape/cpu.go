// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/calc"
	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/procfs"
)

// cpuRecorders are the CPU metrics of one entity kind, as method
// expressions of the MetricsBuilder: the node, pods and containers share
// one recording path, and a static table needs no binding and no cache.
type cpuRecorders struct {
	time  func(*metadata.MetricsBuilder, pcommon.Timestamp, float64, metadata.AttributeCPUMode)
	usage func(*metadata.MetricsBuilder, pcommon.Timestamp, float64)
}

var cpuRec = [...]cpuRecorders{
	kindNode:      {mbT.RecordK8sNodeCPUTimeDataPoint, mbT.RecordK8sNodeCPUUsageDataPoint},
	kindPod:       {mbT.RecordK8sPodCPUTimeDataPoint, mbT.RecordK8sPodCPUUsageDataPoint},
	kindContainer: {mbT.RecordContainerCPUTimeDataPoint, mbT.RecordContainerCPUUsageDataPoint},
}

// recordCPU records CPU time by mode and, from the second scrape of the
// entity on, the usage in cores over the real time elapsed since the last.
func (s *Scraper) recordCPU(ts pcommon.Timestamp, now time.Time, e entity, cpu cgroupfs.CPUStat) {
	rec := &cpuRec[e.kind]
	if cpu.Usage.OK && cpu.User.OK && cpu.System.OK {
		// The modes as a split of the precise total (calc.AdjustCPUSplit:
		// v1's are tick-sampled and do not sum to it).
		e.st.cpuSplit = calc.AdjustCPUSplit(e.st.cpuSplit, cpu.Usage.V, cpu.User.V, cpu.System.V)
		cpu.User.V, cpu.System.V = e.st.cpuSplit.User, e.st.cpuSplit.System
	}
	if cpu.User.OK {
		rec.time(s.mb, ts, float64(cpu.User.V)/1e9, metadata.AttributeCPUModeUser)
	}
	if cpu.System.OK {
		rec.time(s.mb, ts, float64(cpu.System.V)/1e9, metadata.AttributeCPUModeSystem)
	}
	if !cpu.Usage.OK {
		e.st.hasCPU = false
		return
	}
	cur := calc.Sample{Value: cpu.Usage.V, At: now}
	if e.st.hasCPU {
		if cores, ok := calc.CPUCores(e.st.lastCPU, cur); ok {
			rec.usage(s.mb, ts, cores)
		}
	}
	e.st.lastCPU, e.st.hasCPU = cur, true
}

// cpuExtra is what one scrape reads for an entity beyond CPU time and
// memory: CFS bandwidth (here), thread states (tasks.go) and PSI (psi.go).
// Each part is read only when a metric that needs it is enabled.
type cpuExtra struct {
	cpuUsage cgroupfs.U64 // total CPU time read before these (tasks.go)

	bw    cgroupfs.CPUBandwidth
	bwErr error

	tasks    procfs.TaskCounts
	tasksOK  bool // the cgroup has a thread list and it was read
	tasksErr error

	psi    [len(psiResources)]cgroupfs.PSI
	psiErr error
}

// cpuExtraState is the scraper's state for these reads: the thread-state
// reader and thread-ID buffer reused across containers and scrapes, the
// per-pod sums of the current scrape and whether PSI unavailability was
// logged.
type cpuExtraState struct {
	states         *procfs.TaskStateReader
	tids           []int
	pods           map[string]*podTasks
	psiUnavailable bool // logged once per receiver
	foreignPIDNS   bool // thread lists showed tasks outside our PID namespace: logged once
}

func newCPUExtraState(proc procfs.FS) cpuExtraState {
	return cpuExtraState{states: proc.NewTaskStateReader(), tids: make([]int, 0, 256), pods: map[string]*podTasks{}}
}

func (s *Scraper) readCPUExtra(e entity, p *kindPlan, x *cpuExtra) {
	if p.bw.Any() {
		x.bw, x.bwErr = s.reader.CPUBandwidth(e.rel, p.bw)
	}
	if p.tasks {
		s.readTasks(e, x)
	}
	if p.psi {
		s.readPSI(e, x)
	}
}

func (s *Scraper) recordCPUExtra(ts pcommon.Timestamp, now time.Time, e entity, p *kindPlan, x *cpuExtra, errs *scrapererror.ScrapeErrors) {
	switch {
	case x.bwErr != nil:
		errs.AddPartial(p.bwPts, fmt.Errorf("%s: %w", e.name, x.bwErr))
	case p.bw.Any():
		s.recordBandwidth(ts, e.kind, x.bw)
	}
	s.recordTasks(ts, now, e, p, x, errs)
	if p.psi {
		s.recordPSI(ts, e, p, x, errs)
	}
}

// bandwidthRecorders are the CFS bandwidth metrics of pods or containers
// (the node has none), as method expressions.
type bandwidthRecorders struct {
	periods, throttledPeriods func(*metadata.MetricsBuilder, pcommon.Timestamp, int64)
	throttledTime, limit      func(*metadata.MetricsBuilder, pcommon.Timestamp, float64)
	shares, weight            func(*metadata.MetricsBuilder, pcommon.Timestamp, int64)
}

var bandwidthRec = [...]bandwidthRecorders{
	kindPod: {mbT.RecordK8sPodCPUThrottlingPeriodsDataPoint, mbT.RecordK8sPodCPUThrottlingThrottledPeriodsDataPoint,
		mbT.RecordK8sPodCPUThrottlingThrottledTimeDataPoint, mbT.RecordK8sPodCPULimitDataPoint,
		mbT.RecordK8sPodCPUSharesDataPoint, mbT.RecordK8sPodCPUWeightDataPoint},
	kindContainer: {mbT.RecordContainerCPUThrottlingPeriodsDataPoint, mbT.RecordContainerCPUThrottlingThrottledPeriodsDataPoint,
		mbT.RecordContainerCPUThrottlingThrottledTimeDataPoint, mbT.RecordContainerCPULimitDataPoint,
		mbT.RecordContainerCPUSharesDataPoint, mbT.RecordContainerCPUWeightDataPoint},
}

// recordBandwidth records throttling counters (time in seconds on v1 and
// v2), the limit in cores only when a finite quota is set, and the raw
// shares (v1) or weight (v2), each only when its file or key exists.
func (s *Scraper) recordBandwidth(ts pcommon.Timestamp, k cgroupKind, bw cgroupfs.CPUBandwidth) {
	rec, mb := &bandwidthRec[k], s.mb
	if bw.Periods.OK {
		rec.periods(mb, ts, clampInt64(bw.Periods.V))
	}
	if bw.ThrottledPeriods.OK {
		rec.throttledPeriods(mb, ts, clampInt64(bw.ThrottledPeriods.V))
	}
	if bw.ThrottledTime.OK {
		rec.throttledTime(mb, ts, float64(bw.ThrottledTime.V)/1e9)
	}
	if cores, ok := bw.CPULimitCores(); ok {
		rec.limit(mb, ts, cores)
	}
	if bw.Shares.OK {
		rec.shares(mb, ts, clampInt64(bw.Shares.V))
	}
	if bw.Weight.OK {
		rec.weight(mb, ts, clampInt64(bw.Weight.V))
	}
}

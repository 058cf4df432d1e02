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
	"github.com/containerstats/containerstatsreceiver/internal/procfs"
)

// cpuPoints is what a failed CPU read costs: user time, system time, usage.
const cpuPoints = 3

// cpuRecorders are the CPU metrics of one entity kind, so the node, pods and
// containers share one recording path and one set of definitions.
type cpuRecorders struct {
	time  func(pcommon.Timestamp, float64, metadata.AttributeCPUMode)
	usage func(pcommon.Timestamp, float64)
}

func (s *Scraper) cpuRecordersFor(k cgroupKind) cpuRecorders {
	if r := s.recorders.cpu[k]; r != nil {
		return *r
	}
	r := s.newCpuRecorders(k)
	s.recorders.cpu[k] = &r
	return r
}

// newCpuRecorders binds the MetricsBuilder's methods once per kind: a
// method value allocates, so building them per entity per scrape would.
func (s *Scraper) newCpuRecorders(k cgroupKind) cpuRecorders {
	mb := s.mb
	switch k {
	case kindNode:
		return cpuRecorders{mb.RecordK8sNodeCPUTimeDataPoint, mb.RecordK8sNodeCPUUsageDataPoint}
	case kindPod:
		return cpuRecorders{mb.RecordK8sPodCPUTimeDataPoint, mb.RecordK8sPodCPUUsageDataPoint}
	default:
		return cpuRecorders{mb.RecordContainerCPUTimeDataPoint, mb.RecordContainerCPUUsageDataPoint}
	}
}

// recordCPU records CPU time by mode and, from the second scrape of the
// entity on, the usage in cores over the real time elapsed since the last.
func (s *Scraper) recordCPU(ts pcommon.Timestamp, now time.Time, e entity, cpu cgroupfs.CPUStat) {
	rec := s.cpuRecordersFor(e.kind)
	if cpu.User.OK {
		rec.time(ts, float64(cpu.User.V)/1e9, metadata.AttributeCPUModeUser)
	}
	if cpu.System.OK {
		rec.time(ts, float64(cpu.System.V)/1e9, metadata.AttributeCPUModeSystem)
	}
	if !cpu.Usage.OK {
		e.st.hasCPU = false
		return
	}
	cur := calc.Sample{Value: cpu.Usage.V, At: now}
	if e.st.hasCPU {
		if cores, ok := calc.CPUCores(e.st.lastCPU, cur); ok {
			rec.usage(ts, cores)
		}
	}
	e.st.lastCPU, e.st.hasCPU = cur, true
}

// bandwidthPoints is what a failed CFS bandwidth read costs: periods,
// throttled periods, throttled time, limit, shares or weight.
const bandwidthPoints = 5

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

func (x *cpuExtra) vanished() bool {
	return errors.Is(x.bwErr, cgroupfs.ErrVanished) || errors.Is(x.tasksErr, cgroupfs.ErrVanished) ||
		errors.Is(x.psiErr, cgroupfs.ErrVanished)
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

func (s *Scraper) readCPUExtra(e entity, x *cpuExtra) {
	if want := s.cpuWant(e.kind); want.Any() {
		x.bw, x.bwErr = s.reader.CPUBandwidth(e.rel, want)
	}
	if e.kind == kindContainer && s.wantTasks() {
		s.readTasks(e, x)
	}
	if s.wantPSI(e.kind) {
		s.readPSI(e, x)
	}
}

func (s *Scraper) recordCPUExtra(ts pcommon.Timestamp, now time.Time, e entity, x *cpuExtra, errs *scrapererror.ScrapeErrors) {
	if x.bwErr != nil {
		errs.AddPartial(bandwidthPoints, fmt.Errorf("%s: %w", e.name, x.bwErr))
	} else if e.kind != kindNode {
		s.recordBandwidth(ts, e.kind, x.bw)
	}
	s.recordTasks(ts, now, e, x, errs)
	s.recordPSI(ts, e, x, errs)
}

// cpuWant says which CFS bandwidth files the enabled metrics of kind need.
// The node has none: the root cgroup has no quota.
func (s *Scraper) cpuWant(k cgroupKind) cgroupfs.CPUWant {
	m := &s.opts.MetricsBuilderConfig.Metrics
	switch k {
	case kindContainer:
		return cgroupfs.CPUWant{
			Throttling: m.ContainerCPUThrottlingPeriods.Enabled || m.ContainerCPUThrottlingThrottledPeriods.Enabled || m.ContainerCPUThrottlingThrottledTime.Enabled,
			Limit:      m.ContainerCPULimit.Enabled,
			Shares:     m.ContainerCPUShares.Enabled || m.ContainerCPUWeight.Enabled,
		}
	case kindPod:
		return cgroupfs.CPUWant{
			Throttling: m.K8sPodCPUThrottlingPeriods.Enabled || m.K8sPodCPUThrottlingThrottledPeriods.Enabled || m.K8sPodCPUThrottlingThrottledTime.Enabled,
			Limit:      m.K8sPodCPULimit.Enabled,
			Shares:     m.K8sPodCPUShares.Enabled || m.K8sPodCPUWeight.Enabled,
		}
	}
	return cgroupfs.CPUWant{}
}

// bandwidthRecorders are the CFS bandwidth metrics of pods or containers.
type bandwidthRecorders struct {
	periods, throttledPeriods func(pcommon.Timestamp, int64)
	throttledTime, limit      func(pcommon.Timestamp, float64)
	shares, weight            func(pcommon.Timestamp, int64)
}

func (s *Scraper) bandwidthRecordersFor(k cgroupKind) bandwidthRecorders {
	if r := s.recorders.bandwidth[k]; r != nil {
		return *r
	}
	r := s.newBandwidthRecorders(k)
	s.recorders.bandwidth[k] = &r
	return r
}

// newBandwidthRecorders binds the MetricsBuilder's methods once per kind: a
// method value allocates, so building them per entity per scrape would.
func (s *Scraper) newBandwidthRecorders(k cgroupKind) bandwidthRecorders {
	mb := s.mb
	if k == kindPod {
		return bandwidthRecorders{mb.RecordK8sPodCPUThrottlingPeriodsDataPoint, mb.RecordK8sPodCPUThrottlingThrottledPeriodsDataPoint,
			mb.RecordK8sPodCPUThrottlingThrottledTimeDataPoint, mb.RecordK8sPodCPULimitDataPoint,
			mb.RecordK8sPodCPUSharesDataPoint, mb.RecordK8sPodCPUWeightDataPoint}
	}
	return bandwidthRecorders{mb.RecordContainerCPUThrottlingPeriodsDataPoint, mb.RecordContainerCPUThrottlingThrottledPeriodsDataPoint,
		mb.RecordContainerCPUThrottlingThrottledTimeDataPoint, mb.RecordContainerCPULimitDataPoint,
		mb.RecordContainerCPUSharesDataPoint, mb.RecordContainerCPUWeightDataPoint}
}

// recordBandwidth records throttling counters (time in seconds on v1 and
// v2), the limit in cores only when a finite quota is set, and the raw
// shares (v1) or weight (v2), each only when its file or key exists.
func (s *Scraper) recordBandwidth(ts pcommon.Timestamp, k cgroupKind, bw cgroupfs.CPUBandwidth) {
	rec := s.bandwidthRecordersFor(k)
	if bw.Periods.OK {
		rec.periods(ts, clampInt64(bw.Periods.V))
	}
	if bw.ThrottledPeriods.OK {
		rec.throttledPeriods(ts, clampInt64(bw.ThrottledPeriods.V))
	}
	if bw.ThrottledTime.OK {
		rec.throttledTime(ts, float64(bw.ThrottledTime.V)/1e9)
	}
	if cores, ok := bw.CPULimitCores(); ok {
		rec.limit(ts, cores)
	}
	if bw.Shares.OK {
		rec.shares(ts, clampInt64(bw.Shares.V))
	}
	if bw.Weight.OK {
		rec.weight(ts, clampInt64(bw.Weight.V))
	}
}

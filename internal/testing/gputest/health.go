//go:build cgo

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package gputest // import "github.com/containerstats/containerstatsreceiver/internal/testing/gputest"

import (
	"encoding/binary"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
)

// MIGInstanceID is the GPU instance ID of MIG slot j.
func MIGInstanceID(j int) int { return 2*j + 1 }

// ClockEventReasons are the clock-event masks GPUs 0.. report (cycled).
var ClockEventReasons = []uint64{
	nvml.ClocksEventReasonSwPowerCap,
	nvml.ClocksEventReasonGpuIdle | nvml.ClocksThrottleReasonHwThermalSlowdown,
	nvml.ClocksEventReasonNone,
	nvml.ClocksEventReasonDisplayClockSetting | nvml.ClocksThrottleReasonHwSlowdown,
}

// setHealth gives GPU i its health readings (each distinct per figure and
// GPU; u = i):
//
//	SM clock 1100+10u MHz (max spec.MaxSMMHz), memory clock spec.MemMHz-2-u (max spec.MemMHz)
//	clock-event reasons ClockEventReasons[u%4]
//	PCIe TX 2099+100u KB/s, RX 516+100u KB/s, replays 3+u
//	ECC volatile corrected 110+u, uncorrected 20+u; aggregate corrected 1110+u, uncorrected 220+u
//	remapped rows correctable 5+u, uncorrectable 1+u, pending (u==1), failure (u==2)
//	power limit spec.PowerCapW-u W, fan 37+u %, performance state P(u%4), memory temperature 35+u C
//	NVLink l (first two up): TX 1,000,000+1000u+10l KiB, RX 2,000,000+1000u+10l KiB
func (n *Node) setHealth(i int, d *dgxa100.Device) {
	spec, u := n.spec, uint32(i)
	notSup := nvml.ERROR_NOT_SUPPORTED
	d.GetClockInfoFunc = func(t nvml.ClockType) (uint32, nvml.Return) {
		switch t {
		case nvml.CLOCK_SM:
			return 1100 + 10*u, nvml.SUCCESS
		case nvml.CLOCK_MEM:
			return spec.MemMHz - 2 - u, nvml.SUCCESS
		}
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	d.GetMaxClockInfoFunc = func(t nvml.ClockType) (uint32, nvml.Return) {
		switch t {
		case nvml.CLOCK_SM:
			return spec.MaxSMMHz, nvml.SUCCESS
		case nvml.CLOCK_MEM:
			return spec.MemMHz, nvml.SUCCESS
		}
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { return ClockEventReasons[i%4], nvml.SUCCESS }
	d.GetPcieThroughputFunc = func(c nvml.PcieUtilCounter) (uint32, nvml.Return) {
		if c == nvml.PCIE_UTIL_TX_BYTES {
			return 2099 + 100*u, nvml.SUCCESS
		}
		return 516 + 100*u, nvml.SUCCESS
	}
	d.GetPcieReplayCounterFunc = func() (int, nvml.Return) { return 3 + i, nvml.SUCCESS }
	d.GetTotalEccErrorsFunc = func(t nvml.MemoryErrorType, c nvml.EccCounterType) (uint64, nvml.Return) {
		if !spec.ECC {
			return 0, notSup
		}
		v := map[[2]int]uint64{{0, 0}: 110, {0, 1}: 20, {1, 0}: 1110, {1, 1}: 220}[[2]int{int(c), int(t)}]
		return v + uint64(u), nvml.SUCCESS
	}
	d.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) {
		if !spec.ECC {
			return 0, 0, false, false, notSup
		}
		return 5 + i, 1 + i, i == 1, i == 2, nvml.SUCCESS
	}
	d.GetPowerManagementLimitFunc = func() (uint32, nvml.Return) { return (spec.PowerCapW - u) * 1000, nvml.SUCCESS }
	d.GetFanSpeedFunc = func() (uint32, nvml.Return) {
		if !spec.Fan {
			return 0, notSup
		}
		return 37 + u, nvml.SUCCESS
	}
	d.GetPerformanceStateFunc = func() (nvml.Pstates, nvml.Return) { return nvml.Pstates(i % 4), nvml.SUCCESS }
	d.GetNvLinkStateFunc = func(l int) (nvml.EnableState, nvml.Return) {
		switch {
		case spec.NVLinks == 0:
			return 0, notSup
		case l < 0 || l >= spec.MaxLinks:
			return 0, nvml.ERROR_INVALID_ARGUMENT
		case l < 2:
			return nvml.FEATURE_ENABLED, nvml.SUCCESS
		}
		return nvml.FEATURE_DISABLED, nvml.SUCCESS
	}
	d.GetFieldValuesFunc = func(fv []nvml.FieldValue) nvml.Return {
		for k := range fv {
			f := &fv[k]
			f.NvmlReturn = uint32(nvml.SUCCESS)
			switch {
			case f.FieldId == nvml.FI_DEV_MEMORY_TEMP && spec.MemTemp:
				setUint(f, nvml.VALUE_TYPE_UNSIGNED_INT, uint64(35+u))
			case f.FieldId == nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_TX && spec.NVLinks > 0:
				setUint(f, nvml.VALUE_TYPE_UNSIGNED_LONG_LONG, uint64(1_000_000+1000*u+10*f.ScopeId))
			case f.FieldId == nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_RX && spec.NVLinks > 0:
				setUint(f, nvml.VALUE_TYPE_UNSIGNED_LONG_LONG, uint64(2_000_000+1000*u+10*f.ScopeId))
			default:
				f.NvmlReturn = uint32(notSup)
			}
		}
		return nvml.SUCCESS
	}
	d.GpmQueryDeviceSupportFunc = func() (nvml.GpmSupport, nvml.Return) {
		s := nvml.GpmSupport{Version: nvml.GPM_SUPPORT_VERSION}
		if spec.GPM {
			s.IsSupportedDevice = 1
		}
		return s, nvml.SUCCESS
	}
	d.GpmSampleGetFunc = func(s nvml.GpmSample) nvml.Return {
		if !spec.GPM {
			return notSup
		}
		return n.take(s, i, -1)
	}
	d.GpmMigSampleGetFunc = func(gi int, s nvml.GpmSample) nvml.Return {
		if !spec.GPM {
			return notSup
		}
		return n.take(s, i, gi)
	}
	d.RegisterEventsFunc = func(types uint64, set nvml.EventSet) nvml.Return {
		if types != nvml.EventTypeXidCriticalError || set != n.Events {
			return nvml.ERROR_INVALID_ARGUMENT
		}
		return nvml.SUCCESS
	}
}

func setUint(f *nvml.FieldValue, t nvml.ValueType, v uint64) {
	f.ValueType = uint32(t)
	binary.NativeEndian.PutUint64(f.Value[:], v)
}

// Lose makes GPU i fall off the bus: from now on every reading of it
// answers ERROR_GPU_IS_LOST (its UUID, which the driver caches, still
// answers).
func (n *Node) Lose(i int) {
	d := n.GPUs[i]
	lost := nvml.ERROR_GPU_IS_LOST
	d.GetNameFunc = func() (string, nvml.Return) { return "", lost }
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, lost }
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, lost }
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 0, lost }
	d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 0, lost }
	d.GetClockInfoFunc = func(nvml.ClockType) (uint32, nvml.Return) { return 0, lost }
	d.GetTotalEccErrorsFunc = func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) { return 0, lost }
	d.GetMigModeFunc = func() (int, int, nvml.Return) { return 0, 0, lost }
	d.GpmQueryDeviceSupportFunc = func() (nvml.GpmSupport, nvml.Return) { return nvml.GpmSupport{}, lost }
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, lost }
}

// gpmSample is a simulated GPM sample: which device (and GPU instance) it
// was taken of, and when (the node's tick).
type gpmSample struct {
	node  *Node
	taken bool
	gpu   int
	gi    int
	tick  int
	freed bool
}

func (s *gpmSample) Free() nvml.Return {
	s.node.gpmMu.Lock()
	defer s.node.gpmMu.Unlock()
	if s.freed {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	s.freed = true
	s.node.gpmLive--
	return nvml.SUCCESS
}

func (s *gpmSample) Get(nvml.Device) nvml.Return         { return nvml.ERROR_NOT_SUPPORTED }
func (s *gpmSample) MigGet(nvml.Device, int) nvml.Return { return nvml.ERROR_NOT_SUPPORTED }

func (n *Node) take(s nvml.GpmSample, gpu, gi int) nvml.Return {
	gs, ok := s.(*gpmSample)
	if !ok || gs.freed {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	n.gpmMu.Lock()
	defer n.gpmMu.Unlock()
	n.gpmTicks++
	gs.taken, gs.gpu, gs.gi, gs.tick = true, gpu, gi, n.gpmTicks
	return nvml.SUCCESS
}

// GPMPercent is the GPM metric a simulated GPU (gi < 0) or MIG instance
// reports: 10(i+1) + 3(gi+1) + metric/2 percent. FP64 is not supported on
// MIG instances (per-metric ERROR_NOT_SUPPORTED).
func GPMPercent(i, gi int, m nvml.GpmMetricId) (float64, nvml.Return) {
	if gi >= 0 && m == nvml.GPM_METRIC_FP64_UTIL {
		return 0, nvml.ERROR_NOT_SUPPORTED
	}
	return float64(10*(i+1)+3*(gi+1)) + float64(m)/2, nvml.SUCCESS
}

func (n *Node) gpmMetricsGet(mg *nvml.GpmMetricsGetType) nvml.Return {
	s1, ok1 := mg.Sample1.(*gpmSample)
	s2, ok2 := mg.Sample2.(*gpmSample)
	switch {
	case !ok1 || !ok2 || !s1.taken || !s2.taken || s1.freed || s2.freed:
		return nvml.ERROR_INVALID_ARGUMENT
	case s1.gpu != s2.gpu || s1.gi != s2.gi || s1.tick >= s2.tick:
		// Samples of different devices, or in the wrong order.
		return nvml.ERROR_INVALID_ARGUMENT
	case mg.NumMetrics == 0 || mg.NumMetrics > uint32(len(mg.Metrics)):
		return nvml.ERROR_INVALID_ARGUMENT
	}
	for k := 0; k < int(mg.NumMetrics); k++ {
		m := &mg.Metrics[k]
		v, ret := GPMPercent(s1.gpu, s1.gi, nvml.GpmMetricId(m.MetricId))
		m.Value, m.NvmlReturn = v, uint32(ret)
	}
	return nvml.SUCCESS
}

// GPMLive is the number of GPM samples allocated and not freed.
func (n *Node) GPMLive() int {
	n.gpmMu.Lock()
	defer n.gpmMu.Unlock()
	return n.gpmLive
}

// EventSet is a simulated NVML event set: events injected with Inject
// are handed out by Wait in order; with Hang set, Wait blocks until
// Release (a driver that never returns).
type EventSet struct {
	mu      sync.Mutex
	queue   []nvml.EventData
	waits   int // Wait calls
	popped  int // events handed out
	notify  chan struct{}
	hang    bool
	release chan struct{}
	freed   bool
}

func newEventSet() *EventSet {
	return &EventSet{notify: make(chan struct{}, 1), release: make(chan struct{})}
}

// Hang makes every later Wait block until Release.
func (e *EventSet) Hang() {
	e.mu.Lock()
	e.hang = true
	e.mu.Unlock()
}

// Release ends Hang; hanging Waits return ERROR_TIMEOUT.
func (e *EventSet) Release() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.hang {
		e.hang = false
		close(e.release)
	}
}

// Inject queues n XID events of code xid on GPU i of node.
func (n *Node) InjectXID(i int, xid uint64, count int) {
	e := n.Events
	e.mu.Lock()
	for k := 0; k < count; k++ {
		e.queue = append(e.queue, nvml.EventData{Device: n.GPUs[i], EventType: nvml.EventTypeXidCriticalError, EventData: xid})
	}
	e.mu.Unlock()
	select {
	case e.notify <- struct{}{}:
	default:
	}
}

// Drained reports whether every injected event was handed out and the
// waiter came back for more (so it has counted them all).
func (e *EventSet) Drained() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.queue) == 0 && e.waits > e.popped
}

// Waits is the number of Wait calls so far (a hanging one included).
func (e *EventSet) Waits() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.waits
}

// Freed reports whether Free was called.
func (e *EventSet) Freed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.freed
}

func (e *EventSet) Free() nvml.Return {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.freed = true
	return nvml.SUCCESS
}

func (e *EventSet) Wait(timeoutMs uint32) (nvml.EventData, nvml.Return) {
	e.mu.Lock()
	e.waits++
	if e.hang {
		rel := e.release
		e.mu.Unlock()
		<-rel
		return nvml.EventData{}, nvml.ERROR_TIMEOUT
	}
	if len(e.queue) > 0 {
		ev := e.queue[0]
		e.queue = e.queue[1:]
		e.popped++
		e.mu.Unlock()
		return ev, nvml.SUCCESS
	}
	e.mu.Unlock()
	select {
	case <-e.notify:
		e.mu.Lock()
		defer e.mu.Unlock()
		if len(e.queue) > 0 {
			ev := e.queue[0]
			e.queue = e.queue[1:]
			e.popped++
			return ev, nvml.SUCCESS
		}
	case <-time.After(min(time.Duration(timeoutMs)*time.Millisecond, 20*time.Millisecond)):
		// A simulated driver times out early (tests need not wait a
		// second for the watcher to see its cancellation).
	}
	return nvml.EventData{}, nvml.ERROR_TIMEOUT
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package gpu // import "github.com/containerstats/containerstatsreceiver/internal/gpu"

import (
	"context"
	"math"
	"sort"

	"github.com/containerstats/containerstatsreceiver/internal/opt"
	"github.com/containerstats/containerstatsreceiver/internal/podresources"
)

// Vendor is reported as hw.vendor.
const Vendor = "NVIDIA"

// Opt is a value with its presence: OK is false when NVML did not give it
// (not supported on this device, or the call failed). It is the receiver's
// one optional-value type, opt.Value.
type Opt[T any] = opt.Value[T]

func some[T any](v T) Opt[T] { return opt.Some(v) }

// Device is one GPU or one MIG instance (Parent set to its GPU's UUID).
type Device struct {
	UUID   string
	Parent string // MIG instances: the GPU's UUID
	Model  string // NVML name; empty when NVML did not give it

	MemoryUsed  Opt[uint64] // bytes
	MemoryTotal Opt[uint64] // bytes
	// Utilization, EncoderUtilization, DecoderUtilization and
	// MemoryUtilization are ratios 0..1.
	Utilization Opt[float64]
	// MemoryControllerUtilization is the ratio of time device memory was
	// read or written (nvmlDeviceGetUtilizationRates memory).
	MemoryControllerUtilization Opt[float64]
	EncoderUtilization          Opt[float64]
	DecoderUtilization          Opt[float64]
	PowerW                      Opt[float64]
	EnergyJ                     Opt[float64] // since the driver was loaded
	TemperatureC                Opt[float64]

	// Health and speed (whole GPUs; NVML supports none of them on MIG
	// instances except the GPM activities).
	ClockSMMHz, ClockMemMHz       Opt[float64]
	MaxClockSMMHz, MaxClockMemMHz Opt[float64]
	// ClockEventReasons is NVML's bit mask of why the clocks are below
	// their maximum (nvmlClocksEventReason*).
	ClockEventReasons    Opt[uint64]
	PCIeTxBps, PCIeRxBps Opt[float64] // bytes/s over NVML's 20 ms sample
	PCIeReplays          Opt[uint64]
	// ECC[counter][type]: counter ECCVolatile or ECCAggregate; type 0
	// corrected, 1 uncorrected.
	ECC                                        [2][2]Opt[uint64]
	RemappedCorrectable, RemappedUncorrectable Opt[uint64]
	RemapPending, RemapFailure                 Opt[bool]
	PowerLimitW                                Opt[float64]
	FanSpeed                                   Opt[float64] // ratio 0..1
	PerformanceState                           Opt[int64]   // 0 (P0, fastest) .. 15
	MemoryTemperatureC                         Opt[float64]
	NVLinks                                    []NVLink
	// Activity is GPM's profiling-level activity (Hopper and later), by
	// metric; empty when GPM is not supported or on the first scrape.
	Activity map[Activity]float64
	// XID counts critical XID errors by code since the collector started
	// watching (whole GPUs only).
	XID map[uint64]uint64
}

// ClockEventReasons names NVML's clock-event reason bits
// (nvmlClocksEventReason*, nvml.h; the same bits as the older
// nvmlClocksThrottleReason*).
var ClockEventReasons = []struct {
	Bit  uint64
	Name string
}{
	{0x1, "gpu_idle"},
	{0x2, "applications_clocks_setting"},
	{0x4, "sw_power_cap"},
	{0x8, "hw_slowdown"},
	{0x10, "sync_boost"},
	{0x20, "sw_thermal_slowdown"},
	{0x40, "hw_thermal_slowdown"},
	{0x80, "hw_power_brake_slowdown"},
	{0x100, "display_clock_setting"},
}

// NVLink is one active NVLink's cumulative data throughput.
type NVLink struct {
	Link    int
	TxBytes Opt[uint64]
	RxBytes Opt[uint64]
}

// Activity names a GPM metric.
type Activity string

// The GPM metrics read (nvmlGpmMetricId_t), reported as ratios 0..1.
const (
	ActivityGraphics    Activity = "graphics"
	ActivitySM          Activity = "sm"
	ActivitySMOccupancy Activity = "sm_occupancy"
	ActivityTensor      Activity = "tensor"
	ActivityDRAM        Activity = "dram"
	ActivityFP64        Activity = "fp64"
	ActivityFP32        Activity = "fp32"
	ActivityFP16        Activity = "fp16"
)

// MemoryUtilization is used/total, absent when either is absent or total is 0.
func (d *Device) MemoryUtilization() Opt[float64] {
	if !d.MemoryUsed.OK || !d.MemoryTotal.OK || d.MemoryTotal.V == 0 {
		return Opt[float64]{}
	}
	return some(float64(d.MemoryUsed.V) / float64(d.MemoryTotal.V))
}

// Ref names a container the way the pod-resources API does.
type Ref struct {
	Namespace string
	Pod       string
	Container string
}

// ContainerDevice is one container's use of one device.
type ContainerDevice struct {
	Device *Device
	// DutyCycle is the ratio 0..1 of the sample period the container's
	// processes were running kernels on the device.
	DutyCycle Opt[float64]
	// MemoryUsed is the container's processes' device memory, bytes.
	MemoryUsed Opt[uint64]
}

// procStats is what NVML told about the processes on one device.
type procStats struct {
	memOK  bool // the process lists were read
	mem    map[string]Opt[uint64]
	utilOK bool               // process utilization was read (possibly with no samples)
	util   map[string]float64 // container ID -> summed SM percent
}

// Snapshot is one Collect: devices, and what is needed to attribute them to
// containers.
type Snapshot struct {
	Devices []*Device

	byUUID map[string]*Device
	procs  map[string]*procStats      // device UUID ->
	users  map[string]map[string]bool // container ID -> device UUIDs its processes use
	alloc  map[Ref][]string           // container -> allocated device UUIDs (known devices only)
	owners map[string]int             // device UUID -> number of containers it is allocated to
	host   map[string]bool            // device UUID -> a process outside any container uses it
}

// Owner is the one container a device belongs to.
type Owner struct {
	ContainerID string // empty when known by allocation alone
	Ref         *Ref   // nil when not known
}

// Owner returns the container a device (GPU or MIG instance) belongs to
// when exactly one container uses it (its processes) or was allocated it
// (pod-resources), and no process outside a container uses it. names maps
// a container ID to its Kubernetes names (may be nil). ok is false for a
// shared, idle or unallocated device.
func (s *Snapshot) Owner(uuid string, names func(id string) (Ref, bool)) (Owner, bool) {
	if s.host[uuid] {
		return Owner{}, false
	}
	var ids []string
	for id, us := range s.users {
		if us[uuid] {
			ids = append(ids, id)
		}
	}
	var refs []Ref
	for r, us := range s.alloc {
		for _, u := range us {
			if u == uuid {
				refs = append(refs, r)
			}
		}
	}
	switch {
	case len(ids) > 1 || len(refs) > 1 || len(ids)+len(refs) == 0:
		return Owner{}, false
	case len(ids) == 1:
		o := Owner{ContainerID: ids[0]}
		if names != nil {
			if r, ok := names(ids[0]); ok {
				o.Ref = &r
			}
		}
		if len(refs) == 1 && (o.Ref == nil || *o.Ref != refs[0]) {
			// Allocated to one container, used by another.
			return Owner{}, false
		}
		return o, true
	default:
		r := refs[0]
		return Owner{Ref: &r}, true
	}
}

// Device returns the device with that UUID, or nil.
func (s *Snapshot) Device(uuid string) *Device { return s.byUUID[uuid] }

// Container returns the container's use of each device it uses (its
// processes) or was allocated (pod-resources; ref may be nil when the
// container's Kubernetes name is not known), sorted by device UUID.
//
// MemoryUsed is the sum of the container's own processes' memory, present
// only when the device's process list was read. DutyCycle is the sum of the
// container's processes' SM utilization samples; only when NVML has no
// per-process utilization for the device and the device is allocated to
// this one container alone is the device's own utilization used, because it
// is then the container's. A device-wide value is never copied onto a
// container that shares the device.
func (s *Snapshot) Container(id string, ref *Ref) []ContainerDevice {
	uuids := map[string]bool{}
	for u := range s.users[id] {
		uuids[u] = true
	}
	allocated := map[string]bool{}
	if ref != nil {
		for _, u := range s.alloc[*ref] {
			uuids[u] = true
			allocated[u] = true
		}
	}
	if len(uuids) == 0 {
		return nil
	}
	out := make([]ContainerDevice, 0, len(uuids))
	for u := range uuids {
		d := s.byUUID[u]
		cd := ContainerDevice{Device: d}
		if p := s.procs[u]; p != nil {
			if p.memOK {
				cd.MemoryUsed = p.mem[id]
				if _, ok := p.mem[id]; !ok {
					cd.MemoryUsed = some[uint64](0)
				}
			}
			if p.utilOK {
				cd.DutyCycle = some(math.Min(p.util[id]/100, 1))
			}
		}
		if !cd.DutyCycle.OK && allocated[u] && s.owners[u] == 1 && d.Utilization.OK {
			cd.DutyCycle = d.Utilization
		}
		out = append(out, cd)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Device.UUID < out[j].Device.UUID })
	return out
}

func (s *Snapshot) add(d *Device) {
	s.Devices = append(s.Devices, d)
	s.byUUID[d.UUID] = d
}

// merge adds one GPU's part (devices, processes, users).
func (s *Snapshot) merge(p *Snapshot) {
	for _, d := range p.Devices {
		s.add(d)
	}
	for u, ps := range p.procs {
		s.procs[u] = ps
	}
	for id, us := range p.users {
		for u := range us {
			s.use(id, u)
		}
	}
	for u := range p.host {
		s.host[u] = true
	}
}

func (s *Snapshot) use(id, uuid string) {
	m := s.users[id]
	if m == nil {
		m = map[string]bool{}
		s.users[id] = m
	}
	m[uuid] = true
}

// addAllocations reads the kubelet's allocations and keeps, per container,
// the devices NVML knows (a time-slicing replica ID "<uuid>::<n>" counts
// as <uuid>).
func (s *Snapshot) addAllocations(ctx context.Context, l AllocationLister) error {
	allocs, err := l.List(ctx)
	if err != nil {
		return err
	}
	s.alloc = map[Ref][]string{}
	s.owners = map[string]int{}
	for _, a := range allocs {
		ref := Ref{Namespace: a.Namespace, Pod: a.Pod, Container: a.Container}
		seen := map[string]bool{}
		for _, id := range a.DeviceIDs {
			u := podresources.DeviceUUID(id)
			if s.byUUID[u] == nil || seen[u] {
				continue
			}
			seen[u] = true
			s.alloc[ref] = append(s.alloc[ref], u)
			s.owners[u]++
		}
	}
	return nil
}

// The ECC counters, Device.ECC's first index (nvmlEccCounterType_t).
const (
	ECCVolatile  = 0 // since the driver was last loaded (NVML_VOLATILE_ECC)
	ECCAggregate = 1 // over the GPU's life (NVML_AGGREGATE_ECC)
)

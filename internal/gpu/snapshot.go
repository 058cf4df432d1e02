// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package gpu // import "github.com/containerstats/containerstatsreceiver/internal/gpu"

import (
	"context"
	"math"
	"sort"

	"github.com/containerstats/containerstatsreceiver/internal/podresources"

	"github.com/containerstats/containerstatsreceiver/internal/opt"
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
	Utilization        Opt[float64]
	EncoderUtilization Opt[float64]
	DecoderUtilization Opt[float64]
	PowerW             Opt[float64]
	EnergyJ            Opt[float64] // since the driver was loaded
	TemperatureC       Opt[float64]
}

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

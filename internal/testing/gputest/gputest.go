//go:build cgo

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package gputest builds simulated NVML nodes for tests on go-nvml's
// pkg/nvml/mock: the dgxa100 simulated server, with deterministic UUIDs,
// a distinct value for every reading, MIG instances and processes.
package gputest // import "github.com/containerstats/containerstatsreceiver/internal/testing/gputest"

import (
	"fmt"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
)

// MiB is 2^20 bytes.
const MiB = 1 << 20

// Node is a simulated node; Server is what the collector is given.
type Node struct {
	Server *dgxa100.Server
	GPUs   []*dgxa100.Device
	MIGs   map[int][]*mock.Device // GPU index -> its MIG instances
	// Initialized counts Init minus Shutdown calls.
	Initialized int
	// Events is the node's XID event set (one, as NVML hands out).
	Events *EventSet

	spec     Spec
	gpmMu    sync.Mutex
	gpmLive  int // GPM samples allocated and not freed
	gpmTicks int // GpmSampleGet calls
}

// Spec is what a simulated GPU model supports. Values NVML does not
// support on the model answer ERROR_NOT_SUPPORTED, as the real driver does
// (H100 figures checked against a real H100 80GB HBM3, driver 580.159.04:
// docs/gpu.md).
type Spec struct {
	Name      string
	MemTotal  uint64
	Arch      nvml.DeviceArchitecture
	ECC       bool // ECC counters and remapped rows
	MIG       bool // MIG capable (GetMigMode supported)
	GPM       bool // nvmlGpmQueryDeviceSupport says yes
	Fan       bool // a fan NVML can read (SXM boards have none)
	MemTemp   bool // FI_DEV_MEMORY_TEMP (HBM boards)
	NVLinks   int  // links; the first two are up, the rest down
	MaxLinks  int  // links the model has (GetNvLinkState beyond: INVALID_ARGUMENT)
	PowerCapW uint32
	MaxSMMHz  uint32
	MemMHz    uint32
}

// Models.
var (
	// SpecA100 is an A100-SXM4-40GB: ECC, MIG and NVLink, no GPM (Ampere),
	// no fan.
	SpecA100 = Spec{
		Name: "NVIDIA A100-SXM4-40GB", MemTotal: 40 * 1024 * MiB, Arch: nvml.DEVICE_ARCH_AMPERE,
		ECC: true, MIG: true, MemTemp: true, NVLinks: 12, MaxLinks: 12, PowerCapW: 400, MaxSMMHz: 1410, MemMHz: 1215,
	}
	// SpecH100 is an H100 80GB HBM3 as the real one answered in a VM
	// without NVSwitch: ECC, MIG, GPM, memory temperature; no fan, no
	// NVLink (GetNvLinkState ERROR_NOT_SUPPORTED).
	SpecH100 = Spec{
		Name: "NVIDIA H100 80GB HBM3", MemTotal: 80 * 1024 * MiB, Arch: nvml.DEVICE_ARCH_HOPPER,
		ECC: true, MIG: true, GPM: true, MemTemp: true, PowerCapW: 700, MaxSMMHz: 1980, MemMHz: 2619,
	}
	// SpecRTX4090 is a consumer GPU: a fan, no ECC, no remapped rows, no
	// MIG, no GPM, no NVLink, no memory temperature.
	SpecRTX4090 = Spec{
		Name: "NVIDIA GeForce RTX 4090", MemTotal: 24 * 1024 * MiB, Arch: nvml.DEVICE_ARCH_ADA,
		Fan: true, PowerCapW: 450, MaxSMMHz: 2520, MemMHz: 10501,
	}
)

// Proc is a process on a device: its host PID, device memory and the SM
// utilization samples NVML keeps for it (percent).
type Proc struct {
	PID uint32
	Mem uint64
	SM  []uint32
}

// UUID is the deterministic UUID of GPU i.
func UUID(i int) string { return fmt.Sprintf("GPU-%08x-0000-4000-8000-%012x", 0xa1000000+i, i) }

// MIGUUID is the deterministic UUID of MIG instance j of GPU i.
func MIGUUID(i, j int) string {
	return fmt.Sprintf("MIG-%08x-0000-4000-8000-%012x", 0xb1000000+i*16+j, i*16+j)
}

// A100 returns a node with n A100-SXM4-40GB GPUs (go-nvml's dgxa100
// server, cut to n devices). GPU i reads: used memory 1000+7i MiB of 40 GiB,
// utilization general 41+i %, encoder 21+i %, decoder 31+i %, power
// 201.001*(i+1) W, energy 5,000,000+12,345.678i J, temperature 51+i C; no
// processes.
func A100(n int) *Node { return Build(n, SpecA100) }

// H100 returns a node with n H100 80GB HBM3 GPUs. go-nvml v0.13.3-0 (the
// newest version the module proxy serves) has no dgxh100 server, so this
// is the dgxa100 server with H100 name, memory and architecture; readings
// as for A100.
func H100(n int) *Node { return Build(n, SpecH100) }

// Consumer returns a node with n GeForce RTX 4090s (SpecRTX4090).
func Consumer(n int) *Node { return Build(n, SpecRTX4090) }

// Build returns a node with n GPUs of the model. Every reading is
// distinct per GPU i; see setHealth for the health figures.
func Build(n int, spec Spec) *Node {
	name, total, arch := spec.Name, spec.MemTotal, spec.Arch
	s := dgxa100.New()
	nd := &Node{Server: s, MIGs: map[int][]*mock.Device{}, spec: spec}
	nd.Events = newEventSet()
	s.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return nd.Events, nvml.SUCCESS }
	s.GpmSampleAllocFunc = func() (nvml.GpmSample, nvml.Return) {
		nd.gpmMu.Lock()
		defer nd.gpmMu.Unlock()
		nd.gpmLive++
		return &gpmSample{node: nd}, nvml.SUCCESS
	}
	s.GpmMetricsGetFunc = nd.gpmMetricsGet
	s.InitFunc = func() nvml.Return { nd.Initialized++; return nvml.SUCCESS }
	s.ShutdownFunc = func() nvml.Return { nd.Initialized--; return nvml.SUCCESS }
	s.DeviceGetCountFunc = func() (int, nvml.Return) { return n, nvml.SUCCESS }
	inner := s.DeviceGetHandleByIndexFunc
	s.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i >= n {
			return nil, nvml.ERROR_INVALID_ARGUMENT
		}
		return inner(i)
	}
	for i := 0; i < n; i++ {
		d := s.Devices[i].(*dgxa100.Device)
		d.UUID, d.Name, d.Architecture = UUID(i), name, arch
		d.MemoryInfo = nvml.Memory{Total: total, Used: uint64(1000+7*i) * MiB, Free: total - uint64(1000+7*i)*MiB}
		u := uint32(i)
		d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: 41 + u, Memory: 61 + u}, nvml.SUCCESS
		}
		d.GetEncoderUtilizationFunc = func() (uint32, uint32, nvml.Return) { return 21 + u, 167000, nvml.SUCCESS }
		d.GetDecoderUtilizationFunc = func() (uint32, uint32, nvml.Return) { return 31 + u, 167000, nvml.SUCCESS }
		d.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 201001 * (u + 1), nvml.SUCCESS }
		d.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) {
			return 5_000_000_000 + 12_345_678*uint64(u), nvml.SUCCESS
		}
		d.GetTemperatureFunc = func(s nvml.TemperatureSensors) (uint32, nvml.Return) {
			if s != nvml.TEMPERATURE_GPU {
				return 0, nvml.ERROR_INVALID_ARGUMENT
			}
			return 51 + u, nvml.SUCCESS
		}
		d.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
		d.GetMigDeviceHandleByIndexFunc = func(int) (nvml.Device, nvml.Return) { return nil, nvml.ERROR_NOT_FOUND }
		if !spec.MIG {
			d.GetMigModeFunc = func() (int, int, nvml.Return) { return 0, 0, nvml.ERROR_NOT_SUPPORTED }
		}
		setProcs(&d.Device, nil, true)
		nd.setHealth(i, d)
		nd.GPUs = append(nd.GPUs, d)
	}
	return nd
}

// setProcs makes a device list procs as compute processes and, when util,
// report their SM samples: each call is a new sample period, with
// timestamps call*1e6 + 1000*k µs, filtered by the lastSeen argument as NVML
// does. Without util, process utilization is ERROR_NOT_SUPPORTED.
func setProcs(d *mock.Device, procs []Proc, util bool) {
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		out := make([]nvml.ProcessInfo, 0, len(procs))
		for _, p := range procs {
			out = append(out, nvml.ProcessInfo{Pid: p.PID, UsedGpuMemory: p.Mem})
		}
		return out, nvml.SUCCESS
	}
	d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
	calls := uint64(0)
	d.GetProcessUtilizationFunc = func(last uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		if !util {
			return nil, nvml.ERROR_NOT_SUPPORTED
		}
		calls++
		var out []nvml.ProcessUtilizationSample
		ts := calls * 1_000_000
		for _, p := range procs {
			for _, sm := range p.SM {
				ts += 1000
				if ts > last {
					out = append(out, nvml.ProcessUtilizationSample{Pid: p.PID, TimeStamp: ts, SmUtil: sm})
				}
			}
		}
		if len(out) == 0 {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return out, nvml.SUCCESS
	}
}

// SetProcs runs procs on GPU i; processUtil false makes NVML report no
// per-process utilization for it (ERROR_NOT_SUPPORTED).
func (n *Node) SetProcs(i int, processUtil bool, procs ...Proc) {
	setProcs(&n.GPUs[i].Device, procs, processUtil)
}

// MIG is a MIG instance to create.
type MIG struct {
	Profile  string // 1g.5gb, 3g.20gb, ...
	MemTotal uint64
	MemUsed  uint64
	Procs    []Proc
}

// EnableMIG puts GPU i in MIG mode with the given instances (slots 0..).
// As on real GPUs, the parent then reports no utilization, and the
// instances report memory and processes but no utilization, power, energy,
// temperature or per-process utilization (ERROR_NOT_SUPPORTED).
func (n *Node) EnableMIG(i int, migs ...MIG) {
	d := n.GPUs[i]
	d.MigMode = nvml.DEVICE_MIG_ENABLE
	notSup3 := func() (uint32, uint32, nvml.Return) { return 0, 0, nvml.ERROR_NOT_SUPPORTED }
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED }
	d.GetEncoderUtilizationFunc, d.GetDecoderUtilizationFunc = notSup3, notSup3
	var handles []*mock.Device
	for j, m := range migs {
		uuid, name := MIGUUID(i, j), d.Name+" MIG "+m.Profile
		md := &mock.Device{
			GetUUIDFunc: func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
			GetNameFunc: func() (string, nvml.Return) { return name, nvml.SUCCESS },
			GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
				return nvml.Memory{Total: m.MemTotal, Used: m.MemUsed, Free: m.MemTotal - m.MemUsed}, nvml.SUCCESS
			},
			GetUtilizationRatesFunc: func() (nvml.Utilization, nvml.Return) {
				return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED
			},
			GetEncoderUtilizationFunc:     notSup3,
			GetDecoderUtilizationFunc:     notSup3,
			GetPowerUsageFunc:             func() (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED },
			GetTotalEnergyConsumptionFunc: func() (uint64, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED },
			GetTemperatureFunc: func(nvml.TemperatureSensors) (uint32, nvml.Return) {
				return 0, nvml.ERROR_NOT_SUPPORTED
			},
			IsMigDeviceHandleFunc: func() (bool, nvml.Return) { return true, nvml.SUCCESS },
			GetGpuInstanceIdFunc:  func() (int, nvml.Return) { return MIGInstanceID(j), nvml.SUCCESS },
		}
		setProcs(md, m.Procs, false)
		handles = append(handles, md)
	}
	n.MIGs[i] = handles
	d.GetMigDeviceHandleByIndexFunc = func(j int) (nvml.Device, nvml.Return) {
		if j < 0 || j >= len(handles) {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return handles[j], nvml.SUCCESS
	}
}

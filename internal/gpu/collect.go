//go:build cgo

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package gpu // import "github.com/containerstats/containerstatsreceiver/internal/gpu"

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"sort"
	"syscall"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
)

// Collect reads every device and, when configured, the processes on them
// and the kubelet's allocations. Each error names its device (or source)
// and costs only the points it concerns; a nil Snapshot means nothing could
// be read.
func (c *Collector) Collect(ctx context.Context) (*Snapshot, []error) {
	if !c.open {
		return nil, []error{errors.New("nvml not open")}
	}
	lib := c.opts.Library
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, []error{fmt.Errorf("nvml device count: %w", ret)}
	}
	s := &Snapshot{
		byUUID: map[string]*Device{},
		procs:  map[string]*procStats{},
		users:  map[string]map[string]bool{},
		host:   map[string]bool{},
	}
	errs := c.openErrs
	c.openErrs = nil
	if c.xid != nil {
		if err := c.xid.takeErr(); err != nil {
			errs = append(errs, err)
		}
	}
	c.gen++
	pids := map[uint32]string{} // this scrape's PID -> container ID ("" for none)
	for i := 0; i < n; i++ {
		if c.lost[i] {
			continue
		}
		h, ret := lib.DeviceGetHandleByIndex(i)
		if ret == nvml.ERROR_GPU_IS_LOST {
			c.lost[i] = true
			c.pcie.drop(i)
			errs = append(errs, fmt.Errorf("gpu %d: %w: fell off the bus; dropped until the collector restarts", i, ret))
			continue
		}
		if ret != nvml.SUCCESS {
			errs = append(errs, fmt.Errorf("gpu %d: get handle: %w", i, ret))
			continue
		}
		// A GPU is read into its own error list and snapshot part first, so
		// that a GPU lost half-way contributes nothing but one error.
		var derrs []error
		part := &Snapshot{byUUID: map[string]*Device{}, procs: map[string]*procStats{}, users: map[string]map[string]bool{}, host: map[string]bool{}}
		if lost := c.readGPU(i, h, part, pids, &derrs); lost != nil {
			c.lost[i] = true
			c.pcie.drop(i)
			errs = append(errs, fmt.Errorf("%w: the GPU fell off the bus; dropped (with its MIG instances) until the collector restarts", lost))
			continue
		}
		errs = append(errs, derrs...)
		s.merge(part)
	}
	c.dropGPM(false)
	// Forget devices that are gone (MIG instances are re-created with new
	// UUIDs), so the state stays bounded.
	for u := range c.lastSeen {
		if s.byUUID[u] == nil {
			delete(c.lastSeen, u)
		}
	}
	if c.opts.PodResources != nil {
		if err := s.addAllocations(ctx, c.opts.PodResources); err != nil {
			errs = append(errs, err)
		}
	}
	return s, errs
}

// readGPU reads GPU i, its MIG instances and their processes into part. It
// returns the first error that says the GPU is lost (ERROR_GPU_IS_LOST),
// if any call said so; part is then to be discarded.
func (c *Collector) readGPU(i int, h nvml.Device, part *Snapshot, pids map[uint32]string, errs *[]error) (lost error) {
	d, err := c.readDevice(h, "", errs)
	if err != nil {
		err = fmt.Errorf("gpu %d: %w", i, err)
		if errors.Is(err, nvml.ERROR_GPU_IS_LOST) {
			return err
		}
		*errs = append(*errs, err)
		return nil
	}
	pcie, _ := c.pcie.read(i, d.UUID, h)
	readHealth(h, d, pcie, func(what string, ret nvml.Return) {
		if ret != nvml.ERROR_NOT_SUPPORTED {
			*errs = append(*errs, fmt.Errorf("gpu %s: %s: %w", d.UUID, what, ret))
		}
	})
	if c.xid != nil {
		d.XID = c.xid.read(d.UUID)
	}
	part.add(d)
	gpm, ret := gpmSupported(h)
	if ret != nvml.SUCCESS && ret != nvml.ERROR_NOT_SUPPORTED {
		*errs = append(*errs, fmt.Errorf("gpu %s: GPM support: %w", d.UUID, ret))
	}
	migs, isMIG := c.migDevices(h, d, errs)
	if !isMIG {
		if gpm {
			c.readGPM(h, -1, d, errs)
		}
		c.readProcs(h, d, part, pids, errs)
		return lostIn(*errs)
	}
	for _, mh := range migs {
		md, err := c.readDevice(mh, d.UUID, errs)
		if err != nil {
			*errs = append(*errs, fmt.Errorf("gpu %s: MIG instance: %w", d.UUID, err))
			continue
		}
		part.add(md)
		if gpm {
			if gi, ret := mh.GetGpuInstanceId(); ret == nvml.SUCCESS {
				c.readGPM(h, gi, md, errs)
			} else if ret != nvml.ERROR_NOT_SUPPORTED {
				*errs = append(*errs, fmt.Errorf("gpu %s: GPU instance ID: %w", md.UUID, ret))
			}
		}
		c.readProcs(mh, md, part, pids, errs)
	}
	return lostIn(*errs)
}

// lostIn returns the first error that says the GPU is lost.
func lostIn(errs []error) error {
	for _, err := range errs {
		if errors.Is(err, nvml.ERROR_GPU_IS_LOST) {
			return err
		}
	}
	return nil
}

// readDevice reads one GPU or MIG instance. Only a missing UUID fails the
// device; a failed metric adds its error and leaves that metric absent, and
// ERROR_NOT_SUPPORTED leaves it absent silently.
func (c *Collector) readDevice(h nvml.Device, parent string, errs *[]error) (*Device, error) {
	uuid, ret := h.GetUUID()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("uuid: %w", ret)
	}
	d := &Device{UUID: uuid, Parent: parent}
	fail := func(what string, ret nvml.Return) {
		if ret != nvml.ERROR_NOT_SUPPORTED {
			*errs = append(*errs, fmt.Errorf("gpu %s: %s: %w", uuid, what, ret))
		}
	}
	if name, ret := h.GetName(); ret == nvml.SUCCESS {
		d.Model = name
	} else {
		fail("name", ret)
	}
	if m, ret := h.GetMemoryInfo(); ret == nvml.SUCCESS {
		d.MemoryUsed, d.MemoryTotal = some(m.Used), some(m.Total)
	} else {
		fail("memory info", ret)
	}
	if u, ret := h.GetUtilizationRates(); ret == nvml.SUCCESS {
		d.Utilization = some(percent(u.Gpu))
		d.MemoryControllerUtilization = some(percent(u.Memory))
	} else {
		fail("utilization rates", ret)
	}
	if u, _, ret := h.GetEncoderUtilization(); ret == nvml.SUCCESS {
		d.EncoderUtilization = some(percent(u))
	} else {
		fail("encoder utilization", ret)
	}
	if u, _, ret := h.GetDecoderUtilization(); ret == nvml.SUCCESS {
		d.DecoderUtilization = some(percent(u))
	} else {
		fail("decoder utilization", ret)
	}
	if mw, ret := h.GetPowerUsage(); ret == nvml.SUCCESS {
		d.PowerW = some(float64(mw) / 1000)
	} else {
		fail("power usage", ret)
	}
	if mj, ret := h.GetTotalEnergyConsumption(); ret == nvml.SUCCESS {
		d.EnergyJ = some(float64(mj) / 1000)
	} else {
		fail("total energy consumption", ret)
	}
	if t, ret := h.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
		d.TemperatureC = some(float64(t))
	} else {
		fail("temperature", ret)
	}
	return d, nil
}

func percent(p uint32) float64 { return math.Min(float64(p)/100, 1) }

// migDevices returns the MIG instances of a GPU in MIG mode; isMIG is false
// for a GPU without MIG support or with MIG disabled.
func (c *Collector) migDevices(h nvml.Device, d *Device, errs *[]error) (migs []nvml.Device, isMIG bool) {
	cur, _, ret := h.GetMigMode()
	switch {
	case ret == nvml.ERROR_NOT_SUPPORTED:
		return nil, false
	case ret != nvml.SUCCESS:
		*errs = append(*errs, fmt.Errorf("gpu %s: MIG mode: %w", d.UUID, ret))
		return nil, false
	case cur != nvml.DEVICE_MIG_ENABLE:
		return nil, false
	}
	maxMIG, ret := h.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		*errs = append(*errs, fmt.Errorf("gpu %s: MIG device count: %w", d.UUID, ret))
		return nil, true
	}
	for j := 0; j < maxMIG; j++ {
		mh, ret := h.GetMigDeviceHandleByIndex(j)
		switch ret {
		case nvml.SUCCESS:
			migs = append(migs, mh)
		case nvml.ERROR_NOT_FOUND, nvml.ERROR_INVALID_ARGUMENT: // empty slot
		default:
			*errs = append(*errs, fmt.Errorf("gpu %s: MIG device %d: %w", d.UUID, j, ret))
		}
	}
	return migs, true
}

// readProcs reads the processes on a device (GPU or MIG instance) and maps
// them to containers. Without Procs, nothing is read.
func (c *Collector) readProcs(h nvml.Device, d *Device, s *Snapshot, pids map[uint32]string, errs *[]error) {
	if c.opts.Procs == nil {
		return
	}
	p := &procStats{mem: map[string]Opt[uint64]{}, util: map[string]float64{}}
	s.procs[d.UUID] = p

	seen := map[uint32]bool{}
	p.memOK = true
	for _, list := range []struct {
		what string
		get  func() ([]nvml.ProcessInfo, nvml.Return)
	}{
		{"compute processes", h.GetComputeRunningProcesses},
		{"graphics processes", h.GetGraphicsRunningProcesses},
	} {
		infos, ret := list.get()
		switch ret {
		case nvml.SUCCESS:
		case nvml.ERROR_NOT_SUPPORTED:
			continue
		default:
			*errs = append(*errs, fmt.Errorf("gpu %s: %s: %w", d.UUID, list.what, ret))
			p.memOK = false
			continue
		}
		for _, pi := range infos {
			if seen[pi.Pid] { // a process doing both graphics and compute is listed twice
				continue
			}
			seen[pi.Pid] = true
			id := c.containerOf(pi.Pid, pids, errs)
			if id == "" {
				s.host[d.UUID] = true
				continue
			}
			s.use(id, d.UUID)
			cur, known := p.mem[id]
			if !known {
				cur = some[uint64](0)
			}
			// NVML_VALUE_NOT_AVAILABLE: memory unknown (e.g. no permission);
			// the container's sum is then unknown too.
			if !cur.OK || pi.UsedGpuMemory == math.MaxUint64 {
				p.mem[id] = Opt[uint64]{}
				continue
			}
			p.mem[id] = some(cur.V + pi.UsedGpuMemory)
		}
	}
	if !p.memOK {
		p.mem = nil
	}

	samples, ret := h.GetProcessUtilization(c.lastSeen[d.UUID])
	switch ret {
	case nvml.SUCCESS:
		p.utilOK = true
	case nvml.ERROR_NOT_FOUND: // no sample since lastSeen, all idle
		// The real NVML (driver 580, H100) hands back its whole, unfilled
		// buffer with NOT_FOUND: none of it is a sample.
		p.utilOK, samples = true, nil
	case nvml.ERROR_NOT_SUPPORTED:
		return
	default:
		*errs = append(*errs, fmt.Errorf("gpu %s: process utilization: %w", d.UUID, ret))
		return
	}
	// Several samples of one process: their mean is its share of the period.
	type acc struct {
		sum float64
		n   int
	}
	per := map[uint32]*acc{}
	for _, sm := range samples {
		if sm.TimeStamp > c.lastSeen[d.UUID] {
			c.lastSeen[d.UUID] = sm.TimeStamp
		}
		a := per[sm.Pid]
		if a == nil {
			a = &acc{}
			per[sm.Pid] = a
		}
		a.sum += float64(sm.SmUtil)
		a.n++
	}
	for pid, a := range per {
		if id := c.containerOf(pid, pids, errs); id != "" {
			s.use(id, d.UUID)
			p.util[id] += a.sum / float64(a.n)
		} else {
			s.host[d.UUID] = true
		}
	}
}

// containerOf maps a host PID to a container ID through
// /proc/<pid>/cgroup, once per PID and scrape. A process outside any
// container, or one that exited, maps to "". An unreadable file is an
// error naming the PID.
func (c *Collector) containerOf(pid uint32, cache map[uint32]string, errs *[]error) string {
	if id, ok := cache[pid]; ok {
		return id
	}
	cache[pid] = ""
	lines, err := c.opts.Procs.Cgroup(int(pid))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ESRCH) {
			*errs = append(*errs, fmt.Errorf("gpu process %d: %w", pid, err))
		}
		return ""
	}
	// The v2 line ("0::") first: on hybrid nodes it is the one every
	// process has; then the v1 lines.
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].HierarchyID == 0 && lines[j].HierarchyID != 0 })
	for _, l := range lines {
		if cg, ok := cgroupfs.ParsePath(l.Path); ok && cg.Kind == cgroupfs.KindContainer {
			cache[pid] = cg.ContainerID
			return cg.ContainerID
		}
	}
	return ""
}

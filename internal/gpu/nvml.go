//go:build cgo

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package gpu // import "github.com/containerstats/containerstatsreceiver/internal/gpu"

import (
	"errors"
	"fmt"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// DefaultLibrary is the real NVML, loaded (dlopen) by Open.
func DefaultLibrary() Library { return nvml.New() }

// Library is the part of nvml.Interface the collector uses; nvml.New() and
// the go-nvml mocks satisfy it.
type Library interface {
	Init() nvml.Return
	Shutdown() nvml.Return
	DeviceGetCount() (int, nvml.Return)
	DeviceGetHandleByIndex(int) (nvml.Device, nvml.Return)
	EventSetCreate() (nvml.EventSet, nvml.Return)
	GpmSampleAlloc() (nvml.GpmSample, nvml.Return)
	GpmMetricsGet(*nvml.GpmMetricsGetType) nvml.Return
}

// Options configure a Collector. Nil Procs turns process attribution off;
// nil PodResources turns allocation attribution off.
type Options struct {
	Library      Library
	Procs        Procs
	PodResources AllocationLister
	// PCIeInterval is the period of the background PCIe throughput
	// sampling (pcie.go); 0 means DefaultPCIeInterval.
	PCIeInterval time.Duration
}

// Collector reads NVML. Open, Collect and Close are called from one
// goroutine at a time.
type Collector struct {
	opts     Options
	open     bool
	lastSeen map[string]uint64 // device UUID -> newest process-utilization sample seen (µs)
	gpm      map[string]*gpmState
	gen      uint64
	lost     map[int]bool // GPU index -> fell off the bus (reported once, then skipped)
	xid      *xidWatcher
	pcie     *pcieSampler
	// openErrs are the XID watcher's setup errors, reported by the first
	// Collect.
	openErrs []error
}

// New returns a collector; nothing is loaded until Open.
func New(opts Options) *Collector {
	return &Collector{opts: opts, lastSeen: map[string]uint64{}, gpm: map[string]*gpmState{}, lost: map[int]bool{}}
}

// Open loads and initializes NVML and counts the GPUs. It returns the
// number of GPUs, or an error wrapping ErrUnavailable for a node without
// library, driver or GPU (NVML is then released again).
func (c *Collector) Open() (int, error) {
	if c.opts.Library == nil {
		return 0, fmt.Errorf("%w: no NVML library", ErrUnavailable)
	}
	switch ret := c.opts.Library.Init(); ret {
	case nvml.SUCCESS:
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return 0, fmt.Errorf("%w: libnvidia-ml.so.1 not found (%w)", ErrUnavailable, ret)
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return 0, fmt.Errorf("%w: NVIDIA driver not loaded (%w)", ErrUnavailable, ret)
	default:
		// Not calling Shutdown: after a failed Init, NVML's symbols may not
		// even be resolved.
		return 0, fmt.Errorf("nvml init: %w", ret)
	}
	c.open = true
	n, ret := c.opts.Library.DeviceGetCount()
	if ret != nvml.SUCCESS {
		_ = c.Close()
		return 0, fmt.Errorf("nvml device count: %w", ret)
	}
	if n == 0 {
		_ = c.Close()
		return 0, fmt.Errorf("%w: no GPU found by NVML", ErrUnavailable)
	}
	gpus := map[string]nvml.Device{}
	var sampled []pcieGPU
	for i := 0; i < n; i++ {
		h, ret := c.opts.Library.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue // Collect reports it
		}
		if u, ret := h.GetUUID(); ret == nvml.SUCCESS {
			gpus[u] = h
			sampled = append(sampled, pcieGPU{index: i, uuid: u, h: h})
		}
	}
	c.openErrs = c.startXID(gpus)
	c.startPCIe(sampled)
	return n, nil
}

// Close releases NVML if Open initialized it; safe without Open and twice.
func (c *Collector) Close() error {
	if c == nil || !c.open {
		return nil
	}
	c.open = false
	var errs []error
	if c.xid != nil {
		if !c.xid.stop() {
			errs = append(errs, fmt.Errorf("XID event watcher still in nvmlEventSetWait after %v; NVML shut down regardless", stopWait))
		}
		c.xid = nil
	}
	if c.pcie != nil {
		if !c.pcie.stop() {
			errs = append(errs, fmt.Errorf("PCIe throughput sampler still in nvmlDeviceGetPcieThroughput after %v; NVML shut down regardless", stopWait))
		}
		c.pcie = nil
	}
	c.dropGPM(true)
	if ret := c.opts.Library.Shutdown(); ret != nvml.SUCCESS {
		errs = append(errs, fmt.Errorf("nvml shutdown: %w", ret))
	}
	return errors.Join(errs...)
}

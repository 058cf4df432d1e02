//go:build cgo

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package gpu // import "github.com/containerstats/containerstatsreceiver/internal/gpu"

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// gpmMetrics are the GPM metrics read, each reported as a ratio (NVML
// gives percent).
var gpmMetrics = []struct {
	id nvml.GpmMetricId
	a  Activity
}{
	{nvml.GPM_METRIC_GRAPHICS_UTIL, ActivityGraphics},
	{nvml.GPM_METRIC_SM_UTIL, ActivitySM},
	{nvml.GPM_METRIC_SM_OCCUPANCY, ActivitySMOccupancy},
	{nvml.GPM_METRIC_ANY_TENSOR_UTIL, ActivityTensor},
	{nvml.GPM_METRIC_DRAM_BW_UTIL, ActivityDRAM},
	{nvml.GPM_METRIC_FP64_UTIL, ActivityFP64},
	{nvml.GPM_METRIC_FP32_UTIL, ActivityFP32},
	{nvml.GPM_METRIC_FP16_UTIL, ActivityFP16},
}

// gpmState is one device's previous GPM sample: GPM metrics are computed
// between two samples, so each scrape's sample is paired with the one
// before it (the first scrape has no point).
type gpmState struct {
	prev nvml.GpmSample
	seen uint64 // Collect generation
}

// readGPM takes a GPM sample of a whole GPU (gi < 0) or of a MIG instance
// (GPU instance gi of the GPU parent) and computes the activities since the
// previous one. supported says whether GPM is supported on the (parent)
// GPU; callers ask NVML once per GPU and scrape.
func (c *Collector) readGPM(parent nvml.Device, gi int, d *Device, errs *[]error) {
	lib := c.opts.Library
	st := c.gpm[d.UUID]
	if st == nil {
		st = &gpmState{}
		c.gpm[d.UUID] = st
	}
	st.seen = c.gen
	cur, ret := lib.GpmSampleAlloc()
	if ret != nvml.SUCCESS {
		*errs = append(*errs, fmt.Errorf("gpu %s: GPM sample alloc: %w", d.UUID, ret))
		return
	}
	if gi < 0 {
		ret = parent.GpmSampleGet(cur)
	} else {
		ret = parent.GpmMigSampleGet(gi, cur)
	}
	if ret != nvml.SUCCESS {
		_ = cur.Free()
		if ret != nvml.ERROR_NOT_SUPPORTED {
			*errs = append(*errs, fmt.Errorf("gpu %s: GPM sample: %w", d.UUID, ret))
		}
		return
	}
	prev := st.prev
	st.prev = cur
	if prev == nil {
		return
	}
	defer func() { _ = prev.Free() }() // a failed free leaves nothing to report
	mg := &nvml.GpmMetricsGetType{
		Version:    nvml.GPM_METRICS_GET_VERSION,
		NumMetrics: uint32(len(gpmMetrics)),
		Sample1:    prev,
		Sample2:    cur,
	}
	for i, m := range gpmMetrics {
		mg.Metrics[i].MetricId = uint32(m.id)
	}
	if ret := lib.GpmMetricsGet(mg); ret != nvml.SUCCESS {
		*errs = append(*errs, fmt.Errorf("gpu %s: GPM metrics: %w", d.UUID, ret))
		return
	}
	for i, m := range gpmMetrics {
		r := mg.Metrics[i]
		switch ret := nvml.Return(r.NvmlReturn); ret {
		case nvml.SUCCESS:
			if d.Activity == nil {
				d.Activity = map[Activity]float64{}
			}
			d.Activity[m.a] = min(max(r.Value/100, 0), 1)
		case nvml.ERROR_NOT_SUPPORTED:
		default:
			*errs = append(*errs, fmt.Errorf("gpu %s: GPM metric %s: %w", d.UUID, m.a, ret))
		}
	}
}

// gpmSupported asks NVML whether the GPU supports GPM.
func gpmSupported(h nvml.Device) (bool, nvml.Return) {
	s, ret := h.GpmQueryDeviceSupport()
	if ret != nvml.SUCCESS {
		return false, ret
	}
	return s.IsSupportedDevice != 0, nvml.SUCCESS
}

// dropGPM frees the samples of devices not seen in this Collect (all of
// them with all true).
func (c *Collector) dropGPM(all bool) {
	for u, st := range c.gpm {
		if all || st.seen != c.gen {
			if st.prev != nil {
				_ = st.prev.Free()
			}
			delete(c.gpm, u)
		}
	}
}

//go:build cgo

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package gpu // import "github.com/containerstats/containerstatsreceiver/internal/gpu"

import (
	"encoding/binary"
	"math"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// readHealth reads a whole GPU's clocks, clock-event reasons, PCIe, ECC,
// remapped rows, power limit, fan, performance state, memory temperature
// and NVLink throughput; its PCIe throughput is pcie, the background
// sampler's latest sample. Each value NVML does not support is left absent
// (no error); any other failure adds an error through fail.
func readHealth(h nvml.Device, d *Device, pcie pcieSample, fail func(string, nvml.Return)) {
	clock := func(what string, get func(nvml.ClockType) (uint32, nvml.Return), t nvml.ClockType, dst *Opt[float64]) {
		if v, ret := get(t); ret == nvml.SUCCESS {
			*dst = some(float64(v))
		} else {
			fail(what, ret)
		}
	}
	clock("SM clock", h.GetClockInfo, nvml.CLOCK_SM, &d.ClockSMMHz)
	clock("memory clock", h.GetClockInfo, nvml.CLOCK_MEM, &d.ClockMemMHz)
	clock("max SM clock", h.GetMaxClockInfo, nvml.CLOCK_SM, &d.MaxClockSMMHz)
	clock("max memory clock", h.GetMaxClockInfo, nvml.CLOCK_MEM, &d.MaxClockMemMHz)

	r, ret := h.GetCurrentClocksEventReasons()
	if ret == nvml.ERROR_FUNCTION_NOT_FOUND { // drivers before 535
		r, ret = h.GetCurrentClocksThrottleReasons()
	}
	if ret == nvml.SUCCESS {
		d.ClockEventReasons = some(r)
	} else {
		fail("clock event reasons", ret)
	}

	// PCIe throughput: the background sampler's latest sample (pcie.go);
	// a GPU without one yet has none.
	for _, x := range []struct {
		v   Opt[float64]
		ret nvml.Return
		dst *Opt[float64]
	}{{pcie.tx, pcie.txRet, &d.PCIeTxBps}, {pcie.rx, pcie.rxRet, &d.PCIeRxBps}} {
		if x.v.OK {
			*x.dst = x.v
		} else if x.ret != nvml.SUCCESS {
			fail("PCIe throughput", x.ret)
		}
	}
	if n, ret := h.GetPcieReplayCounter(); ret == nvml.SUCCESS && n >= 0 {
		d.PCIeReplays = some(uint64(n))
	} else if ret != nvml.SUCCESS {
		fail("PCIe replay counter", ret)
	}

	for c, counter := range []nvml.EccCounterType{nvml.VOLATILE_ECC, nvml.AGGREGATE_ECC} {
		for t, typ := range []nvml.MemoryErrorType{nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.MEMORY_ERROR_TYPE_UNCORRECTED} {
			if n, ret := h.GetTotalEccErrors(typ, counter); ret == nvml.SUCCESS {
				d.ECC[c][t] = some(n)
			} else {
				fail("ECC errors", ret)
			}
		}
	}

	if corr, unc, pending, failure, ret := h.GetRemappedRows(); ret == nvml.SUCCESS {
		d.RemappedCorrectable, d.RemappedUncorrectable = some(uint64(max(corr, 0))), some(uint64(max(unc, 0)))
		d.RemapPending, d.RemapFailure = some(pending), some(failure)
	} else {
		fail("remapped rows", ret)
	}

	if mw, ret := h.GetPowerManagementLimit(); ret == nvml.SUCCESS {
		d.PowerLimitW = some(float64(mw) / 1000)
	} else {
		fail("power management limit", ret)
	}
	if p, ret := h.GetFanSpeed(); ret == nvml.SUCCESS {
		d.FanSpeed = some(percent(p))
	} else {
		fail("fan speed", ret)
	}
	if p, ret := h.GetPerformanceState(); ret == nvml.SUCCESS && p != nvml.PSTATE_UNKNOWN && p <= nvml.PSTATE_15 {
		d.PerformanceState = some(int64(p))
	} else if ret != nvml.SUCCESS {
		fail("performance state", ret)
	}

	fv := []nvml.FieldValue{{FieldId: nvml.FI_DEV_MEMORY_TEMP}}
	if ret := h.GetFieldValues(fv); ret == nvml.SUCCESS {
		if v, ok := fieldValue(fv[0]); ok {
			d.MemoryTemperatureC = some(v)
		} else if r := nvml.Return(fv[0].NvmlReturn); r != nvml.SUCCESS {
			fail("memory temperature", r)
		}
	} else {
		fail("memory temperature", ret)
	}

	readNVLinks(h, d, fail)
}

// readNVLinks reads the data throughput counters (KiB, cumulative) of every
// active link; a device without NVLink has none.
func readNVLinks(h nvml.Device, d *Device, fail func(string, nvml.Return)) {
	var active []int
	for l := 0; l < nvml.NVLINK_MAX_LINKS; l++ {
		st, ret := h.GetNvLinkState(l)
		if ret == nvml.ERROR_NOT_SUPPORTED && l == 0 {
			return // no NVLink at all
		}
		if ret == nvml.ERROR_INVALID_ARGUMENT || ret == nvml.ERROR_NOT_SUPPORTED {
			continue // no such link on this device
		}
		if ret != nvml.SUCCESS {
			fail("NVLink state", ret)
			return
		}
		if st == nvml.FEATURE_ENABLED {
			active = append(active, l)
		}
	}
	if len(active) == 0 {
		return
	}
	fv := make([]nvml.FieldValue, 0, 2*len(active))
	for _, l := range active {
		fv = append(fv,
			nvml.FieldValue{FieldId: nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_TX, ScopeId: uint32(l)},
			nvml.FieldValue{FieldId: nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_RX, ScopeId: uint32(l)})
	}
	if ret := h.GetFieldValues(fv); ret != nvml.SUCCESS {
		fail("NVLink throughput", ret)
		return
	}
	for i, l := range active {
		link := NVLink{Link: l}
		for j, dst := range []*Opt[uint64]{&link.TxBytes, &link.RxBytes} {
			f := fv[2*i+j]
			if v, ok := fieldValue(f); ok {
				*dst = some(uint64(v) * 1024)
			} else if r := nvml.Return(f.NvmlReturn); r != nvml.SUCCESS {
				fail("NVLink throughput", r)
			}
		}
		if link.TxBytes.OK || link.RxBytes.OK {
			d.NVLinks = append(d.NVLinks, link)
		}
	}
}

// fieldValue decodes an NVML field value; ok is false when NVML returned
// an error for the field.
func fieldValue(f nvml.FieldValue) (float64, bool) {
	if nvml.Return(f.NvmlReturn) != nvml.SUCCESS {
		return 0, false
	}
	b := f.Value[:]
	switch nvml.ValueType(f.ValueType) {
	case nvml.VALUE_TYPE_DOUBLE:
		return math.Float64frombits(binary.NativeEndian.Uint64(b)), true
	case nvml.VALUE_TYPE_UNSIGNED_INT:
		return float64(binary.NativeEndian.Uint32(b)), true
	case nvml.VALUE_TYPE_UNSIGNED_LONG, nvml.VALUE_TYPE_UNSIGNED_LONG_LONG:
		return float64(binary.NativeEndian.Uint64(b)), true
	case nvml.VALUE_TYPE_SIGNED_LONG_LONG:
		return float64(int64(binary.NativeEndian.Uint64(b))), true
	case nvml.VALUE_TYPE_SIGNED_INT:
		return float64(int32(binary.NativeEndian.Uint32(b))), true
	case nvml.VALUE_TYPE_UNSIGNED_SHORT:
		return float64(binary.NativeEndian.Uint16(b)), true
	}
	return 0, false
}

//go:build cgo

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Command gpucheck is `make gpu-check`: on a node with an NVIDIA GPU it
// reads every GPU through internal/gpu (the collector's own NVML code, the
// real libnvidia-ml.so.1), asks nvidia-smi --query-gpu for the same
// figures in between two of our reads, and fails when nvidia-smi's value
// lies outside [min(ours)-tol, max(ours)+tol] for any figure (stated per
// figure in the table it prints). Figures nvidia-smi or NVML does not
// support on the device ("[N/A]", "[Not Supported]", absent on our side)
// must be absent on both sides. It also prints the raw NVML return codes
// of every call the collector makes, GPM activity and the XID watcher's
// start and stop.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/containerstats/containerstatsreceiver/internal/gpu"
)

type figure struct {
	query string  // nvidia-smi --query-gpu field(s), comma-separated: summed
	tol   float64 // absolute tolerance, in the printed unit
	unit  string
	ours  func(d *gpu.Device) (float64, bool)
}

func opt[T int64 | uint64 | float64](o gpu.Opt[T], scale float64) (float64, bool) {
	return float64(o.V) * scale, o.OK
}

var figures = []figure{
	// nvidia-smi's memory.used leaves out the driver's reservation
	// (nvmlDeviceGetMemoryInfo_v2); ours (v1 used) includes it.
	{"memory.used,memory.reserved", 1, "MiB", func(d *gpu.Device) (float64, bool) { return opt(d.MemoryUsed, 1.0/(1<<20)) }},
	{"memory.total", 0, "MiB", func(d *gpu.Device) (float64, bool) { return opt(d.MemoryTotal, 1.0/(1<<20)) }},
	{"utilization.gpu", 10, "%", func(d *gpu.Device) (float64, bool) { return opt(d.Utilization, 100) }},
	{"utilization.memory", 10, "%", func(d *gpu.Device) (float64, bool) { return opt(d.MemoryControllerUtilization, 100) }},
	{"power.draw", 25, "W", func(d *gpu.Device) (float64, bool) { return opt(d.PowerW, 1) }},
	{"temperature.gpu", 2, "C", func(d *gpu.Device) (float64, bool) { return opt(d.TemperatureC, 1) }},
	{"temperature.memory", 2, "C", func(d *gpu.Device) (float64, bool) { return opt(d.MemoryTemperatureC, 1) }},
	// The SM clock moves within milliseconds under a power cap (seen at
	// 1365..1455 MHz on an H100 at 700 W): 10% of 1980 MHz.
	{"clocks.sm", 200, "MHz", func(d *gpu.Device) (float64, bool) { return opt(d.ClockSMMHz, 1) }},
	{"clocks.mem", 50, "MHz", func(d *gpu.Device) (float64, bool) { return opt(d.ClockMemMHz, 1) }},
	{"clocks.max.sm", 0, "MHz", func(d *gpu.Device) (float64, bool) { return opt(d.MaxClockSMMHz, 1) }},
	{"clocks.max.mem", 0, "MHz", func(d *gpu.Device) (float64, bool) { return opt(d.MaxClockMemMHz, 1) }},
	{"power.limit", 0.01, "W", func(d *gpu.Device) (float64, bool) { return opt(d.PowerLimitW, 1) }},
	{"fan.speed", 2, "%", func(d *gpu.Device) (float64, bool) { return opt(d.FanSpeed, 100) }},
	{"pstate", 0, "P", func(d *gpu.Device) (float64, bool) { return opt(d.PerformanceState, 1) }},
	{"ecc.errors.corrected.volatile.total", 0, "", func(d *gpu.Device) (float64, bool) { return opt(d.ECC[0][0], 1) }},
	{"ecc.errors.uncorrected.volatile.total", 0, "", func(d *gpu.Device) (float64, bool) { return opt(d.ECC[0][1], 1) }},
	{"ecc.errors.corrected.aggregate.total", 0, "", func(d *gpu.Device) (float64, bool) { return opt(d.ECC[1][0], 1) }},
	{"ecc.errors.uncorrected.aggregate.total", 0, "", func(d *gpu.Device) (float64, bool) { return opt(d.ECC[1][1], 1) }},
	{"remapped_rows.correctable", 0, "", func(d *gpu.Device) (float64, bool) { return opt(d.RemappedCorrectable, 1) }},
	{"remapped_rows.uncorrectable", 0, "", func(d *gpu.Device) (float64, bool) { return opt(d.RemappedUncorrectable, 1) }},
	{"clocks_event_reasons.active", 0, "mask", func(d *gpu.Device) (float64, bool) { return opt(d.ClockEventReasons, 1) }},
}

func main() {
	interval := flag.Duration("interval", time.Second, "time between the two reads (GPM pairs samples across reads)")
	flag.Parse()
	os.Exit(run(*interval))
}

func run(interval time.Duration) int {
	c := gpu.New(gpu.Options{Library: gpu.DefaultLibrary()})
	n, err := c.Open()
	if err != nil {
		fmt.Println("gpu-check: cannot open NVML:", err)
		return 2
	}
	defer func() {
		t := time.Now()
		err := c.Close()
		fmt.Printf("\nClose (XID watcher stop + nvmlShutdown): %v, err=%v\n", time.Since(t).Round(time.Millisecond), err)
	}()
	fmt.Printf("NVML open: %d GPU(s)\n", n)
	probe(n)

	collect := func(what string) *gpu.Snapshot {
		t := time.Now()
		s, errs := c.Collect(context.Background())
		fmt.Printf("%s: Collect took %v\n", what, time.Since(t).Round(time.Microsecond))
		printErrs(what, errs)
		return s
	}
	first := collect("first read")
	time.Sleep(interval)
	before := collect("second read")
	smi := map[string]map[string]string{} // uuid -> field -> value
	for _, f := range append([]figure{{query: "uuid"}}, figures...) {
		if f.query == "uuid" {
			continue
		}
		out, err := exec.Command("nvidia-smi", "--query-gpu=uuid,"+f.query, "--format=csv,noheader,nounits").CombinedOutput() //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
		if err != nil {
			fmt.Printf("nvidia-smi %s: %v: %s\n", f.query, err, bytes.TrimSpace(out))
			continue
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			uuid, v, ok := strings.Cut(line, ", ")
			if !ok {
				continue
			}
			if smi[uuid] == nil {
				smi[uuid] = map[string]string{}
			}
			smi[uuid][f.query] = sumSMI(f.query, v)
		}
	}
	after := collect("third read")
	if first == nil || before == nil || after == nil {
		fmt.Println("gpu-check: a read returned nothing")
		return 1
	}

	failed := 0
	for _, d := range before.Devices {
		a := after.Device(d.UUID)
		fmt.Printf("\n%s  %s  parent=%q\n", d.UUID, d.Model, d.Parent)
		fmt.Printf("  %-40s %-14s %-14s %-12s %-7s %s\n", "nvidia-smi field", "ours (read 2)", "ours (read 3)", "nvidia-smi", "tol", "verdict")
		for _, f := range figures {
			v1, ok1 := f.ours(d)
			var v2f float64
			ok2 := false
			if a != nil {
				v2f, ok2 = f.ours(a)
			}
			sv, has := smi[d.UUID][f.query]
			verdict := "ok"
			sf, perr := parseSMI(f.query, sv)
			switch {
			case d.Parent != "":
				verdict = "MIG instance: not compared"
			case !has:
				verdict = "nvidia-smi gave no value: not compared"
			case perr != nil && (!ok1 && !ok2):
				verdict = "ok (absent on both sides)"
			case perr != nil:
				verdict = fmt.Sprintf("FAIL: ours present, nvidia-smi %q", sv)
				failed++
			case !ok1 || !ok2:
				verdict = "FAIL: nvidia-smi has a value, ours is absent"
				failed++
			default:
				lo, hi := math.Min(v1, v2f)-f.tol, math.Max(v1, v2f)+f.tol
				if sf < lo-1e-9 || sf > hi+1e-9 {
					verdict = fmt.Sprintf("FAIL: outside [%g, %g]", lo, hi)
					failed++
				}
			}
			fmt.Printf("  %-40s %-14s %-14s %-12s %-7s %s\n", f.query, show(v1, ok1), show(v2f, ok2), sv, fmt.Sprintf("%g%s", f.tol, f.unit), verdict)
		}
		fmt.Printf("  PCIe tx/rx: %s / %s B/s, replays %s\n", show(d.PCIeTxBps.V, d.PCIeTxBps.OK), show(d.PCIeRxBps.V, d.PCIeRxBps.OK), show(float64(d.PCIeReplays.V), d.PCIeReplays.OK))
		fmt.Printf("  remap pending/failure: %v/%v (ok %v)\n", d.RemapPending.V, d.RemapFailure.V, d.RemapPending.OK)
		fmt.Printf("  energy: %s J  NVLinks: %d active  XID counts: %v\n", show(d.EnergyJ.V, d.EnergyJ.OK), len(d.NVLinks), d.XID)
		for _, l := range d.NVLinks {
			fmt.Printf("    link %d: tx %s rx %s bytes\n", l.Link, show(float64(l.TxBytes.V), l.TxBytes.OK), show(float64(l.RxBytes.V), l.RxBytes.OK))
		}
		fmt.Printf("  GPM activity (read 2): %v\n  GPM activity (read 3): %v\n", d.Activity, activity(a))
	}
	if failed > 0 {
		fmt.Printf("\ngpu-check: %d figure(s) disagree with nvidia-smi beyond tolerance\n", failed)
		return 1
	}
	fmt.Println("\ngpu-check: every figure agrees with nvidia-smi within tolerance")
	return 0
}

// sumSMI adds the values of a multi-field query ("a, b"); a non-number
// anywhere keeps the raw text.
func sumSMI(field, v string) string {
	parts := strings.Split(v, ", ")
	if len(parts) == 1 {
		return strings.TrimSpace(v)
	}
	sum := 0.0
	for _, p := range parts {
		f, err := parseSMI(field, strings.TrimSpace(p))
		if err != nil {
			return strings.TrimSpace(v)
		}
		sum += f
	}
	return strconv.FormatFloat(sum, 'f', -1, 64)
}

func activity(d *gpu.Device) map[gpu.Activity]float64 {
	if d == nil {
		return nil
	}
	return d.Activity
}

func show(v float64, ok bool) string {
	if !ok {
		return "absent"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// parseSMI parses an nvidia-smi value; pstate "P0" -> 0, hex masks.
func parseSMI(field, v string) (float64, error) {
	if strings.HasPrefix(v, "[") || v == "" || v == "N/A" {
		return 0, fmt.Errorf("not a value: %q", v)
	}
	switch {
	case field == "pstate":
		return strconv.ParseFloat(strings.TrimPrefix(v, "P"), 64)
	case strings.HasPrefix(v, "0x"):
		u, err := strconv.ParseUint(v[2:], 16, 64)
		return float64(u), err
	}
	return strconv.ParseFloat(v, 64)
}

func printErrs(what string, errs []error) {
	for _, err := range errs {
		fmt.Printf("%s: error: %v\n", what, err)
	}
}

// probe prints the return code of every NVML call the collector makes, per
// GPU (the reference for the mocks in internal/testing/gputest).
func probe(n int) {
	lib := nvml.New()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		fmt.Println("probe: init:", ret)
		return
	}
	defer func() { _ = lib.Shutdown() }()
	if v, ret := lib.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		fmt.Println("driver:", v)
	}
	if v, ret := lib.SystemGetNVMLVersion(); ret == nvml.SUCCESS {
		fmt.Println("NVML:", v)
	}
	for i := 0; i < n; i++ {
		h, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			fmt.Printf("gpu %d: handle: %v\n", i, ret)
			continue
		}
		fmt.Printf("\nprobe gpu %d:\n", i)
		p := func(name string, v any, ret nvml.Return) { fmt.Printf("  %-38s %-22v %v\n", name, ret, v) }
		v1, r := h.GetUUID()
		p("GetUUID", v1, r)
		cur, pend, r := h.GetMigMode()
		p("GetMigMode", fmt.Sprint(cur, pend), r)
		gs, r := h.GpmQueryDeviceSupport()
		p("GpmQueryDeviceSupport", gs.IsSupportedDevice, r)
		st, r := h.GpmQueryIfStreamingEnabled()
		p("GpmQueryIfStreamingEnabled", st, r)
		arch, r := h.GetArchitecture()
		p("GetArchitecture", arch, r)
		u, r := h.GetUtilizationRates()
		p("GetUtilizationRates", u, r)
		e, _, r := h.GetEncoderUtilization()
		p("GetEncoderUtilization", e, r)
		pw, r := h.GetPowerUsage()
		p("GetPowerUsage", pw, r)
		en, r := h.GetTotalEnergyConsumption()
		p("GetTotalEnergyConsumption", en, r)
		for _, ct := range []nvml.ClockType{nvml.CLOCK_SM, nvml.CLOCK_MEM} {
			c1, clockRet := h.GetClockInfo(ct)
			p(fmt.Sprintf("GetClockInfo(%d)", ct), c1, clockRet)
			c2, clockRet := h.GetMaxClockInfo(ct)
			p(fmt.Sprintf("GetMaxClockInfo(%d)", ct), c2, clockRet)
		}
		er, r := h.GetCurrentClocksEventReasons()
		p("GetCurrentClocksEventReasons", fmt.Sprintf("%#x", er), r)
		tr, r := h.GetCurrentClocksThrottleReasons()
		p("GetCurrentClocksThrottleReasons", fmt.Sprintf("%#x", tr), r)
		tx, r := h.GetPcieThroughput(nvml.PCIE_UTIL_TX_BYTES)
		p("GetPcieThroughput(TX)", tx, r)
		rx, r := h.GetPcieThroughput(nvml.PCIE_UTIL_RX_BYTES)
		p("GetPcieThroughput(RX)", rx, r)
		rp, r := h.GetPcieReplayCounter()
		p("GetPcieReplayCounter", rp, r)
		em, ep, r := h.GetEccMode()
		p("GetEccMode", fmt.Sprint(em, ep), r)
		ecc, r := h.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC)
		p("GetTotalEccErrors(corrected,volatile)", ecc, r)
		ecc, r = h.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.AGGREGATE_ECC)
		p("GetTotalEccErrors(uncorrected,aggr)", ecc, r)
		c1, c2, b1, b2, r := h.GetRemappedRows()
		p("GetRemappedRows", fmt.Sprint(c1, c2, b1, b2), r)
		pl, r := h.GetPowerManagementLimit()
		p("GetPowerManagementLimit", pl, r)
		epl, r := h.GetEnforcedPowerLimit()
		p("GetEnforcedPowerLimit", epl, r)
		fs, r := h.GetFanSpeed()
		p("GetFanSpeed", fs, r)
		nf, r := h.GetNumFans()
		p("GetNumFans", nf, r)
		ps, r := h.GetPerformanceState()
		p("GetPerformanceState", ps, r)
		fv := []nvml.FieldValue{
			{FieldId: nvml.FI_DEV_MEMORY_TEMP},
			{FieldId: nvml.FI_DEV_NVLINK_LINK_COUNT},
			{FieldId: nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_TX, ScopeId: math.MaxUint32},
		}
		r = h.GetFieldValues(fv)
		for _, f := range fv {
			p(fmt.Sprintf("GetFieldValues(field %d)", f.FieldId), fmt.Sprintf("type %d value %v", f.ValueType, f.Value), nvml.Return(f.NvmlReturn))
		}
		p("GetFieldValues (call)", "", r)
		for l := 0; l < 3; l++ {
			s, linkRet := h.GetNvLinkState(l)
			p(fmt.Sprintf("GetNvLinkState(%d)", l), s, linkRet)
		}
		et, r := h.GetSupportedEventTypes()
		p("GetSupportedEventTypes", fmt.Sprintf("%#x", et), r)
		cp, r := h.GetComputeRunningProcesses()
		p("GetComputeRunningProcesses", len(cp), r)
		pu, r := h.GetProcessUtilization(0)
		p("GetProcessUtilization(0)", len(pu), r)
	}
	fmt.Println()
}

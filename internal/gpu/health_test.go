//go:build cgo

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"context"
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/procfs"
	"github.com/containerstats/containerstatsreceiver/internal/testing/gputest"
)

// TestClockEventReasonBits: the names' bits are NVML's.
func TestClockEventReasonBits(t *testing.T) {
	want := map[string]uint64{
		"gpu_idle":                    nvml.ClocksEventReasonGpuIdle,
		"applications_clocks_setting": nvml.ClocksEventReasonApplicationsClocksSetting,
		"sw_power_cap":                nvml.ClocksEventReasonSwPowerCap,
		"hw_slowdown":                 nvml.ClocksThrottleReasonHwSlowdown,
		"sync_boost":                  nvml.ClocksEventReasonSyncBoost,
		"sw_thermal_slowdown":         nvml.ClocksEventReasonSwThermalSlowdown,
		"hw_thermal_slowdown":         nvml.ClocksThrottleReasonHwThermalSlowdown,
		"hw_power_brake_slowdown":     nvml.ClocksThrottleReasonHwPowerBrakeSlowdown,
		"display_clock_setting":       nvml.ClocksEventReasonDisplayClockSetting,
	}
	got := map[string]uint64{}
	all := uint64(0)
	for _, r := range ClockEventReasons {
		got[r.Name] = r.Bit
		all |= r.Bit
	}
	assert.Equal(t, want, got)
	assert.Equal(t, uint64(nvml.ClocksEventReasonAll), all)
}

// TestCollectHealthH100: every health figure of the simulated H100, as
// gputest documents them; fan and NVLink absent as on the real one.
func TestCollectHealthH100(t *testing.T) {
	c := open(t, gputest.H100(2), Options{})
	s, errs := c.Collect(context.Background())
	require.Empty(t, errs)
	d := s.Device(gputest.UUID(1))
	assert.Equal(t, some(1110.0), d.ClockSMMHz)
	assert.Equal(t, some(2616.0), d.ClockMemMHz)
	assert.Equal(t, some(1980.0), d.MaxClockSMMHz)
	assert.Equal(t, some(2619.0), d.MaxClockMemMHz)
	assert.Equal(t, some(gputest.ClockEventReasons[1]), d.ClockEventReasons)
	assert.Equal(t, some(2199.0*1024), d.PCIeTxBps)
	assert.Equal(t, some(616.0*1024), d.PCIeRxBps)
	assert.Equal(t, some[uint64](4), d.PCIeReplays)
	assert.Equal(t, [2][2]Opt[uint64]{{some[uint64](111), some[uint64](21)}, {some[uint64](1111), some[uint64](221)}}, d.ECC)
	assert.Equal(t, some[uint64](6), d.RemappedCorrectable)
	assert.Equal(t, some[uint64](2), d.RemappedUncorrectable)
	assert.Equal(t, some(true), d.RemapPending)
	assert.Equal(t, some(false), d.RemapFailure)
	assert.Equal(t, some(699.0), d.PowerLimitW)
	assert.False(t, d.FanSpeed.OK, "no fan on an SXM board")
	assert.Equal(t, some[int64](1), d.PerformanceState)
	assert.Equal(t, some(36.0), d.MemoryTemperatureC)
	assert.Empty(t, d.NVLinks, "GetNvLinkState NOT_SUPPORTED")
	assert.Empty(t, d.Activity, "GPM needs two samples")
}

// TestCollectConsumerAbsent: a consumer GPU's unsupported figures are
// absent, not zero, and cost no error.
func TestCollectConsumerAbsent(t *testing.T) {
	c := open(t, gputest.Consumer(1), Options{})
	for i := 0; i < 2; i++ {
		s, errs := c.Collect(context.Background())
		require.Empty(t, errs)
		d := s.Device(gputest.UUID(0))
		for _, o := range []Opt[uint64]{d.ECC[0][0], d.ECC[0][1], d.ECC[1][0], d.ECC[1][1], d.RemappedCorrectable, d.RemappedUncorrectable} {
			assert.False(t, o.OK)
		}
		assert.False(t, d.RemapPending.OK)
		assert.False(t, d.MemoryTemperatureC.OK)
		assert.Empty(t, d.NVLinks)
		assert.Empty(t, d.Activity, "no GPM on Ada")
		assert.Equal(t, some(0.37), d.FanSpeed)
		require.Len(t, s.Devices, 1, "no MIG")
	}
}

// TestCollectNVLink: the A100's two active links of twelve, bytes.
func TestCollectNVLink(t *testing.T) {
	c := open(t, gputest.A100(2), Options{})
	s, errs := c.Collect(context.Background())
	require.Empty(t, errs)
	assert.Equal(t, []NVLink{
		{Link: 0, TxBytes: some[uint64](1_001_000 * 1024), RxBytes: some[uint64](2_001_000 * 1024)},
		{Link: 1, TxBytes: some[uint64](1_001_010 * 1024), RxBytes: some[uint64](2_001_010 * 1024)},
	}, s.Device(gputest.UUID(1)).NVLinks)
}

// TestCollectGPMPairs: GPM activity comes from this Collect's sample and
// the previous one, per whole GPU and per MIG instance (where FP64 is not
// given: absent, not 0); samples are freed, none leaks.
func TestCollectGPMPairs(t *testing.T) {
	node := gputest.H100(2)
	node.EnableMIG(0, gputest.MIG{Profile: "1g.10gb", MemTotal: 10 << 30, MemUsed: 1 << 20},
		gputest.MIG{Profile: "2g.20gb", MemTotal: 20 << 30, MemUsed: 2 << 20})
	c := open(t, node, Options{})
	s, errs := c.Collect(context.Background())
	require.Empty(t, errs)
	for _, d := range s.Devices {
		assert.Empty(t, d.Activity, "first Collect: %s", d.UUID)
	}
	for round := 0; round < 3; round++ {
		s, errs = c.Collect(context.Background())
		require.Empty(t, errs)
		assert.Empty(t, s.Device(gputest.UUID(0)).Activity, "a GPU in MIG mode: per instance only")
		for _, tc := range []struct {
			uuid  string
			gpu   int
			gi    int
			kinds int
		}{
			{gputest.UUID(1), 1, -1, 8},
			{gputest.MIGUUID(0, 0), 0, gputest.MIGInstanceID(0), 7},
			{gputest.MIGUUID(0, 1), 0, gputest.MIGInstanceID(1), 7},
		} {
			a := s.Device(tc.uuid).Activity
			require.Len(t, a, tc.kinds, tc.uuid)
			for _, m := range gpmMetrics {
				p, ret := gputest.GPMPercent(tc.gpu, tc.gi, m.id)
				if ret != nvml.SUCCESS {
					assert.NotContains(t, a, m.a)
					continue
				}
				assert.InDelta(t, p/100, a[m.a], 1e-12, "%s %s", tc.uuid, m.a)
			}
		}
		assert.Equal(t, 3, node.GPMLive(), "one kept sample per device")
	}
	require.NoError(t, c.Close())
	assert.Equal(t, 0, node.GPMLive(), "Close frees the samples")
}

// TestCollectGPMDeviceGone: a MIG instance that disappears frees its
// sample.
func TestCollectGPMDeviceGone(t *testing.T) {
	node := gputest.H100(1)
	node.EnableMIG(0, gputest.MIG{Profile: "1g.10gb", MemTotal: 10 << 30}, gputest.MIG{Profile: "1g.10gb", MemTotal: 10 << 30})
	c := open(t, node, Options{})
	c.Collect(context.Background())
	assert.Equal(t, 2, node.GPMLive())
	node.EnableMIG(0, gputest.MIG{Profile: "1g.10gb", MemTotal: 10 << 30})
	_, errs := c.Collect(context.Background())
	require.Empty(t, errs)
	assert.Equal(t, 1, node.GPMLive())
}

// TestXIDBurst: a burst of events is counted exactly, per GPU and code.
func TestXIDBurst(t *testing.T) {
	node := gputest.H100(3)
	c := open(t, node, Options{})
	s, errs := c.Collect(context.Background())
	require.Empty(t, errs)
	assert.Equal(t, map[uint64]uint64{}, s.Device(gputest.UUID(0)).XID, "watched, nothing seen: no code")
	node.InjectXID(0, 13, 5000)
	node.InjectXID(2, 79, 1)
	node.InjectXID(0, 31, 7)
	require.Eventually(t, node.Events.Drained, 10*time.Second, time.Millisecond)
	s, errs = c.Collect(context.Background())
	require.Empty(t, errs)
	assert.Equal(t, map[uint64]uint64{13: 5000, 31: 7}, s.Device(gputest.UUID(0)).XID)
	assert.Equal(t, map[uint64]uint64{}, s.Device(gputest.UUID(1)).XID)
	assert.Equal(t, map[uint64]uint64{79: 1}, s.Device(gputest.UUID(2)).XID)
	require.NoError(t, c.Close())
	assert.True(t, node.Events.Freed())
}

// TestXIDHangingWait: a wait that never returns blocks neither Collect
// nor (beyond stopWait) Close.
func TestXIDHangingWait(t *testing.T) {
	node := gputest.H100(1)
	node.Events.Hang()
	defer node.Events.Release()
	c := New(Options{Library: node.Server})
	_, err := c.Open()
	require.NoError(t, err)
	require.Eventually(t, func() bool { return node.Events.Waits() > 0 }, 5*time.Second, time.Millisecond, "the watcher is in its wait")
	node.InjectXID(0, 48, 1)
	for i := 0; i < 3; i++ {
		start := time.Now()
		s, errs := c.Collect(context.Background())
		require.Empty(t, errs)
		assert.Less(t, time.Since(start), time.Second)
		assert.Equal(t, map[uint64]uint64{}, s.Device(gputest.UUID(0)).XID)
	}
	start := time.Now()
	err = c.Close()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "XID event watcher still in nvmlEventSetWait")
	assert.Less(t, time.Since(start), stopWait+time.Second)
	assert.Equal(t, 0, node.Initialized, "NVML shut down regardless")
}

// TestXIDUnsupported: no event set, no watcher, no XID map.
func TestXIDUnsupported(t *testing.T) {
	node := gputest.A100(1)
	node.Server.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED }
	c := open(t, node, Options{})
	s, errs := c.Collect(context.Background())
	require.Empty(t, errs)
	assert.Nil(t, s.Device(gputest.UUID(0)).XID)
	assert.Nil(t, c.xid)
}

// TestXIDWaitError: a failing wait is reported once, by the next Collect.
func TestXIDWaitError(t *testing.T) {
	node := gputest.A100(1)
	calls := 0
	node.Server.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
		return &failingSet{calls: &calls}, nvml.SUCCESS
	}
	node.GPUs[0].RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return nvml.SUCCESS }
	c := open(t, node, Options{})
	require.Eventually(t, func() bool {
		c.xid.mu.Lock()
		defer c.xid.mu.Unlock()
		return c.xid.err != nil
	}, 5*time.Second, time.Millisecond)
	_, errs := c.Collect(context.Background())
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "XID event wait: ERROR_UNKNOWN")
	_, errs = c.Collect(context.Background())
	require.Empty(t, errs)
}

type failingSet struct{ calls *int }

func (f *failingSet) Free() nvml.Return { return nvml.SUCCESS }
func (f *failingSet) Wait(uint32) (nvml.EventData, nvml.Return) {
	*f.calls++
	if *f.calls == 1 {
		return nvml.EventData{}, nvml.ERROR_UNKNOWN
	}
	time.Sleep(10 * time.Millisecond)
	return nvml.EventData{}, nvml.ERROR_TIMEOUT
}

// TestCollectLostGPU: a GPU lost mid-run is reported once and dropped; the
// other GPUs keep every point.
func TestCollectLostGPU(t *testing.T) {
	node := gputest.A100(3)
	c := open(t, node, Options{})
	s, errs := c.Collect(context.Background())
	require.Empty(t, errs)
	require.Len(t, s.Devices, 3)
	node.Lose(1)
	s, errs = c.Collect(context.Background())
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "gpu "+gputest.UUID(1)+": name: ERROR_GPU_IS_LOST")
	assert.Contains(t, errs[0].Error(), "dropped")
	require.Len(t, s.Devices, 2)
	assert.Nil(t, s.Device(gputest.UUID(1)))
	assert.True(t, s.Device(gputest.UUID(2)).ClockSMMHz.OK)
	s, errs = c.Collect(context.Background())
	require.Empty(t, errs, "reported once")
	require.Len(t, s.Devices, 2)
}

// TestProcessUtilizationNotFoundBuffer: with NOT_FOUND the real NVML hands
// back its unfilled buffer (seen on an H100, driver 580): none of it is a
// process (no /proc/0 lookup, the device stays exclusively owned).
func TestProcessUtilizationNotFoundBuffer(t *testing.T) {
	node := gputest.A100(1)
	node.SetProcs(0, true, gputest.Proc{PID: 4105, Mem: 1 << 20})
	node.GPUs[0].GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		return make([]nvml.ProcessUtilizationSample, 72), nvml.ERROR_NOT_FOUND
	}
	procs := &countingProcs{Procs: fixtureProc}
	c := open(t, node, Options{Procs: procs})
	s, errs := c.Collect(context.Background())
	require.Empty(t, errs)
	assert.Equal(t, []int{4105}, procs.pids)
	o, ok := s.Owner(gputest.UUID(0), nil)
	require.True(t, ok)
	assert.Equal(t, idD4, o.ContainerID)
	cd := s.Container(idD4, nil)
	require.Len(t, cd, 1)
	assert.Equal(t, some(0.0), cd[0].DutyCycle, "idle, not absent")
}

type countingProcs struct {
	Procs
	pids []int
}

func (p *countingProcs) Cgroup(pid int) ([]procfs.CgroupLine, error) {
	p.pids = append(p.pids, pid)
	return p.Procs.Cgroup(pid)
}

// TestOwner: exactly one container (by processes, by allocation, or both
// agreeing) owns a device; sharing, a host process, idleness or a
// disagreement leave it without owner.
func TestOwner(t *testing.T) {
	ref := func(c string) Ref { return Ref{Namespace: "ml", Pod: "p", Container: c} }
	names := func(id string) (Ref, bool) {
		switch id {
		case "a":
			return ref("a"), true
		case "b":
			return ref("b"), true
		}
		return Ref{}, false
	}
	for _, tc := range []struct {
		name  string
		users map[string]map[string]bool
		alloc map[Ref][]string
		host  bool
		want  *Owner
	}{
		{name: "idle"},
		{name: "one process container", users: map[string]map[string]bool{"a": {"G": true}}, want: &Owner{ContainerID: "a", Ref: ptr(ref("a"))}},
		{name: "unnamed container", users: map[string]map[string]bool{"x": {"G": true}}, want: &Owner{ContainerID: "x"}},
		{name: "two containers", users: map[string]map[string]bool{"a": {"G": true}, "b": {"G": true}}},
		{name: "with a host process", users: map[string]map[string]bool{"a": {"G": true}}, host: true},
		{name: "allocated only", alloc: map[Ref][]string{ref("b"): {"G"}}, want: &Owner{Ref: ptr(ref("b"))}},
		{name: "allocated twice (time-slicing)", alloc: map[Ref][]string{ref("a"): {"G"}, ref("b"): {"G"}}},
		{name: "allocated and used agree", users: map[string]map[string]bool{"a": {"G": true}}, alloc: map[Ref][]string{ref("a"): {"G"}}, want: &Owner{ContainerID: "a", Ref: ptr(ref("a"))}},
		{name: "allocated to one, used by another", users: map[string]map[string]bool{"a": {"G": true}}, alloc: map[Ref][]string{ref("b"): {"G"}}},
		{name: "other device", users: map[string]map[string]bool{"a": {"H": true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Snapshot{users: tc.users, alloc: tc.alloc, host: map[string]bool{"G": tc.host}}
			if s.users == nil {
				s.users = map[string]map[string]bool{}
			}
			o, ok := s.Owner("G", names)
			if tc.want == nil {
				assert.False(t, ok)
				return
			}
			require.True(t, ok)
			assert.Equal(t, *tc.want, o)
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestFieldValue decodes every NVML value type and refuses a failed field.
func TestFieldValue(t *testing.T) {
	f := func(typ nvml.ValueType, bits uint64) nvml.FieldValue {
		fv := nvml.FieldValue{ValueType: uint32(typ)}
		binary.NativeEndian.PutUint64(fv.Value[:], bits)
		return fv
	}
	for _, tc := range []struct {
		fv   nvml.FieldValue
		want float64
	}{
		{f(nvml.VALUE_TYPE_DOUBLE, math.Float64bits(35.5)), 35.5},
		{f(nvml.VALUE_TYPE_UNSIGNED_INT, 35), 35},
		{f(nvml.VALUE_TYPE_UNSIGNED_LONG, 1<<40), 1 << 40},
		{f(nvml.VALUE_TYPE_UNSIGNED_LONG_LONG, 1<<50), 1 << 50},
		{f(nvml.VALUE_TYPE_SIGNED_LONG_LONG, uint64(math.MaxUint64)), -1},
		{f(nvml.VALUE_TYPE_SIGNED_INT, 0xffffffff), -1},
		{f(nvml.VALUE_TYPE_UNSIGNED_SHORT, 0x1_0007), 7},
	} {
		v, ok := fieldValue(tc.fv)
		require.True(t, ok)
		assert.Equal(t, tc.want, v)
	}
	bad := f(nvml.VALUE_TYPE_UNSIGNED_INT, 35)
	bad.NvmlReturn = uint32(nvml.ERROR_NOT_SUPPORTED)
	_, ok := fieldValue(bad)
	assert.False(t, ok)
	_, ok = fieldValue(f(nvml.VALUE_TYPE_COUNT, 1))
	assert.False(t, ok)
}

// FuzzFieldValue: any type and bytes decode without panic; a failed field
// never decodes; unsigned 32-bit values round-trip.
func FuzzFieldValue(f *testing.F) {
	f.Add(uint32(nvml.VALUE_TYPE_UNSIGNED_INT), uint32(0), uint64(35))
	f.Add(uint32(nvml.VALUE_TYPE_DOUBLE), uint32(0), math.Float64bits(1.5))
	f.Add(uint32(99), uint32(3), uint64(1))
	f.Fuzz(func(t *testing.T, typ, ret uint32, bits uint64) {
		fv := nvml.FieldValue{ValueType: typ, NvmlReturn: ret}
		binary.NativeEndian.PutUint64(fv.Value[:], bits)
		v, ok := fieldValue(fv)
		if ret != 0 && ok {
			t.Fatalf("field with NVML return %d decoded", ret)
		}
		if ok && nvml.ValueType(typ) == nvml.VALUE_TYPE_UNSIGNED_INT && v != float64(uint32(bits)) {
			t.Fatalf("uint32 %d decoded as %v", uint32(bits), v)
		}
	})
}

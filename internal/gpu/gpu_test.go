//go:build cgo

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/podresources"
	"github.com/containerstats/containerstatsreceiver/internal/procfs"
	"github.com/containerstats/containerstatsreceiver/internal/testing/gputest"
)

const (
	idA1 = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
	idB2 = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
	idC3 = "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
	idD4 = "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4"
)

var fixtureProc = procfs.NewFS(filepath.Join("..", "..", "testdata", "fixtures", "gpu"))

// TestOpenRealLibraryAbsent runs the real go-nvml library: on a machine
// without libnvidia-ml.so.1 (this one, CI) Open reports ErrUnavailable and
// Close never touches NVML (its symbols are unresolved: calling Shutdown
// would kill the process).
func TestOpenRealLibraryAbsent(t *testing.T) {
	c := New(Options{Library: nvml.New(nvml.WithLibraryPath("/nonexistent/libnvidia-ml.so.1"))})
	_, err := c.Open()
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), "libnvidia-ml.so.1 not found")
	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	_, errs := c.Collect(context.Background())
	require.Len(t, errs, 1, "Collect without a successful Open is an error, not a panic")
}

func TestCloseWithoutOpen(t *testing.T) {
	require.NoError(t, New(Options{}).Close())
	var c *Collector
	require.NoError(t, c.Close())
	_, err := New(Options{}).Open()
	require.ErrorIs(t, err, ErrUnavailable)
}

func TestOpenNoGPU(t *testing.T) {
	node := gputest.A100(0)
	c := New(Options{Library: node.Server})
	_, err := c.Open()
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Equal(t, 0, node.Initialized, "NVML released again when there is no GPU")
	require.NoError(t, c.Close())
	assert.Equal(t, 0, node.Initialized)
}

func TestOpenDriverNotLoaded(t *testing.T) {
	node := gputest.A100(1)
	node.Server.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }
	_, err := New(Options{Library: node.Server}).Open()
	require.ErrorIs(t, err, ErrUnavailable)
	node.Server.InitFunc = func() nvml.Return { return nvml.ERROR_NO_PERMISSION }
	_, err = New(Options{Library: node.Server}).Open()
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrUnavailable, "a permission problem is a fault, not an absence")
}

func open(t *testing.T, node *gputest.Node, opts Options) *Collector {
	t.Helper()
	opts.Library = node.Server
	c := New(opts)
	n, err := c.Open()
	require.NoError(t, err)
	require.Positive(t, n)
	t.Cleanup(func() {
		require.NoError(t, c.Close())
		require.NoError(t, c.Close())
		require.Equal(t, 0, node.Initialized, "Init and Shutdown balance")
	})
	return c
}

// sharedNode: GPU 0 shared by a1 (two processes) and b2 plus a host
// daemon; GPU 1 in MIG mode with c3 on one instance; GPU 2 used by d4 only,
// without per-process utilization.
func sharedNode() *gputest.Node {
	node := gputest.A100(3)
	node.SetProcs(0, true,
		gputest.Proc{PID: 4101, Mem: 512 * gputest.MiB, SM: []uint32{16, 18}},
		gputest.Proc{PID: 4102, Mem: 256 * gputest.MiB, SM: []uint32{9}},
		gputest.Proc{PID: 4103, Mem: 64 * gputest.MiB, SM: []uint32{5}},
		gputest.Proc{PID: 4106, Mem: 32 * gputest.MiB, SM: []uint32{1}},
		gputest.Proc{PID: 4107, Mem: 8 * gputest.MiB, SM: []uint32{2}}, // exited
	)
	node.EnableMIG(1,
		gputest.MIG{
			Profile: "1g.5gb", MemTotal: 4864 * gputest.MiB, MemUsed: 300 * gputest.MiB,
			Procs: []gputest.Proc{{PID: 4104, Mem: 200 * gputest.MiB}},
		},
		gputest.MIG{Profile: "3g.20gb", MemTotal: 19968 * gputest.MiB, MemUsed: 13 * gputest.MiB},
	)
	node.SetProcs(2, false, gputest.Proc{PID: 4105, Mem: 600 * gputest.MiB})
	return node
}

func TestCollectDevicesAndMIG(t *testing.T) {
	c := open(t, sharedNode(), Options{})
	s, errs := c.Collect(context.Background())
	require.Empty(t, errs)
	var ids []string
	for _, d := range s.Devices {
		ids = append(ids, d.UUID)
	}
	assert.Equal(t, []string{gputest.UUID(0), gputest.UUID(1), gputest.MIGUUID(1, 0), gputest.MIGUUID(1, 1), gputest.UUID(2)}, ids)

	g0 := s.Device(gputest.UUID(0))
	assert.Equal(t, "NVIDIA A100-SXM4-40GB", g0.Model)
	assert.Equal(t, some[uint64](1000*gputest.MiB), g0.MemoryUsed)
	assert.Equal(t, some[uint64](40*1024*gputest.MiB), g0.MemoryTotal)
	assert.Equal(t, some(0.41), g0.Utilization)
	assert.Equal(t, some(0.21), g0.EncoderUtilization)
	assert.Equal(t, some(0.31), g0.DecoderUtilization)
	assert.Equal(t, some(201.001), g0.PowerW)
	assert.Equal(t, some(5_000_000.0), g0.EnergyJ)
	assert.Equal(t, some(51.0), g0.TemperatureC)
	assert.InDelta(t, 1000.0/40960, g0.MemoryUtilization().V, 1e-12)

	g1 := s.Device(gputest.UUID(1))
	assert.False(t, g1.Utilization.OK, "a GPU in MIG mode has no utilization: no point, not 0")
	assert.False(t, g1.EncoderUtilization.OK)
	assert.Equal(t, some(402.002), g1.PowerW)

	m := s.Device(gputest.MIGUUID(1, 0))
	assert.Equal(t, gputest.UUID(1), m.Parent)
	assert.Equal(t, "NVIDIA A100-SXM4-40GB MIG 1g.5gb", m.Model)
	assert.Equal(t, some[uint64](300*gputest.MiB), m.MemoryUsed)
	assert.Equal(t, some[uint64](4864*gputest.MiB), m.MemoryTotal)
	for name, v := range map[string]bool{
		"utilization": m.Utilization.OK, "power": m.PowerW.OK, "energy": m.EnergyJ.OK, "temperature": m.TemperatureC.OK,
	} {
		assert.False(t, v, "MIG instance %s is not supported by NVML: no point", name)
	}
	assert.Nil(t, s.Container(idA1, nil), "process attribution off: nothing attributed")
}

func TestCollectProcessAttribution(t *testing.T) {
	node := sharedNode()
	c := open(t, node, Options{Procs: fixtureProc})
	s, errs := c.Collect(context.Background())
	require.Empty(t, errs, "an exited process (4107) and a host process (4106) are not errors")

	a1 := s.Container(idA1, nil)
	require.Len(t, a1, 1)
	assert.Equal(t, gputest.UUID(0), a1[0].Device.UUID)
	assert.Equal(t, some[uint64](576*gputest.MiB), a1[0].MemoryUsed, "a1's two processes: 512+64 MiB")
	assert.InDelta(t, 0.22, a1[0].DutyCycle.V, 1e-12, "mean(16,18)+5 percent")

	b2 := s.Container(idB2, nil)
	require.Len(t, b2, 1)
	assert.Equal(t, some[uint64](256*gputest.MiB), b2[0].MemoryUsed)
	assert.InDelta(t, 0.09, b2[0].DutyCycle.V, 1e-12)
	// The shared device's own values are not the containers'.
	assert.NotEqual(t, s.Device(gputest.UUID(0)).MemoryUsed, b2[0].MemoryUsed)
	assert.NotEqual(t, s.Device(gputest.UUID(0)).Utilization, b2[0].DutyCycle)

	c3 := s.Container(idC3, nil)
	require.Len(t, c3, 1)
	assert.Equal(t, gputest.MIGUUID(1, 0), c3[0].Device.UUID, "attributed to the MIG instance, not the GPU")
	assert.Equal(t, some[uint64](200*gputest.MiB), c3[0].MemoryUsed)
	assert.False(t, c3[0].DutyCycle.OK, "no per-process utilization on MIG: no point")

	d4 := s.Container(idD4, nil)
	require.Len(t, d4, 1, "hybrid /proc/<pid>/cgroup: the v1 lines name the container")
	assert.Equal(t, some[uint64](600*gputest.MiB), d4[0].MemoryUsed)
	assert.False(t, d4[0].DutyCycle.OK, "no per-process utilization and no exclusive allocation: no point")

	// The second scrape asks only for samples newer than the first's.
	var asked []uint64
	inner := node.GPUs[0].GetProcessUtilizationFunc
	node.GPUs[0].GetProcessUtilizationFunc = func(last uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		asked = append(asked, last)
		return inner(last)
	}
	s2, errs := c.Collect(context.Background())
	require.Empty(t, errs)
	a1 = s2.Container(idA1, nil)
	require.Len(t, a1, 1)
	assert.InDelta(t, 0.22, a1[0].DutyCycle.V, 1e-12)
	assert.Equal(t, []uint64{1_006_000}, asked, "lastSeen is the newest sample of the previous scrape")
	s3, errs := c.Collect(context.Background())
	require.Empty(t, errs)
	assert.Equal(t, []uint64{1_006_000, 2_006_000}, asked)
	require.Len(t, s3.Container(idA1, nil), 1)

	// A period without samples (NVML: NOT_FOUND) means idle: 0, not absent.
	node.GPUs[0].GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		return nil, nvml.ERROR_NOT_FOUND
	}
	s4, errs := c.Collect(context.Background())
	require.Empty(t, errs)
	assert.Equal(t, some(0.0), s4.Container(idB2, nil)[0].DutyCycle)
	assert.Contains(t, c.lastSeen, gputest.UUID(0))

	// A device that disappears is forgotten.
	node.Server.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.SUCCESS }
	s5, errs := c.Collect(context.Background())
	require.Empty(t, errs)
	assert.Empty(t, s5.Devices)
	assert.Empty(t, c.lastSeen)
}

type fakeAlloc struct {
	allocs []podresources.Allocation
	err    error
}

func (f fakeAlloc) List(context.Context) ([]podresources.Allocation, error) { return f.allocs, f.err }

func TestCollectPodResources(t *testing.T) {
	refD4 := Ref{Namespace: "ml", Pod: "trainer", Container: "main"}
	refA1 := Ref{Namespace: "ml", Pod: "shared", Container: "a"}
	refB2 := Ref{Namespace: "ml", Pod: "shared", Container: "b"}
	refC3 := Ref{Namespace: "ml", Pod: "mig", Container: "c"}
	alloc := fakeAlloc{allocs: []podresources.Allocation{
		{Namespace: "ml", Pod: "trainer", Container: "main", DeviceIDs: []string{gputest.UUID(2), "GPU-unknown"}},
		{Namespace: "ml", Pod: "shared", Container: "a", DeviceIDs: []string{gputest.UUID(0) + "::0"}},
		{Namespace: "ml", Pod: "shared", Container: "b", DeviceIDs: []string{gputest.UUID(0) + "::1"}},
		{Namespace: "ml", Pod: "mig", Container: "c", DeviceIDs: []string{gputest.MIGUUID(1, 1)}},
	}}

	t.Run("allocations only", func(t *testing.T) {
		c := open(t, sharedNode(), Options{PodResources: alloc})
		s, errs := c.Collect(context.Background())
		require.Empty(t, errs)
		d4 := s.Container(idD4, &refD4)
		require.Len(t, d4, 1, "unknown device IDs are ignored")
		assert.Equal(t, gputest.UUID(2), d4[0].Device.UUID)
		assert.Equal(t, some(0.43), d4[0].DutyCycle, "exclusively allocated: the device's utilization is the container's")
		assert.False(t, d4[0].MemoryUsed.OK, "no process attribution: no memory point")

		a1 := s.Container(idA1, &refA1)
		require.Len(t, a1, 1)
		assert.False(t, a1[0].DutyCycle.OK, "time-sliced between two containers: the device value is not copied")
		c3 := s.Container(idC3, &refC3)
		require.Len(t, c3, 1)
		assert.Equal(t, gputest.MIGUUID(1, 1), c3[0].Device.UUID)
		assert.False(t, c3[0].DutyCycle.OK)
		assert.Nil(t, s.Container(idB2, nil), "without the container's name, allocations cannot be joined")
	})

	t.Run("both sources", func(t *testing.T) {
		c := open(t, sharedNode(), Options{Procs: fixtureProc, PodResources: alloc})
		s, errs := c.Collect(context.Background())
		require.Empty(t, errs)
		c3 := s.Container(idC3, &refC3)
		require.Len(t, c3, 2, "the instance its process uses and the one it was allocated")
		assert.Equal(t, gputest.MIGUUID(1, 0), c3[0].Device.UUID)
		assert.Equal(t, some[uint64](200*gputest.MiB), c3[0].MemoryUsed)
		assert.Equal(t, some[uint64](0), c3[1].MemoryUsed, "allocated but unused: 0, known from the process list")
		b2 := s.Container(idB2, &refB2)
		require.Len(t, b2, 1)
		assert.InDelta(t, 0.09, b2[0].DutyCycle.V, 1e-12)
	})

	t.Run("dead socket", func(t *testing.T) {
		c := open(t, sharedNode(), Options{Procs: fixtureProc, PodResources: fakeAlloc{err: errors.New("pod-resources /x.sock: List: unavailable")}})
		s, errs := c.Collect(context.Background())
		require.Len(t, errs, 1)
		assert.Contains(t, errs[0].Error(), "/x.sock")
		require.Len(t, s.Devices, 5, "devices and process attribution survive")
		require.Len(t, s.Container(idA1, &refA1), 1)
	})
}

func TestCollectErrorOnOneDevice(t *testing.T) {
	node := gputest.A100(4)
	node.GPUs[1].GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST }
	node.GPUs[2].GetPowerUsageFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
	node.GPUs[3].GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.ERROR_UNKNOWN }
	node.SetProcs(0, true, gputest.Proc{PID: 4101, Mem: 5 * gputest.MiB, SM: []uint32{7}})
	c := open(t, node, Options{Procs: fixtureProc})
	s, errs := c.Collect(context.Background())
	require.Len(t, errs, 3)
	msgs := []string{errs[0].Error(), errs[1].Error(), errs[2].Error()}
	assert.Contains(t, msgs[0], "gpu 1: uuid: ERROR_GPU_IS_LOST")
	assert.Contains(t, msgs[1], "gpu "+gputest.UUID(2)+": power usage: ERROR_UNKNOWN")
	assert.Contains(t, msgs[2], "gpu "+gputest.UUID(3)+": compute processes: ERROR_UNKNOWN")
	require.Len(t, s.Devices, 3, "the lost GPU costs its own points only")
	g2 := s.Device(gputest.UUID(2))
	assert.False(t, g2.PowerW.OK)
	assert.True(t, g2.TemperatureC.OK, "one failed call costs that metric only")
	require.Len(t, s.Container(idA1, nil), 1)
}

func TestContainerOfErrors(t *testing.T) {
	dir := t.TempDir()
	c := New(Options{Procs: procfs.NewFS(dir)})
	errs := []error{}
	assert.Empty(t, c.containerOf(99, map[uint32]string{}, &errs))
	assert.Empty(t, errs, "a process that exited is not an error")
	// A malformed file names the process.
	c = New(Options{Procs: badProcs{}})
	assert.Empty(t, c.containerOf(98, map[uint32]string{}, &errs))
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "gpu process 98")
}

type badProcs struct{}

func (badProcs) Cgroup(int) ([]procfs.CgroupLine, error) {
	return nil, errors.New("/proc/98/cgroup: garbage")
}

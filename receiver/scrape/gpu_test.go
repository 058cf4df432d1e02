//go:build cgo

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/containerstats/containerstatsreceiver/internal/gpu"
	"github.com/containerstats/containerstatsreceiver/internal/testing/gputest"
)

const (
	ctrA1 = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
	ctrB2 = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
	ctrC3 = "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
	ctrD4 = "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4"
)

// gpuRoot is the v2-systemd fixture with the GPU fixture's /proc/<pid>
// files laid over it, in a short temp path (unix sockets are limited to
// 108 bytes).
func gpuRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "gpu")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join(fixtures, "v2-systemd"))))
	require.NoError(t, os.CopyFS(filepath.Join(dir, "proc"), os.DirFS(filepath.Join(fixtures, "gpu", "proc"))))
	return dir
}

// fakeKubelet serves pod-resources List on root's default socket path.
type fakeKubelet struct {
	v1.UnimplementedPodResourcesListerServer
	resp *v1.ListPodResourcesResponse
}

func (f *fakeKubelet) List(context.Context, *v1.ListPodResourcesRequest) (*v1.ListPodResourcesResponse, error) {
	return f.resp, nil
}

const podResourcesSocket = "/var/lib/kubelet/pod-resources/kubelet.sock"

func serveKubelet(t *testing.T, root string, resp *v1.ListPodResourcesResponse) {
	t.Helper()
	sock := filepath.Join(root, podResourcesSocket)
	require.NoError(t, os.MkdirAll(filepath.Dir(sock), 0o755))
	lis, err := net.Listen("unix", sock)
	require.NoError(t, err)
	g := grpc.NewServer()
	v1.RegisterPodResourcesListerServer(g, &fakeKubelet{resp: resp})
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
}

// namer is an injected GPUOptions.Names: container ID ->
// Kubernetes names.
type namer map[string]gpu.Ref

func (n namer) ContainerRef(_ context.Context, id string) (gpu.Ref, bool) {
	r, ok := n[id]
	return r, ok
}

func newGPUScraper(t *testing.T, root string, clk *fakeClock, node *gputest.Node, g GPUOptions) *Scraper {
	t.Helper()
	g.Enabled, g.NVML = true, node.Server
	s := New(newSettings(), Options{
		Host: testHost(root), NodeName: "node-1", MetricsBuilderConfig: defaultMBC(), Now: clk.Now, GPU: g,
	})
	require.NoError(t, s.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() {
		require.NoError(t, s.Shutdown(context.Background()))
		require.NoError(t, s.Shutdown(context.Background()))
		require.Equal(t, 0, node.Initialized, "NVML released in Shutdown")
	})
	return s
}

// onlyGPU keeps the hw.* and container.accelerator.* metrics (and the
// resources that have some), so the GPU golden files do not depend on the
// CPU and memory metrics.
func onlyGPU(m pmetric.Metrics) pmetric.Metrics {
	out := pmetric.NewMetrics()
	m.CopyTo(out)
	out.ResourceMetrics().RemoveIf(func(rm pmetric.ResourceMetrics) bool {
		rm.ScopeMetrics().RemoveIf(func(sm pmetric.ScopeMetrics) bool {
			sm.Metrics().RemoveIf(func(x pmetric.Metric) bool {
				return !strings.HasPrefix(x.Name(), "hw.") && !strings.HasPrefix(x.Name(), "container.accelerator.")
			})
			return sm.Metrics().Len() == 0
		})
		return rm.ScopeMetrics().Len() == 0
	})
	return out
}

// a100Node: GPU 0 shared by a1 (two processes), b2 and a host daemon;
// GPU 1 in MIG mode with c3 on its 1g.5gb instance; GPU 2 used by d4 alone,
// without per-process utilization; GPU 3 idle.
func a100Node() *gputest.Node {
	node := gputest.A100(4)
	node.SetProcs(0, true,
		gputest.Proc{PID: 4101, Mem: 512 * gputest.MiB, SM: []uint32{16, 18}},
		gputest.Proc{PID: 4102, Mem: 256 * gputest.MiB, SM: []uint32{9}},
		gputest.Proc{PID: 4103, Mem: 64 * gputest.MiB, SM: []uint32{5}},
		gputest.Proc{PID: 4106, Mem: 32 * gputest.MiB, SM: []uint32{1}},
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

// h100MIGNode: two H100s; GPU 0 in MIG mode with c3 alone on its 1g.10gb
// instance and an idle 3g.40gb; GPU 1 whole, d4's alone.
func h100MIGNode() *gputest.Node {
	n := gputest.H100(2)
	n.EnableMIG(0,
		gputest.MIG{
			Profile: "1g.10gb", MemTotal: 9984 * gputest.MiB, MemUsed: 310 * gputest.MiB,
			Procs: []gputest.Proc{{PID: 4104, Mem: 210 * gputest.MiB}},
		},
		gputest.MIG{Profile: "3g.40gb", MemTotal: 40192 * gputest.MiB, MemUsed: 17 * gputest.MiB},
	)
	n.SetProcs(1, true, gputest.Proc{PID: 4105, Mem: 4321 * gputest.MiB, SM: []uint32{77, 79}})
	return n
}

var kubeletAllocations = &v1.ListPodResourcesResponse{PodResources: []*v1.PodResources{
	{Name: "trainer", Namespace: "ml", Containers: []*v1.ContainerResources{
		{Name: "main", Devices: []*v1.ContainerDevices{{ResourceName: "nvidia.com/gpu", DeviceIds: []string{gputest.UUID(2)}}}},
	}},
	{Name: "notebook", Namespace: "ml", Containers: []*v1.ContainerResources{
		{Name: "a", Devices: []*v1.ContainerDevices{{ResourceName: "nvidia.com/gpu", DeviceIds: []string{gputest.UUID(0) + "::0"}}}},
		{Name: "b", Devices: []*v1.ContainerDevices{{ResourceName: "nvidia.com/gpu", DeviceIds: []string{gputest.UUID(0) + "::1"}}}},
	}},
	{Name: "mig", Namespace: "ml", Containers: []*v1.ContainerResources{
		{Name: "c", Devices: []*v1.ContainerDevices{{ResourceName: "nvidia.com/mig-1g.5gb", DeviceIds: []string{gputest.MIGUUID(1, 0)}}}},
	}},
}}

var fixtureNames = namer{
	ctrA1: {Namespace: "ml", Pod: "notebook", Container: "a"},
	ctrB2: {Namespace: "ml", Pod: "notebook", Container: "b"},
	ctrC3: {Namespace: "ml", Pod: "mig", Container: "c"},
	ctrD4: {Namespace: "ml", Pod: "trainer", Container: "main"},
}

// TestScrapeGPUGolden scrapes simulated nodes twice, 10s apart, and
// compares the GPU metrics of the second scrape with golden files.
func TestScrapeGPUGolden(t *testing.T) {
	for _, tc := range []struct {
		name   string
		node   func() *gputest.Node
		podres bool
		procs  bool
		xid    func(*gputest.Node)
	}{
		// A100 with MIG, a shared GPU, attribution by processes and by
		// pod-resources allocations.
		{name: "gpu-a100-mig", node: a100Node, podres: true, procs: true},
		// The same node with pod-resources only (no hostPID): no memory
		// per container, duty cycle only for the exclusively allocated GPU.
		{name: "gpu-a100-podresources-only", node: a100Node, podres: true},
		{name: "gpu-h100", node: func() *gputest.Node {
			n := gputest.H100(2)
			n.SetProcs(1, true, gputest.Proc{PID: 4104, Mem: 777 * gputest.MiB, SM: []uint32{63}})
			return n
		}, procs: true},
		// H100 with MIG and GPM: GPU 0 in MIG mode (c3 alone on its
		// 1g.10gb instance, the 3g.40gb idle), GPU 1 whole and d4's alone;
		// GPM activity per GPU and per MIG instance (no fp64 on MIG);
		// XID events injected between the scrapes.
		{name: "gpu-h100-mig-gpm", node: h100MIGNode, procs: true, xid: func(n *gputest.Node) {
			n.InjectXID(1, 13, 3)
			n.InjectXID(1, 48, 1)
			n.InjectXID(0, 31, 2)
		}},
		// A consumer GPU: fan, no ECC, remapped rows, MIG, GPM, NVLink or
		// memory temperature; GPU 0 shared by a1 and a host daemon (no
		// owner), GPU 1 idle.
		{name: "gpu-consumer", node: func() *gputest.Node {
			n := gputest.Consumer(2)
			n.SetProcs(0, true,
				gputest.Proc{PID: 4101, Mem: 900 * gputest.MiB, SM: []uint32{40}},
				gputest.Proc{PID: 4106, Mem: 90 * gputest.MiB, SM: []uint32{4}})
			return n
		}, procs: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := gpuRoot(t)
			opts := GPUOptions{ProcessAttribution: tc.procs, Names: fixtureNames}
			if tc.podres {
				serveKubelet(t, root, kubeletAllocations)
				opts.PodResourcesEndpoint = podResourcesSocket
			}
			node := tc.node()
			clk := &fakeClock{now: t0}
			s := newGPUScraper(t, root, clk, node, opts)
			_, err := s.Scrape(context.Background())
			require.NoError(t, err)
			if tc.xid != nil {
				tc.xid(node)
				require.Eventually(t, node.Events.Drained, 5*time.Second, time.Millisecond)
			}
			clk.now = t0.Add(10 * time.Second)
			got, err := s.Scrape(context.Background())
			require.NoError(t, err)
			// Devices on one resource (the node's, or one owner's) are one
			// resource entry: no resource, metric or point twice.
			require.NoError(t, pmetrictest.ValidateMetrics(got))
			requireGolden(t, filepath.Join("..", "..", "testdata", "golden", tc.name+".yaml"), onlyGPU(got))
		})
	}
}

// TestScrapeGPUSharedNotCopied checks the shared GPU's containers against
// each other and the device: each has its own memory and duty cycle.
func TestScrapeGPUSharedNotCopied(t *testing.T) {
	root := gpuRoot(t)
	s := newGPUScraper(t, root, &fakeClock{now: t0}, a100Node(), GPUOptions{ProcessAttribution: true})
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	mem := map[string]int64{}
	duty := map[string]float64{}
	var deviceUsed int64
	forEachPoint(m, func(res map[string]any, name string, attrs map[string]any, v float64, iv int64) {
		switch {
		case name == "container.accelerator.memory.used" && attrs["hw.id"] == gputest.UUID(0):
			mem[res["container.id"].(string)] = iv
		case name == "container.accelerator.duty_cycle" && attrs["hw.id"] == gputest.UUID(0):
			duty[res["container.id"].(string)] = v
		case name == "hw.gpu.memory.usage" && attrs["hw.id"] == gputest.UUID(0):
			deviceUsed = iv
		}
	})
	assert.Equal(t, map[string]int64{ctrA1: 576 * gputest.MiB, ctrB2: 256 * gputest.MiB}, mem)
	assert.InDelta(t, 0.22, duty[ctrA1], 1e-12)
	assert.InDelta(t, 0.09, duty[ctrB2], 1e-12)
	assert.Equal(t, int64(1000*gputest.MiB), deviceUsed)
}

func forEachPoint(m pmetric.Metrics, f func(res map[string]any, name string, attrs map[string]any, v float64, iv int64)) {
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		res := rm.Resource().Attributes().AsRaw()
		for j := 0; j < rm.ScopeMetrics().Len(); j++ {
			ms := rm.ScopeMetrics().At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				x := ms.At(k)
				dps := numberPoints(x)
				for l := 0; l < dps.Len(); l++ {
					dp := dps.At(l)
					f(res, x.Name(), dp.Attributes().AsRaw(), dp.DoubleValue(), dp.IntValue())
				}
			}
		}
	}
}

// TestScrapeGPUErrorOnOneDevice: a lost GPU and a failed call cost their
// own points, reported as partial errors naming the device; the other
// devices and all container metrics are intact.
func TestScrapeGPUErrorOnOneDevice(t *testing.T) {
	node := a100Node()
	node.GPUs[3].GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST }
	node.GPUs[2].GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
	root := gpuRoot(t)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "proc", "4107"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc", "4107", "cgroup"), []byte("not a cgroup line\n"), 0o600))
	node.SetProcs(3, true) // never read: the GPU is lost
	node.GPUs[0].GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{Pid: 4107, UsedGpuMemory: 1}}, nvml.SUCCESS
	}
	s := newGPUScraper(t, root, &fakeClock{now: t0}, node, GPUOptions{ProcessAttribution: true})
	m, err := s.Scrape(context.Background())
	require.Error(t, err)
	require.True(t, scrapererror.IsPartialScrapeError(err))
	for _, want := range []string{
		"gpu 3: uuid: ERROR_GPU_IS_LOST",
		"gpu " + gputest.UUID(2) + ": temperature: ERROR_UNKNOWN",
		"gpu process 4107:",
	} {
		assert.Contains(t, err.Error(), want)
	}
	requireGolden(t, filepath.Join("..", "..", "testdata", "golden", "gpu-a100-errors.yaml"), onlyGPU(m))
	// CPU and memory of every container are still there.
	n := 0
	forEachPoint(m, func(_ map[string]any, name string, _ map[string]any, _ float64, _ int64) {
		if name == "container.memory.usage" {
			n++
		}
	})
	assert.Equal(t, 4, n)
}

// TestScrapeGPUEnergyReset: the energy counter dropping (driver reload)
// starts a new series: the start time moves to the scrape that saw it.
func TestScrapeGPUEnergyReset(t *testing.T) {
	node := gputest.A100(1)
	energy := uint64(9_000_000)
	node.GPUs[0].GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return energy, nvml.SUCCESS }
	clk := &fakeClock{now: t0}
	s := newGPUScraper(t, gpuRoot(t), clk, node, GPUOptions{})
	start := func() (time.Time, float64) {
		m, err := s.Scrape(context.Background())
		require.NoError(t, err)
		var st time.Time
		var v float64
		for i := 0; i < m.ResourceMetrics().Len(); i++ {
			ms := m.ResourceMetrics().At(i).ScopeMetrics().At(0).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if ms.At(k).Name() == "hw.energy" {
					dp := ms.At(k).Sum().DataPoints().At(0)
					st, v = dp.StartTimestamp().AsTime(), dp.DoubleValue()
				}
			}
		}
		return st.UTC(), v
	}
	st, v := start()
	assert.Equal(t, t0, st)
	assert.Equal(t, 9000.0, v)
	clk.now, energy = t0.Add(10*time.Second), 9_500_000
	st, _ = start()
	assert.Equal(t, t0, st, "a growing counter keeps its start")
	clk.now, energy = t0.Add(20*time.Second), 1_000
	st, v = start()
	assert.Equal(t, t0.Add(20*time.Second), st, "after a driver reload the series restarts")
	assert.Equal(t, 1.0, v)
}

// TestScrapeGPUAbsentRealNVML runs the real go-nvml library on this
// GPU-less machine: one info log, no GPU metric, CPU and memory as usual.
func TestScrapeGPUAbsentRealNVML(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	set := newSettings()
	set.Logger = zap.New(core)
	s := New(set, Options{
		Host: testHost(copyFixture(t, "v2-systemd")), NodeName: "node-1", MetricsBuilderConfig: defaultMBC(),
		Now: (&fakeClock{now: t0}).Now,
		GPU: GPUOptions{
			Enabled: true, ProcessAttribution: true, PodResourcesEndpoint: podResourcesSocket,
			NVML: nvml.New(nvml.WithLibraryPath("/nonexistent/libnvidia-ml.so.1")),
		},
	})
	require.NoError(t, s.Start(context.Background(), componenttest.NewNopHost()))
	for range 2 {
		m, err := s.Scrape(context.Background())
		require.NoError(t, err)
		requireNoMetric(t, m, "hw.gpu.memory.usage")
		requireNoMetric(t, m, "container.accelerator.memory.total")
		assert.Positive(t, m.MetricCount())
		found := false
		forEachPoint(m, func(_ map[string]any, name string, _ map[string]any, _ float64, _ int64) {
			found = found || name == "container.memory.usage"
		})
		assert.True(t, found, "memory metrics unaffected")
	}
	require.NoError(t, s.Shutdown(context.Background()))
	require.NoError(t, s.Shutdown(context.Background()))
	assert.Empty(t, logs.FilterMessageSnippet("pod-resources").All(), "nothing else GPU-related is logged")
	got := logs.FilterMessageSnippet("NVIDIA GPU").All()
	require.Len(t, got, 1, "one log line for the absence")
	assert.Equal(t, zapcore.InfoLevel, got[0].Level)
	assert.Contains(t, got[0].ContextMap()["error"], "libnvidia-ml.so.1 not found")
}

// TestScrapeGPUDisabled: gpu.enabled false never initializes NVML, even
// when a working one is there.
func TestScrapeGPUDisabled(t *testing.T) {
	node := gputest.A100(1)
	initCalls := 0
	node.Server.InitFunc = func() nvml.Return { initCalls++; return nvml.SUCCESS }
	s := New(newSettings(), Options{
		Host: testHost(gpuRoot(t)), NodeName: "node-1", MetricsBuilderConfig: defaultMBC(), Now: (&fakeClock{now: t0}).Now,
		GPU: GPUOptions{Enabled: false, ProcessAttribution: true, NVML: node.Server},
	})
	require.NoError(t, s.Start(context.Background(), componenttest.NewNopHost()))
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	require.NoError(t, s.Shutdown(context.Background()))
	requireNoMetric(t, m, "hw.gpu.memory.usage")
	requireNoMetric(t, m, "container.accelerator.memory.total")
	assert.Equal(t, 0, initCalls)
}

// TestScrapeGPUDeadPodResourcesSocket: a kubelet socket that is not there
// costs the allocations only, as a partial error naming the socket.
func TestScrapeGPUDeadPodResourcesSocket(t *testing.T) {
	root := gpuRoot(t)
	s := newGPUScraper(t, root, &fakeClock{now: t0}, a100Node(),
		GPUOptions{ProcessAttribution: true, PodResourcesEndpoint: podResourcesSocket, Names: fixtureNames})
	start := time.Now()
	m, err := s.Scrape(context.Background())
	require.Error(t, err)
	assert.Less(t, time.Since(start), podResourcesTimeout, "a dead socket fails fast")
	require.True(t, scrapererror.IsPartialScrapeError(err))
	assert.Contains(t, err.Error(), "pod-resources "+filepath.Join(root, podResourcesSocket)+": List")
	devices, used := map[string]bool{}, map[string]int64{}
	d4Duty := false
	forEachPoint(m, func(res map[string]any, name string, attrs map[string]any, _ float64, iv int64) {
		switch name {
		case "hw.gpu.memory.limit":
			devices[attrs["hw.id"].(string)] = true
		case "container.accelerator.memory.used":
			used[res["container.id"].(string)] = iv
		case "container.accelerator.duty_cycle":
			d4Duty = d4Duty || res["container.id"] == ctrD4
		}
	})
	assert.Len(t, devices, 6, "4 GPUs and 2 MIG instances, unaffected")
	assert.Equal(t, map[string]int64{ctrA1: 576 * gputest.MiB, ctrB2: 256 * gputest.MiB, ctrC3: 200 * gputest.MiB, ctrD4: 600 * gputest.MiB}, used,
		"process attribution unaffected")
	assert.False(t, d4Duty, "without allocations, d4's exclusive duty cycle is unknown: no point")
}

// TestScrapeGPULostMidRun: GPU 1 of three falls off the bus between the
// first and the second scrape. The second scrape reports it once (a
// partial error naming its UUID), without any of its points; the other
// GPUs keep theirs. The third scrape has no error and no point of it.
func TestScrapeGPULostMidRun(t *testing.T) {
	node := gputest.A100(3)
	clk := &fakeClock{now: t0}
	s := newGPUScraper(t, gpuRoot(t), clk, node, GPUOptions{})
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	require.Contains(t, gpuIDs(m), gputest.UUID(1))

	node.Lose(1)
	clk.now = t0.Add(10 * time.Second)
	m, err = s.Scrape(context.Background())
	require.Error(t, err)
	require.True(t, scrapererror.IsPartialScrapeError(err))
	assert.Equal(t, 1, strings.Count(err.Error(), "ERROR_GPU_IS_LOST"), "reported once: %v", err)
	assert.Contains(t, err.Error(), "gpu "+gputest.UUID(1)+":")
	assert.Equal(t, []string{gputest.UUID(0), gputest.UUID(2)}, gpuIDs(m))
	requireGolden(t, filepath.Join("..", "..", "testdata", "golden", "gpu-lost.yaml"), onlyGPU(m))

	clk.now = t0.Add(20 * time.Second)
	m, err = s.Scrape(context.Background())
	require.NoError(t, err, "the lost GPU is not reported again")
	assert.Equal(t, []string{gputest.UUID(0), gputest.UUID(2)}, gpuIDs(m))
}

// gpuIDs lists the devices the device metrics (hw.*) have points of: their
// hw.id, sorted.
func gpuIDs(m pmetric.Metrics) []string {
	seen := map[string]bool{}
	var ids []string
	forEachPoint(m, func(_ map[string]any, name string, attrs map[string]any, _ float64, _ int64) {
		if id, ok := attrs["hw.id"].(string); ok && strings.HasPrefix(name, "hw.") && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	})
	sort.Strings(ids)
	return ids
}

// TestScrapeGPUXIDHangingWait: an event wait that never returns (a driver
// that hangs) does not hold up a scrape, and the scrape has no XID point.
func TestScrapeGPUXIDHangingWait(t *testing.T) {
	node := gputest.H100(1)
	node.Events.Hang()
	node.InjectXID(0, 79, 1) // never handed out: the wait hangs first
	s := newGPUScraper(t, gpuRoot(t), &fakeClock{now: t0}, node, GPUOptions{})
	t.Cleanup(node.Events.Release) // runs before Shutdown's cleanup
	require.Eventually(t, func() bool { return node.Events.Waits() > 0 }, 5*time.Second, time.Millisecond, "the watcher is in its wait")
	for i := 0; i < 3; i++ {
		start := time.Now()
		m, err := s.Scrape(context.Background())
		require.NoError(t, err)
		assert.Less(t, time.Since(start), 2*time.Second)
		requireNoMetric(t, m, "hw.gpu.xid.errors")
		assert.Equal(t, []string{gputest.UUID(0)}, gpuIDs(m))
	}
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine && cgo

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	nodestate "github.com/containerstats/containerstatsreceiver/internal/node"
	"github.com/containerstats/containerstatsreceiver/internal/testing/gputest"
	"github.com/containerstats/containerstatsreceiver/receiver/scrape"
)

// gpuMockIdentity names the GPU fixture's containers (the v2-systemd
// fixture's a1, b2, c3, d4, whose processes /proc/<pid>/cgroup of
// testdata/fixtures/gpu places) as the runtime would.
type gpuMockIdentity struct{}

var gpuMockContainers = map[string]identity.Container{
	strings.Repeat("a1", 32): {ContainerName: "a", PodName: "notebook", Namespace: gpuMockNamespace},
	strings.Repeat("b2", 32): {ContainerName: "b", PodName: "notebook", Namespace: gpuMockNamespace},
	strings.Repeat("c3", 32): {ContainerName: "c", PodName: "mig", Namespace: gpuMockNamespace},
	strings.Repeat("d4", 32): {ContainerName: "main", PodName: "trainer", Namespace: gpuMockNamespace},
}

func (gpuMockIdentity) Prepare(context.Context, []string) {}
func (gpuMockIdentity) Container(id, podUID string) (identity.Container, bool) {
	c, ok := gpuMockContainers[id]
	c.ID, c.PodUID = id, podUID
	return c, ok
}
func (gpuMockIdentity) Pod(string) (identity.Pod, bool) { return identity.Pod{}, false }
func (gpuMockIdentity) IsSandbox(string) bool           { return false }
func (gpuMockIdentity) Pending(string) bool             { return false }
func (gpuMockIdentity) Instances() []identity.Container { return nil }
func (gpuMockIdentity) Start(context.Context) error     { return nil }
func (gpuMockIdentity) Shutdown(context.Context) error  { return nil }

// pushGPUMocks scrapes two simulated GPU nodes (go-nvml mocks,
// internal/testing/gputest) with our scraper: gpu-mock-a100, four A100s
// (GPU 0 shared by notebook/a and notebook/b, GPU 1 in MIG mode with
// mig/c on an instance, GPU 2 trainer/main's alone, GPU 3 idle; NVLink,
// ECC, remapped rows) and gpu-mock-h100, two H100s (GPM activity, MIG,
// XID events injected); 19 scrapes each, 10 s apart on an injected clock
// ending now. Their GPU metrics (hw.*, container.accelerator.*) go as one
// OTLP request through the test's gateway collector, whose
// prometheus_remote_write exporter names them as it names the DaemonSet's,
// into the cluster's Prometheus. Returns the node names once Prometheus
// has them.
func (k *cluster) pushGPUMocks(t *testing.T) []string {
	t.Helper()
	a100 := gputest.A100(4)
	a100.SetProcs(0, true,
		gputest.Proc{PID: 4101, Mem: 512 * gputest.MiB, SM: []uint32{16, 18}},
		gputest.Proc{PID: 4102, Mem: 256 * gputest.MiB, SM: []uint32{9}},
		gputest.Proc{PID: 4103, Mem: 64 * gputest.MiB, SM: []uint32{5}},
	)
	a100.EnableMIG(1,
		gputest.MIG{
			Profile: "1g.5gb", MemTotal: 4864 * gputest.MiB, MemUsed: 300 * gputest.MiB,
			Procs: []gputest.Proc{{PID: 4104, Mem: 200 * gputest.MiB}},
		},
		gputest.MIG{Profile: "3g.20gb", MemTotal: 19968 * gputest.MiB, MemUsed: 13 * gputest.MiB},
	)
	a100.SetProcs(2, true, gputest.Proc{PID: 4105, Mem: 600 * gputest.MiB, SM: []uint32{55}})
	h100 := gputest.H100(2)
	h100.EnableMIG(0,
		gputest.MIG{
			Profile: "1g.10gb", MemTotal: 9984 * gputest.MiB, MemUsed: 310 * gputest.MiB,
			Procs: []gputest.Proc{{PID: 4104, Mem: 210 * gputest.MiB}},
		},
	)
	h100.SetProcs(1, true, gputest.Proc{PID: 4105, Mem: 4321 * gputest.MiB, SM: []uint32{77, 79}})

	all := pmetric.NewMetrics()
	const n, step = 19, 10 * time.Second
	first := time.Now().Add(-time.Duration(n) * step)
	for i, node := range []*gputest.Node{a100, h100} {
		name := gpuMockNodes[i]
		root := gpuFixtureRoot(t)
		now := first
		s := scrape.New(receivertest.NewNopSettings(metadata.Type), scrape.Options{
			Host: nodestate.NewHost(nodestate.HostConfig{Root: root}, nil), NodeName: name, MetricsBuilderConfig: metadata.NewDefaultMetricsBuilderConfig(),
			Now:      func() time.Time { return now },
			Identity: gpuMockIdentity{},
			GPU:      scrape.GPUOptions{Enabled: true, ProcessAttribution: true, NVML: node.Server},
		})
		require.NoError(t, s.Start(context.Background(), componenttest.NewNopHost()))
		for j := 0; j < n; j++ {
			now = first.Add(time.Duration(j) * step)
			if j == 1 {
				node.InjectXID(1, 13, 3)
				node.InjectXID(0, 79, 1)
				require.Eventually(t, node.Events.Drained, 5*time.Second, time.Millisecond)
			}
			m, err := s.Scrape(context.Background())
			require.NoError(t, err, "%s scrape %d", name, j)
			gpuOnly(m).ResourceMetrics().MoveAndAppendTo(all.ResourceMetrics())
		}
		require.NoError(t, s.Shutdown(context.Background()))
	}
	require.Positive(t, all.DataPointCount())

	require.NoError(t, k.exportToGateway(t, k.gatewayCreds(t), all), "OTLP export of the GPU mocks' metrics to the gateway %s", k.gateway)
	eventually(t, time.Minute, "the GPU mocks' metrics in Prometheus", func() error {
		for _, nd := range gpuMockNodes {
			v, err := k.prom.query(fmt.Sprintf(`count(hw_gpu_memory_limit_bytes{k8s_node_name=%q})`, nd))
			if err != nil {
				return err
			}
			if len(v) == 0 {
				return fmt.Errorf("no hw_gpu_memory_limit_bytes of %s yet", nd)
			}
		}
		return nil
	})
	t.Logf("GPU mocks: %d points of %s sent through the gateway %s", all.DataPointCount(), strings.Join(gpuMockNodes, ", "), k.gateway)
	return gpuMockNodes
}

// gpuFixtureRoot is the v2-systemd fixture with the GPU fixture's
// /proc/<pid> files laid over it (as receiver/scrape's GPU tests use).
func gpuFixtureRoot(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	fx := filepath.Join(repoRoot(t), "testdata", "fixtures")
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join(fx, "v2-systemd"))))
	require.NoError(t, os.CopyFS(filepath.Join(dir, "proc"), os.DirFS(filepath.Join(fx, "gpu", "proc"))))
	return dir
}

// gpuOnly keeps the GPU metrics (hw.*, container.accelerator.*) of m.
func gpuOnly(m pmetric.Metrics) pmetric.Metrics {
	m.ResourceMetrics().RemoveIf(func(rm pmetric.ResourceMetrics) bool {
		rm.ScopeMetrics().RemoveIf(func(sm pmetric.ScopeMetrics) bool {
			sm.Metrics().RemoveIf(func(x pmetric.Metric) bool {
				return !strings.HasPrefix(x.Name(), "hw.") && !strings.HasPrefix(x.Name(), "container.accelerator.")
			})
			return sm.Metrics().Len() == 0
		})
		return rm.ScopeMetrics().Len() == 0
	})
	return m
}

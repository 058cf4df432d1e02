//go:build cgo

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerstatsreceiver

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"google.golang.org/grpc"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/testing/gputest"
)

type fakeKubelet struct {
	v1.UnimplementedPodResourcesListerServer
	resp *v1.ListPodResourcesResponse
}

func (f *fakeKubelet) List(context.Context, *v1.ListPodResourcesRequest) (*v1.ListPodResourcesResponse, error) {
	return f.resp, nil
}

const (
	factoryD4    = "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4"
	factoryD4Pod = "3c4d5e6f-0000-4000-8000-00000000000c"
	kubeletSock  = "/var/lib/kubelet/pod-resources/kubelet.sock"
)

// gpuFactoryRoot is the v2-systemd fixture under a short temp path (unix
// socket paths are limited to 108 bytes), with the kubelet's log
// directories naming d4 ml/trainer/main (no runtime), /proc of the GPU
// fixture when procs, and a fake pod-resources server on the kubelet's
// socket that allocates GPU 2 to ml/trainer/main.
func gpuFactoryRoot(t *testing.T, procs bool) string {
	t.Helper()
	root, err := os.MkdirTemp("", "gpuf")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(root) })
	require.NoError(t, os.CopyFS(root, os.DirFS("testdata/fixtures/v2-systemd")))
	if procs {
		require.NoError(t, os.CopyFS(filepath.Join(root, "proc"), os.DirFS("testdata/fixtures/gpu/proc")))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "var/log/pods/ml_trainer_"+factoryD4Pod+"/main"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "var/log/containers"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "var/log/containers/trainer_ml_main-"+factoryD4+".log"), nil, 0o600))

	sock := filepath.Join(root, kubeletSock)
	require.NoError(t, os.MkdirAll(filepath.Dir(sock), 0o755))
	lis, err := net.Listen("unix", sock)
	require.NoError(t, err)
	g := grpc.NewServer()
	v1.RegisterPodResourcesListerServer(g, &fakeKubelet{resp: &v1.ListPodResourcesResponse{PodResources: []*v1.PodResources{
		{Name: "trainer", Namespace: "ml", Containers: []*v1.ContainerResources{
			{Name: "main", Devices: []*v1.ContainerDevices{{ResourceName: "nvidia.com/gpu", DeviceIds: []string{gputest.UUID(2)}}}},
		}},
	}}})
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	return root
}

// gpuFactoryConfig is a config for root with pod_resources on and no
// runtime.
func gpuFactoryConfig(t *testing.T, f receiver.Factory, root string, procs bool) *Config {
	t.Helper()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.RootPath = root
	cfg.NodeName = "node-1"
	cfg.Runtime.CRIEnabled, cfg.Runtime.ContainerdEnabled = false, false
	cfg.GPU.ProcessAttribution = procs
	cfg.GPU.PodResources.Enabled = true
	cfg.GPU.PodResources.Endpoint = kubeletSock
	return cfg
}

// TestFactoryGPUPodResources: gpu.pod_resources, configured through the
// factory, joins the kubelet's allocations (a fake pod-resources server on
// a unix socket under root_path) to containers by the names the receiver's
// identity gives them (here the kubelet's log directories: no runtime). GPU
// 2 is allocated to container d4 (ml/trainer/main) and process attribution
// is off, so d4's accelerator points can only come from the allocation.
func TestFactoryGPUPodResources(t *testing.T) {
	root := gpuFactoryRoot(t, false)
	node := gputest.A100(4)
	node.SetProcs(2, false, gputest.Proc{PID: 4105, Mem: 600 * gputest.MiB})

	f := newFactory(newNodes(), node.Server)
	cfg := gpuFactoryConfig(t, f, root, false)
	cfg.CollectionInterval = 50 * time.Millisecond
	require.NoError(t, cfg.Validate())

	sink := new(consumertest.MetricsSink)
	r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })

	var got map[string]string // metric -> hw.id on d4's resource
	require.Eventually(t, func() bool {
		for _, m := range sink.AllMetrics() {
			if g := acceleratorPoints(m, factoryD4); len(g) > 0 {
				got = g
				return true
			}
		}
		return false
	}, 10*time.Second, 20*time.Millisecond, "d4 never got accelerator points from its allocation")
	assert.Equal(t, map[string]string{
		"container.accelerator.duty_cycle":   gputest.UUID(2),
		"container.accelerator.memory.total": gputest.UUID(2),
	}, got, "the exclusively allocated GPU: duty cycle and total; no per-process memory without process attribution")
}

// acceleratorPoints returns container.accelerator.* metric names -> the
// accelerator's ID on the resource of container id.
func acceleratorPoints(m pmetric.Metrics, id string) map[string]string {
	out := map[string]string{}
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		if v, ok := rm.Resource().Attributes().Get("container.id"); !ok || v.Str() != id {
			continue
		}
		ms := rm.ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			mt := ms.At(j)
			if mt.Type() != pmetric.MetricTypeGauge || len(mt.Name()) < 22 || mt.Name()[:22] != "container.accelerator." {
				continue
			}
			dps := mt.Gauge().DataPoints()
			for k := 0; k < dps.Len(); k++ {
				if a, ok := dps.At(k).Attributes().Get("hw.id"); ok {
					out[mt.Name()] = a.Str()
				} else {
					out[mt.Name()] = "?"
				}
			}
		}
	}
	return out
}

// TestFactoryGPUOwnerWithAttributionAndPodResources is the production
// path with gpu.process_attribution and gpu.pod_resources both on, set up
// by the factory alone (no names injected into the scraper): GPU 2 is used
// by d4's process (PID 4105) and allocated by the kubelet to ml/trainer/main,
// which is d4 (named by the kubelet's log directories: no runtime). Both
// signals name one container, so GPU 2's device resource carries d4's
// identity; GPU 0, used by a1 alone and allocated to nobody, carries a1's
// container ID. The GPU metrics of the first scrape match
// testdata/golden/gpu-factory-attribution.yaml (timestamps aside: the
// factory's clock is the real one); UPDATE_GOLDEN=1 rewrites it.
func TestFactoryGPUOwnerWithAttributionAndPodResources(t *testing.T) {
	const a1 = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
	root := gpuFactoryRoot(t, true)
	node := gputest.A100(4)
	node.SetProcs(0, true, gputest.Proc{PID: 4101, Mem: 512 * gputest.MiB, SM: []uint32{16, 18}})
	node.SetProcs(2, false, gputest.Proc{PID: 4105, Mem: 600 * gputest.MiB})

	f := newFactory(newNodes(), node.Server)
	cfg := gpuFactoryConfig(t, f, root, true)
	cfg.InitialDelay = 0
	cfg.CollectionInterval = time.Hour // one scrape: the one at start
	require.NoError(t, cfg.Validate())

	sink := new(consumertest.MetricsSink)
	r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	require.Eventually(t, func() bool { return len(sink.AllMetrics()) > 0 }, 10*time.Second, 10*time.Millisecond, "no scrape")
	got := gpuMetrics(sink.AllMetrics()[0])

	owner := deviceOwners(got)
	assert.Equal(t, map[string]string{
		"container.id": factoryD4, "k8s.namespace.name": "ml", "k8s.pod.name": "trainer", "k8s.container.name": "main",
	}, owner[gputest.UUID(2)], "GPU 2: used by d4 and allocated to ml/trainer/main, which is d4")
	assert.Equal(t, map[string]string{"container.id": a1}, owner[gputest.UUID(0)], "GPU 0: used by a1 alone")
	assert.Empty(t, owner[gputest.UUID(1)], "GPU 1: idle and unallocated")

	path := filepath.Join("testdata", "golden", "gpu-factory-attribution.yaml")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		require.NoError(t, golden.WriteMetricsToFile(path, got))
	}
	want, err := golden.ReadMetrics(path)
	require.NoError(t, err)
	require.NoError(t, pmetrictest.CompareMetrics(want, got,
		pmetrictest.IgnoreTimestamp(), pmetrictest.IgnoreStartTimestamp(),
		pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder()))
}

// gpuMetrics keeps the hw.* and container.accelerator.* metrics of m, and
// the resources that have some.
func gpuMetrics(m pmetric.Metrics) pmetric.Metrics {
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

// deviceOwners returns, per device (the hw.id of its hw.gpu.memory.limit
// point), the container and Kubernetes attributes of the resource it is
// on.
func deviceOwners(m pmetric.Metrics) map[string]map[string]string {
	out := map[string]map[string]string{}
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		attrs := rm.Resource().Attributes()
		o := map[string]string{}
		for _, k := range []string{"container.id", "k8s.namespace.name", "k8s.pod.name", "k8s.container.name"} {
			if v, ok := attrs.Get(k); ok {
				o[k] = v.Str()
			}
		}
		ms := rm.ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			if mt := ms.At(j); mt.Name() == "hw.gpu.memory.limit" {
				dps := mt.Sum().DataPoints()
				for k := 0; k < dps.Len(); k++ {
					if id, ok := dps.At(k).Attributes().Get("hw.id"); ok {
						out[id.Str()] = o
					}
				}
			}
		}
	}
	return out
}

//go:build cgo

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerstatsreceiver

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"google.golang.org/grpc"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/containerstats/containerstatsreceiver/internal/gpu/gputest"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

type fakeKubelet struct {
	v1.UnimplementedPodResourcesListerServer
	resp *v1.ListPodResourcesResponse
}

func (f *fakeKubelet) List(context.Context, *v1.ListPodResourcesRequest) (*v1.ListPodResourcesResponse, error) {
	return f.resp, nil
}

// TestFactoryGPUPodResources: gpu.pod_resources, configured through the
// factory, joins the kubelet's allocations (a fake pod-resources server on
// a unix socket under root_path) to containers by the names the receiver's
// identity gives them (here the kubelet's log directories: no runtime). GPU
// 2 is allocated to container d4 (ml/trainer/main) and process attribution
// is off, so d4's accelerator points can only come from the allocation.
func TestFactoryGPUPodResources(t *testing.T) {
	const (
		d4     = "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4"
		d4Pod  = "3c4d5e6f-0000-4000-8000-00000000000c"
		socket = "/var/lib/kubelet/pod-resources/kubelet.sock"
	)
	root, err := os.MkdirTemp("", "gpuf") // short: unix socket paths are limited to 108 bytes
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(root) })
	require.NoError(t, os.CopyFS(root, os.DirFS("testdata/fixtures/v2-systemd")))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "var/log/pods/ml_trainer_"+d4Pod+"/main"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "var/log/containers"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "var/log/containers/trainer_ml_main-"+d4+".log"), nil, 0o644))

	sock := filepath.Join(root, socket)
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

	node := gputest.A100(4)
	node.SetProcs(2, false, gputest.Proc{PID: 4105, Mem: 600 * gputest.MiB})

	f := newFactory(newSharedIdentities(), node.Server)
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.RootPath = root
	cfg.NodeName = "node-1"
	cfg.CollectionInterval = 50 * time.Millisecond
	cfg.Runtime.CRIEnabled, cfg.Runtime.ContainerdEnabled = false, false
	cfg.GPU.ProcessAttribution = false
	cfg.GPU.PodResources.Enabled = true
	cfg.GPU.PodResources.Endpoint = socket
	require.NoError(t, cfg.Validate())

	sink := new(consumertest.MetricsSink)
	r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })

	var got map[string]string // metric -> hw.id on d4's resource
	require.Eventually(t, func() bool {
		for _, m := range sink.AllMetrics() {
			if g := acceleratorPoints(m, d4); len(g) > 0 {
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

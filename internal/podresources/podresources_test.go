// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package podresources

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// FakeServer is an in-process pod-resources server on a real unix socket.
type fakeServer struct {
	v1.UnimplementedPodResourcesListerServer
	resp  *v1.ListPodResourcesResponse
	calls atomic.Int32
}

func (f *fakeServer) List(context.Context, *v1.ListPodResourcesRequest) (*v1.ListPodResourcesResponse, error) {
	f.calls.Add(1)
	return f.resp, nil
}

func serve(t *testing.T, srv v1.PodResourcesListerServer) string {
	t.Helper()
	// Unix socket paths are limited to ~108 bytes; t.TempDir can be longer.
	dir, err := os.MkdirTemp("", "podres")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "kubelet.sock")
	lis, err := net.Listen("unix", sock)
	require.NoError(t, err)
	g := grpc.NewServer()
	v1.RegisterPodResourcesListerServer(g, srv)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	return sock
}

func TestListAgainstFakeServer(t *testing.T) {
	fake := &fakeServer{resp: &v1.ListPodResourcesResponse{PodResources: []*v1.PodResources{
		{Name: "trainer", Namespace: "ml", Containers: []*v1.ContainerResources{
			{Name: "main", Devices: []*v1.ContainerDevices{
				{ResourceName: "nvidia.com/gpu", DeviceIds: []string{"GPU-b", "GPU-a"}},
				{ResourceName: "nvidia.com/mig-1g.5gb", DeviceIds: []string{"MIG-c", "GPU-a"}},
			}},
			{Name: "sidecar"}, // no devices: left out
		}},
		{Name: "infer", Namespace: "apps", Containers: []*v1.ContainerResources{
			{Name: "srv", Devices: []*v1.ContainerDevices{{ResourceName: "nvidia.com/gpu", DeviceIds: []string{"GPU-d::1"}}}},
		}},
	}}}
	c, err := New(serve(t, fake))
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()); require.NoError(t, c.Close()) }()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := c.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, []Allocation{
		{Namespace: "apps", Pod: "infer", Container: "srv", DeviceIDs: []string{"GPU-d::1"}},
		{Namespace: "ml", Pod: "trainer", Container: "main", DeviceIDs: []string{"GPU-a", "GPU-b", "MIG-c"}},
	}, got)
	assert.Equal(t, int32(1), fake.calls.Load())
}

func TestListDeadSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "podres")
	require.NoError(t, err)
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "missing.sock")
	c, err := New(sock)
	require.NoError(t, err, "nothing is dialed before List")
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = c.List(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), sock, "the error names the socket")
}

func TestNewEmptyPath(t *testing.T) {
	_, err := New("")
	require.Error(t, err)
	var c *Client
	require.NoError(t, c.Close())
}

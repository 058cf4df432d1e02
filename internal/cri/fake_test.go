// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cri

import (
	"context"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fakeCRI is an in-process CRI runtime service served on a real unix
// socket, so tests exercise the gRPC wire.
type fakeCRI struct {
	runtimeapi.UnimplementedRuntimeServiceServer

	mu         sync.Mutex
	version    string
	name       string
	sandboxes  []*runtimeapi.PodSandbox
	containers []*runtimeapi.Container
	statusImg  map[string]string // container ID -> ContainerStatus image name
	// exits: container ID -> the ContainerStatus of an exited container
	// (taking precedence over statusImg)
	exits map[string]*runtimeapi.ContainerStatus
	err   error
	delay time.Duration

	calls  map[string]*atomic.Int64
	socket string
	srv    *grpc.Server
}

func startFake(t *testing.T) *fakeCRI {
	t.Helper()
	f := &fakeCRI{version: "1.7.20", name: "containerd", statusImg: map[string]string{}, exits: map[string]*runtimeapi.ContainerStatus{}, calls: map[string]*atomic.Int64{}}
	for _, m := range []string{"Version", "ListPodSandbox", "ListContainers", "ContainerStatus"} {
		f.calls[m] = &atomic.Int64{}
	}
	f.socket = filepath.Join(t.TempDir(), "cri.sock")
	l, err := net.Listen("unix", f.socket)
	require.NoError(t, err)
	f.srv = grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(f.srv, f)
	runtimeapi.RegisterImageServiceServer(f.srv, fakeImages{})
	go func() { _ = f.srv.Serve(l) }()
	t.Cleanup(f.srv.Stop)
	return f
}

func (f *fakeCRI) count(m string) int64 { return f.calls[m].Load() }

func (f *fakeCRI) enter(ctx context.Context, m string) error {
	f.calls[m].Add(1)
	f.mu.Lock()
	err, delay := f.err, f.delay
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return err
}

func (f *fakeCRI) set(fn func(f *fakeCRI)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeCRI) Version(ctx context.Context, _ *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	if err := f.enter(ctx, "Version"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: f.name, RuntimeVersion: f.version, RuntimeApiVersion: "v1"}, nil
}

func (f *fakeCRI) ListPodSandbox(ctx context.Context, _ *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	if err := f.enter(ctx, "ListPodSandbox"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return &runtimeapi.ListPodSandboxResponse{Items: f.sandboxes}, nil
}

func (f *fakeCRI) ListContainers(ctx context.Context, _ *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	if err := f.enter(ctx, "ListContainers"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return &runtimeapi.ListContainersResponse{Containers: f.containers}, nil
}

func (f *fakeCRI) ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	if err := f.enter(ctx, "ContainerStatus"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if st, ok := f.exits[req.GetContainerId()]; ok {
		return &runtimeapi.ContainerStatusResponse{Status: st}, nil
	}
	img, ok := f.statusImg[req.GetContainerId()]
	if !ok {
		return nil, status.Error(codes.NotFound, "no such container")
	}
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: req.GetContainerId(), Image: &runtimeapi.ImageSpec{Image: img}}}, nil
}

// Mutating RPCs must never be called by the receiver: the embedded
// Unimplemented server answers them with codes.Unimplemented, and the
// tests check no such call was counted.

// ListContainerStats answers one container's writable layer (stats.go).
func (f *fakeCRI) ListContainerStats(context.Context, *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error) {
	return &runtimeapi.ListContainerStatsResponse{Stats: []*runtimeapi.ContainerStats{
		{Attributes: &runtimeapi.ContainerAttributes{Id: "w1"}, WritableLayer: fsUsage(1700000000000000004, "/var/lib/snap", u64(7340033), u64(29))},
	}}, nil
}

// fakeImages is the image service: ImageFsInfo only (stats.go).
type fakeImages struct {
	runtimeapi.UnimplementedImageServiceServer
}

func (fakeImages) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{fsUsage(1700000000000000005, "/var/lib/img", u64(99999937), u64(3001))}}, nil
}

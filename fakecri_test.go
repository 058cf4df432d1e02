// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package containerstatsreceiver

import (
	"context"
	"net"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
)

// recordingCRI is a CRI runtime service on a real unix socket that records
// every RPC that reaches it, whatever the service: methods of the runtime
// service (implemented or not) through interceptors, and any other service
// (image service, containerd API) through the unknown-service handler,
// which answers Unimplemented.
type recordingCRI struct {
	runtimeapi.UnimplementedRuntimeServiceServer

	mu         sync.Mutex
	calls      map[string]int // full gRPC method name -> count
	mode       criMode
	sandboxes  []*runtimeapi.PodSandbox
	containers []*runtimeapi.Container
	statusImg  map[string]string
	release    chan struct{} // closed on Stop: hanging calls return

	srv *grpc.Server
}

type criMode int

const (
	criNormal        criMode = iota
	criHang                  // every call blocks until its deadline
	criUnimplemented         // every call answers codes.Unimplemented
)

// serveRecordingCRI serves a recording fake CRI on socket (which must not
// exist yet).
func serveRecordingCRI(t *testing.T, socket string) *recordingCRI {
	t.Helper()
	f := &recordingCRI{calls: map[string]int{}, statusImg: map[string]string{}, release: make(chan struct{})}
	l, err := net.Listen("unix", socket)
	require.NoError(t, err)
	f.srv = grpc.NewServer(
		grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			f.record(info.FullMethod)
			return h(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			f.record(info.FullMethod)
			return h(srv, ss)
		}),
		grpc.UnknownServiceHandler(func(_ any, ss grpc.ServerStream) error {
			m, _ := grpc.MethodFromServerStream(ss)
			f.record(m)
			return status.Errorf(codes.Unimplemented, "fake CRI: %s not served", m)
		}),
	)
	runtimeapi.RegisterRuntimeServiceServer(f.srv, f)
	go func() { _ = f.srv.Serve(l) }()
	t.Cleanup(f.Stop)
	return f
}

// Stop stops serving (hanging calls are released first); idempotent.
func (f *recordingCRI) Stop() {
	f.mu.Lock()
	select {
	case <-f.release:
	default:
		close(f.release)
	}
	f.mu.Unlock()
	f.srv.Stop()
}

func (f *recordingCRI) record(method string) {
	f.mu.Lock()
	f.calls[method]++
	f.mu.Unlock()
}

// Methods returns the sorted set of methods called so far.
func (f *recordingCRI) Methods() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.calls))
	for m := range f.calls {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Count returns how often method (short name, runtime service) was called.
func (f *recordingCRI) Count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls["/runtime.v1.RuntimeService/"+method]
}

func (f *recordingCRI) setMode(m criMode) {
	f.mu.Lock()
	f.mode = m
	f.mu.Unlock()
}

// addPod lists a ready sandbox for the cgroup container's pod and the
// container itself, running, with its image given by ID only (so the
// resolver asks ContainerStatus for the name).
func (f *recordingCRI) addPod(c *cgrouptest.Container, podName, ns, ctrName string, attempt uint32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sbx := "sbx-" + c.ID[:20]
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()
	f.sandboxes = append(f.sandboxes, &runtimeapi.PodSandbox{
		Id: sbx, Metadata: &runtimeapi.PodSandboxMetadata{Name: podName, Uid: c.PodUID, Namespace: ns},
		State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: created, Labels: map[string]string{"app": podName},
	})
	f.containers = append(f.containers, &runtimeapi.Container{
		Id: c.ID, PodSandboxId: sbx, Metadata: &runtimeapi.ContainerMetadata{Name: ctrName, Attempt: attempt},
		Image: &runtimeapi.ImageSpec{Image: "sha256:" + c.ID}, ImageRef: "sha256:" + c.ID,
		State: runtimeapi.ContainerState_CONTAINER_RUNNING, CreatedAt: created + int64(time.Second),
	})
	f.statusImg[c.ID] = "registry.example/" + ctrName + ":v" + podName
}

// enter applies the mode to a call.
func (f *recordingCRI) enter(ctx context.Context) error {
	f.mu.Lock()
	mode, release := f.mode, f.release
	f.mu.Unlock()
	switch mode {
	case criHang:
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-release:
			return status.Error(codes.Unavailable, "fake CRI stopped")
		}
	case criUnimplemented:
		return status.Error(codes.Unimplemented, "fake CRI: unimplemented mode")
	}
	return nil
}

func (f *recordingCRI) Version(ctx context.Context, _ *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	if err := f.enter(ctx); err != nil {
		return nil, err
	}
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: "containerd", RuntimeVersion: "dev", RuntimeApiVersion: "v1"}, nil
}

func (f *recordingCRI) ListPodSandbox(ctx context.Context, _ *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	if err := f.enter(ctx); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return &runtimeapi.ListPodSandboxResponse{Items: f.sandboxes}, nil
}

func (f *recordingCRI) ListContainers(ctx context.Context, _ *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	if err := f.enter(ctx); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return &runtimeapi.ListContainersResponse{Containers: f.containers}, nil
}

func (f *recordingCRI) ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	if err := f.enter(ctx); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	img, ok := f.statusImg[req.GetContainerId()]
	if !ok {
		return nil, status.Error(codes.NotFound, "no such container")
	}
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: req.GetContainerId(), Image: &runtimeapi.ImageSpec{Image: img}}}, nil
}

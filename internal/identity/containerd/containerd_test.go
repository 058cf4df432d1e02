// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerd

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	containersapi "github.com/containerd/containerd/api/services/containers/v1"
	tasksapi "github.com/containerd/containerd/api/services/tasks/v1"
	"github.com/containerd/containerd/api/types/task"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/containerstats/containerstatsreceiver/internal/identity"
)

func id64(c byte) string { return strings.Repeat(string(c), 64) }

var created = time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)

// fakeContainerd serves the containers and tasks services on a real unix
// socket, answering per namespace.
type fakeContainerd struct {
	containersapi.UnimplementedContainersServer
	containers map[string][]*containersapi.Container
	running    map[string][]string
	failNS     string
}

func ns(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(namespaceHeader); len(v) == 1 {
		return v[0]
	}
	return ""
}

func (f *fakeContainerd) List(ctx context.Context, _ *containersapi.ListContainersRequest) (*containersapi.ListContainersResponse, error) {
	if ns(ctx) == f.failNS {
		return nil, status.Error(codes.Unavailable, "namespace down")
	}
	return &containersapi.ListContainersResponse{Containers: f.containers[ns(ctx)]}, nil
}

type fakeTasks struct {
	tasksapi.UnimplementedTasksServer
	f *fakeContainerd
}

func (t fakeTasks) List(ctx context.Context, _ *tasksapi.ListTasksRequest) (*tasksapi.ListTasksResponse, error) {
	var out []*task.Process
	for _, id := range t.f.running[ns(ctx)] {
		out = append(out, &task.Process{ID: id, Pid: 4242, Status: task.Status_RUNNING})
	}
	out = append(out, &task.Process{ID: id64('9'), Status: task.Status_STOPPED})
	return &tasksapi.ListTasksResponse{Tasks: out}, nil
}

func start(t *testing.T, f *fakeContainerd) string {
	sock := filepath.Join(t.TempDir(), "containerd.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	srv := grpc.NewServer()
	containersapi.RegisterContainersServer(srv, f)
	tasksapi.RegisterTasksServer(srv, fakeTasks{f: f})
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return sock
}

func TestList(t *testing.T) {
	f := &fakeContainerd{
		containers: map[string][]*containersapi.Container{
			"k8s.io": {
				{ID: id64('a'), Image: "registry.local/pause:3.9", CreatedAt: timestamppb.New(created), Labels: map[string]string{
					labelCRIKind: "sandbox", identity.LabelPodUID: "uid-a", identity.LabelPodName: "api-1", identity.LabelPodNamespace: "prod", "team": "core",
				}},
				{ID: id64('b'), Image: "registry.local/api:2.4", CreatedAt: timestamppb.New(created.Add(time.Second)), Labels: map[string]string{
					labelCRIKind: "container", identity.LabelPodUID: "uid-a", identity.LabelPodName: "api-1", identity.LabelPodNamespace: "prod", identity.LabelContainerName: "api",
				}},
				{ID: id64('9'), Image: "registry.local/api:2.3", Labels: map[string]string{identity.LabelContainerName: "api"}},
			},
			"moby": {
				{ID: id64('c'), Image: "docker.io/library/redis:7", CreatedAt: timestamppb.New(created.Add(2 * time.Second))},
			},
			// nerdctl's: its name and a compose project's labels are
			// containerd labels.
			"default": {
				{ID: id64('d'), Image: "registry.local/shop/web:3", CreatedAt: timestamppb.New(created.Add(3 * time.Second)), Labels: map[string]string{
					labelNerdctlName: "shop-web-1", "com.docker.compose.project": "shop", "com.docker.compose.service": "web", "nerdctl/platform": "linux/amd64",
				}},
			},
		},
		running: map[string][]string{"k8s.io": {id64('a'), id64('b')}, "moby": {id64('c')}, "default": {id64('d')}},
	}
	r, err := New(start(t, f), []string{"k8s.io", "moby", "default"}, []string{"com.docker.compose.project", "com.docker.compose.service", "team"})
	require.NoError(t, err)
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	snap, err := r.List(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{id64('a')}, snap.SandboxIDs)
	assert.Equal(t, []identity.Pod{{UID: "uid-a", Name: "api-1", Namespace: "prod", Labels: map[string]string{"team": "core"}, StartTime: created, Source: identity.SourceContainerd}}, snap.Pods)
	require.Len(t, snap.Containers, 5)
	assert.Equal(t, identity.Container{
		ID: id64('b'), Name: "api", ContainerName: "api", ImageName: "registry.local/api", ImageTag: "2.4", Runtime: "containerd",
		PodUID: "uid-a", PodName: "api-1", Namespace: "prod", StartTime: created.Add(time.Second), Source: identity.SourceContainerd,
	}, snap.Containers[1])
	assert.True(t, snap.Containers[2].Exited, "stopped task")
	assert.Equal(t, identity.Container{
		ID: id64('c'), ImageName: "docker.io/library/redis", ImageTag: "7", Runtime: "docker", StartTime: created.Add(2 * time.Second), Source: identity.SourceContainerd,
	}, snap.Containers[3])
	assert.Equal(t, identity.Container{
		ID: id64('d'), Name: "shop-web-1", ImageName: "registry.local/shop/web", ImageTag: "3", Runtime: "containerd", StartTime: created.Add(3 * time.Second),
		Labels: map[string]string{"com.docker.compose.project": "shop", "com.docker.compose.service": "web"}, Source: identity.SourceContainerd,
	}, snap.Containers[4])

	f.failNS = "moby"
	_, err = r.List(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `namespace "moby"`)
}

func TestNewRejects(t *testing.T) {
	_, err := New("run/containerd.sock", []string{"k8s.io"}, nil)
	assert.Error(t, err)
	_, err = New("/run/containerd.sock", nil, nil)
	assert.Error(t, err)
}

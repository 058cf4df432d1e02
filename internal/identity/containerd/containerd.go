// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package containerd resolves container identity through containerd's own
// gRPC API (containers and tasks services), one namespace at a time. It is
// used when CRI does not answer and for containers CRI does not know
// (docker's containers live in containerd's "moby" namespace).
//
// It uses the API module (github.com/containerd/containerd/api: generated
// gRPC stubs) and grpc directly rather than the full containerd client: it
// only needs two List calls, and the full client pulls in content stores,
// snapshotters, image handling and their dependencies (see docs/identity.md
// for the binary-size difference).
package containerd // import "github.com/containerstats/containerstatsreceiver/internal/identity/containerd"

import (
	"context"
	"errors"
	"fmt"
	"slices"

	containersapi "github.com/containerd/containerd/api/services/containers/v1"
	tasksapi "github.com/containerd/containerd/api/services/tasks/v1"
	"github.com/containerd/containerd/api/types/task"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/containerstats/containerstatsreceiver/internal/identity"
)

// Sockets are containerd's usual sockets relative to the host root, in the
// order auto-detection tries them: the system containerd (also docker's
// since docker 23 when configured so), then the one dockerd starts itself.
func Sockets() []string {
	return []string{
		"run/containerd/containerd.sock",
		"var/run/containerd/containerd.sock",
		"run/docker/containerd/containerd.sock",
		"run/k3s/containerd/containerd.sock",
	}
}

// Endpoint is the containerd socket to use: configured
// (runtime.containerd_endpoint) when set, else the first of Sockets that
// exists under root as a unix socket; "" when there is none.
func Endpoint(root, configured string) string {
	return identity.SocketEndpoint(root, configured, Sockets())
}

// namespaceHeader is the gRPC metadata key containerd reads the namespace
// from.
const namespaceHeader = "containerd-namespace"

// The label containerd's CRI plugin puts on sandboxes, and the one
// nerdctl keeps a container's name in.
const (
	labelCRIKind     = "io.cri-containerd.kind"
	labelNerdctlName = "nerdctl/name"
)

// Resolver lists containers of some containerd namespaces.
type Resolver struct {
	endpoint   string
	namespaces []string
	allow      []string // container labels kept (container.label.<key>)
	conn       *grpc.ClientConn
	containers containersapi.ContainersClient
	tasks      tasksapi.TasksClient
}

// New connects lazily to containerd's socket (a path or "unix://path").
// Container labels whose keys are in labels are kept (nerdctl's, say:
// compose's project and service).
func New(endpoint string, namespaces, labels []string) (*Resolver, error) {
	if len(namespaces) == 0 {
		return nil, fmt.Errorf("containerd endpoint %q: no namespaces", endpoint)
	}
	conn, path, err := identity.DialUnix("containerd", endpoint)
	if err != nil {
		return nil, err
	}
	return &Resolver{
		endpoint: path, namespaces: namespaces, allow: slices.Clone(labels), conn: conn,
		containers: containersapi.NewContainersClient(conn), tasks: tasksapi.NewTasksClient(conn),
	}, nil
}

// Source is identity.SourceContainerd.
func (*Resolver) Source() identity.Source { return identity.SourceContainerd }

// Endpoint is the socket path.
func (r *Resolver) Endpoint() string { return r.endpoint }

// Close closes the connection.
func (r *Resolver) Close() error { return r.conn.Close() }

// List lists every configured namespace. A namespace that fails makes the
// whole listing fail, so the cache keeps its previous good one.
func (r *Resolver) List(ctx context.Context) (identity.Snapshot, error) {
	var snap identity.Snapshot
	var errs error
	for _, ns := range r.namespaces {
		if err := r.listNamespace(ctx, ns, &snap); err != nil {
			errs = errors.Join(errs, err)
		}
	}
	return snap, errs
}

func (r *Resolver) listNamespace(ctx context.Context, ns string, snap *identity.Snapshot) error {
	ctx = metadata.AppendToOutgoingContext(ctx, namespaceHeader, ns)
	cs, err := r.containers.List(ctx, &containersapi.ListContainersRequest{})
	if err != nil {
		return fmt.Errorf("containerd %s namespace %q: Containers.List: %w", r.endpoint, ns, err)
	}
	ts, err := r.tasks.List(ctx, &tasksapi.ListTasksRequest{})
	if err != nil {
		return fmt.Errorf("containerd %s namespace %q: Tasks.List: %w", r.endpoint, ns, err)
	}
	// A stopped task is an exited container. No task or a task still
	// being created is not: its cgroup, if any, is about to run.
	stopped := map[string]bool{}
	for _, t := range ts.GetTasks() {
		if t.GetStatus() == task.Status_STOPPED {
			stopped[t.GetID()] = true
		}
	}
	rt := "containerd"
	if ns == "moby" {
		rt = "docker"
	}
	for _, c := range cs.GetContainers() {
		l := c.GetLabels()
		ct := identity.Container{
			ID:            c.GetID(),
			ContainerName: l[identity.LabelContainerName],
			Name:          l[identity.LabelContainerName],
			Runtime:       rt,
			PodUID:        l[identity.LabelPodUID],
			PodName:       l[identity.LabelPodName],
			Namespace:     l[identity.LabelPodNamespace],
			Sandbox:       l[labelCRIKind] == "sandbox" || l[identity.LabelDockerType] == "podsandbox",
			Exited:        stopped[c.GetID()],
			Labels:        identity.AllowedLabels(l, r.allow),
			Source:        identity.SourceContainerd,
		}
		if c.GetCreatedAt() != nil {
			ct.StartTime = c.GetCreatedAt().AsTime()
		}
		if ct.Name == "" {
			ct.Name = l[labelNerdctlName] // nerdctl run --name
		}
		ct.ImageName, ct.ImageTag = identity.SplitImage(c.GetImage())
		if ct.Sandbox {
			snap.SandboxIDs = append(snap.SandboxIDs, ct.ID)
			if ct.PodUID != "" {
				snap.Pods = append(snap.Pods, identity.Pod{
					UID: ct.PodUID, Name: ct.PodName, Namespace: ct.Namespace,
					Labels: identity.PodLabels(l), StartTime: ct.StartTime, Source: identity.SourceContainerd,
				})
			}
		}
		snap.Containers = append(snap.Containers, ct)
	}
	return nil
}

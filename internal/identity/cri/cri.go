// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package cri resolves container identity through the CRI runtime service
// (k8s.io/cri-api runtime v1) over a unix socket. It only calls read-only
// RPCs: Version (for the runtime's name, never to gate on its version),
// ListPodSandbox, ListContainers, and ContainerStatus when a container's
// image is listed by ID only.
package cri // import "github.com/containerstats/containerstatsreceiver/internal/identity/cri"

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/containerstats/containerstatsreceiver/internal/identity"
)

// Sockets are the usual CRI endpoints, relative to the host root, in the
// order auto-detection tries them.
func Sockets() []string {
	return []string{
		"run/containerd/containerd.sock",
		"var/run/containerd/containerd.sock",
		"run/crio/crio.sock",
		"var/run/crio/crio.sock",
		"run/cri-dockerd.sock",
		"var/run/cri-dockerd.sock",
		"run/k3s/containerd/containerd.sock",
	}
}

// Detect returns the first of Sockets that exists as a socket under root.
func Detect(root string) (string, bool) {
	for _, s := range Sockets() {
		p := filepath.Join(root, s)
		if fi, err := os.Stat(p); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return p, true
		}
	}
	return "", false
}

// Resolver lists a CRI runtime. It is safe for one List at a time (the
// identity cache serialises refreshes).
type Resolver struct {
	endpoint string
	conn     *grpc.ClientConn
	client   runtimeapi.RuntimeServiceClient

	mu      sync.Mutex
	runtime string            // container.runtime.name, from Version
	images  map[string]string // image ID -> image name reference
}

// New connects lazily to the CRI socket at endpoint (a path or
// "unix://path"): nothing is dialled until the first List, and a runtime
// that restarts is reconnected to (backoff capped at maxBackoff).
func New(endpoint string, maxBackoff time.Duration) (*Resolver, error) {
	path := strings.TrimPrefix(endpoint, "unix://")
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("cri endpoint %q: must be an absolute unix socket path", endpoint)
	}
	bc := backoff.DefaultConfig
	if maxBackoff > 0 {
		bc.MaxDelay = maxBackoff
	}
	conn, err := grpc.NewClient("unix://"+path,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: bc, MinConnectTimeout: time.Second}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		return nil, fmt.Errorf("cri endpoint %q: %w", endpoint, err)
	}
	return &Resolver{endpoint: path, conn: conn, client: runtimeapi.NewRuntimeServiceClient(conn), images: map[string]string{}}, nil
}

// Source is identity.SourceCRI.
func (*Resolver) Source() identity.Source { return identity.SourceCRI }

// Endpoint is the socket path.
func (r *Resolver) Endpoint() string { return r.endpoint }

// Close closes the connection.
func (r *Resolver) Close() error { return r.conn.Close() }

// RuntimeName maps a CRI Version RuntimeName to container.runtime.name.
// Only the name is used; the version string is never parsed.
func RuntimeName(n string) string {
	switch l := strings.ToLower(strings.TrimSpace(n)); {
	case l == "":
		return ""
	case strings.Contains(l, "containerd"):
		return "containerd"
	case strings.Contains(l, "cri-o"), l == "crio":
		return "cri-o"
	case strings.Contains(l, "docker"):
		return "docker"
	default:
		return l
	}
}

// List lists sandboxes and containers. ctx carries the deadline.
func (r *Resolver) List(ctx context.Context) (identity.Snapshot, error) {
	var snap identity.Snapshot
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runtime == "" {
		v, err := r.client.Version(ctx, &runtimeapi.VersionRequest{})
		if err != nil {
			return snap, fmt.Errorf("cri %s: Version: %w", r.endpoint, err)
		}
		r.runtime = RuntimeName(v.GetRuntimeName())
	}
	sb, err := r.client.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return snap, fmt.Errorf("cri %s: ListPodSandbox: %w", r.endpoint, err)
	}
	cs, err := r.client.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return snap, fmt.Errorf("cri %s: ListContainers: %w", r.endpoint, err)
	}

	bySandbox := make(map[string]*runtimeapi.PodSandbox, len(sb.GetItems()))
	podIdx := map[string]int{}
	for _, s := range sb.GetItems() {
		bySandbox[s.GetId()] = s
		snap.SandboxIDs = append(snap.SandboxIDs, s.GetId())
		md := s.GetMetadata()
		p := identity.Pod{
			UID: md.GetUid(), Name: md.GetName(), Namespace: md.GetNamespace(),
			Labels: identity.PodLabels(s.GetLabels()), StartTime: nsTime(s.GetCreatedAt()), Source: identity.SourceCRI,
		}
		if p.UID == "" {
			continue
		}
		// Several sandboxes per pod after a sandbox restart: the ready one,
		// else the newest, describes the pod.
		if i, dup := podIdx[p.UID]; dup {
			if s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY || p.StartTime.After(snap.Pods[i].StartTime) {
				snap.Pods[i] = p
			}
			continue
		}
		podIdx[p.UID] = len(snap.Pods)
		snap.Pods = append(snap.Pods, p)
	}

	for _, c := range cs.GetContainers() {
		md := c.GetMetadata()
		ct := identity.Container{
			ID:            c.GetId(),
			Name:          md.GetName(),
			ContainerName: md.GetName(),
			Runtime:       r.runtime,
			SandboxID:     c.GetPodSandboxId(),
			RestartCount:  int64(md.GetAttempt()),
			HasRestart:    md != nil,
			StartTime:     nsTime(c.GetCreatedAt()),
			Exited:        c.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED,
			Source:        identity.SourceCRI,
		}
		if n := c.GetLabels()[identity.LabelContainerName]; n != "" {
			ct.ContainerName = n
		}
		if s, ok := bySandbox[ct.SandboxID]; ok {
			smd := s.GetMetadata()
			ct.PodUID, ct.PodName, ct.Namespace = smd.GetUid(), smd.GetName(), smd.GetNamespace()
		}
		l := c.GetLabels()
		if ct.PodUID == "" {
			ct.PodUID = l[identity.LabelPodUID]
		}
		if ct.PodName == "" {
			ct.PodName = l[identity.LabelPodName]
		}
		if ct.Namespace == "" {
			ct.Namespace = l[identity.LabelPodNamespace]
		}
		if c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING || c.GetState() == runtimeapi.ContainerState_CONTAINER_CREATED {
			ct.ImageName, ct.ImageTag = identity.SplitImage(r.imageName(ctx, c))
		}
		snap.Containers = append(snap.Containers, ct)
	}
	return snap, nil
}

// imageName returns the image's name reference. The list may give an image
// ID only (the kubelet creates containers by image ID); then the image name
// comes from ContainerStatus, once per image ID. Under mu.
func (r *Resolver) imageName(ctx context.Context, c *runtimeapi.Container) string {
	for _, ref := range []string{c.GetImage().GetUserSpecifiedImage(), c.GetImage().GetImage()} {
		if n, _ := identity.SplitImage(ref); n != "" {
			return ref
		}
	}
	key := c.GetImageRef()
	if key == "" {
		key = c.GetImage().GetImage()
	}
	if n, ok := r.images[key]; ok {
		return n
	}
	st, err := r.client.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.GetId()})
	if err != nil {
		return "" // unknown image: omitted, retried on the next refresh
	}
	name := ""
	for _, ref := range []string{st.GetStatus().GetImage().GetUserSpecifiedImage(), st.GetStatus().GetImage().GetImage()} {
		if n, _ := identity.SplitImage(ref); n != "" {
			name = ref
			break
		}
	}
	if key != "" {
		r.images[key] = name
	}
	return name
}

func nsTime(ns int64) time.Time {
	if ns <= 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

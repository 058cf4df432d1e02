// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cri // import "github.com/containerstats/containerstatsreceiver/internal/cri"

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/containerstats/containerstatsreceiver/internal/identity"
)

// Resolver lists a CRI runtime's sandboxes and containers: container
// identity. It is safe for one List at a time (the identity cache
// serialises refreshes).
type Resolver struct {
	endpoint string
	conn     *Client
	client   runtimeapi.RuntimeServiceClient

	mu      sync.Mutex
	runtime string            // container.runtime.name, from Version
	images  map[string]string // image ID -> image name reference
}

// NewResolver lists through c; closing the resolver closes c.
func NewResolver(c *Client) *Resolver {
	return &Resolver{endpoint: c.endpoint, conn: c, client: runtimeapi.NewRuntimeServiceClient(c.conn), images: map[string]string{}}
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
	var podReady []bool // per snap.Pods entry: described by a READY sandbox
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
		// else the newest, describes the pod. A NOTREADY sandbox never
		// replaces a READY one, however new.
		ready := s.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY
		if i, dup := podIdx[p.UID]; dup {
			if ready && !podReady[i] || ready == podReady[i] && p.StartTime.After(snap.Pods[i].StartTime) {
				snap.Pods[i], podReady[i] = p, ready
			}
			continue
		}
		podIdx[p.UID] = len(snap.Pods)
		snap.Pods = append(snap.Pods, p)
		podReady = append(podReady, ready)
	}

	used := map[string]bool{} // image keys of this listing
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
			name, key, err := r.imageName(ctx, c)
			if err != nil {
				snap.Errors = append(snap.Errors, err)
			}
			if key != "" {
				used[key] = true
			}
			ct.ImageName, ct.ImageTag = identity.SplitImage(name)
		}
		snap.Containers = append(snap.Containers, ct)
	}
	// Forget the images no listed container uses any more: the map stays
	// as small as the node's set of images in use.
	for key := range r.images {
		if !used[key] {
			delete(r.images, key)
		}
	}
	return snap, nil
}

// imageName returns the image's name reference and the key it is cached
// under ("" when the list names the image). The list may give an image ID
// only (the kubelet creates containers by image ID); then the image name
// comes from ContainerStatus, once per image ID. A failed ContainerStatus
// is returned (the name is retried on the next refresh); an answer without
// a name is not cached either, so a later refresh can still learn it.
// Under mu.
func (r *Resolver) imageName(ctx context.Context, c *runtimeapi.Container) (name, key string, err error) {
	for _, ref := range []string{c.GetImage().GetUserSpecifiedImage(), c.GetImage().GetImage()} {
		if n, _ := identity.SplitImage(ref); n != "" {
			return ref, "", nil
		}
	}
	key = c.GetImageRef()
	if key == "" {
		key = c.GetImage().GetImage()
	}
	if n, ok := r.images[key]; ok {
		return n, key, nil
	}
	st, err := r.client.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.GetId()})
	if err != nil {
		return "", key, fmt.Errorf("cri %s: ContainerStatus %s (image name of %s): %w", r.endpoint, c.GetId(), key, err)
	}
	for _, ref := range []string{st.GetStatus().GetImage().GetUserSpecifiedImage(), st.GetStatus().GetImage().GetImage()} {
		if n, _ := identity.SplitImage(ref); n != "" {
			name = ref
			break
		}
	}
	if key != "" && name != "" {
		r.images[key] = name
	}
	return name, key, nil
}

func nsTime(ns int64) time.Time {
	if ns <= 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cri // import "github.com/containerstats/containerstatsreceiver/internal/cri"

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/containerstats/containerstatsreceiver/internal/identity"
)

// Resolver lists a CRI runtime's sandboxes and containers: container
// identity. It is safe for one List at a time (the identity cache
// serializes refreshes).
type Resolver struct {
	endpoint string
	conn     *Client
	client   runtimeapi.RuntimeServiceClient

	mu      sync.Mutex
	runtime string            // container.runtime.name, from Version
	images  map[string]string // image ID -> image name reference
	// exitStatus: read exited containers' exit status (SetExitStatus);
	// exits caches them by container ID (an exited container's status is
	// final), pruned to the listed containers.
	exitStatus bool
	exits      map[string]exitInfo
}

// exitInfo is what ContainerStatus tells about an exited container.
type exitInfo struct {
	code     int32
	reason   string
	finished time.Time
	image    string // the image name reference, for the resource of its events
}

// MaxExitStatusPerList bounds the ContainerStatus calls one List makes for
// exit statuses (newest exited containers first); the rest wait for the
// next listing, so a node with many exited containers never makes a
// listing outlast runtime.timeout.
const MaxExitStatusPerList = 16

// SetExitStatus makes List read the exit status (exit code, reason,
// finish time) of every exited container, once per container, with the
// read-only ContainerStatus: the events need it (the previous instance's
// exit of a restart; "OOMKilled"). Off, exited containers carry no exit
// status. Call it before the first List.
func (r *Resolver) SetExitStatus(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exitStatus = on
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
	var exited []int          // snap.Containers indexes of exited containers
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
		if ct.Exited && r.exitStatus {
			exited = append(exited, len(snap.Containers))
		}
		snap.Containers = append(snap.Containers, ct)
	}
	if r.exitStatus {
		snap.Errors = append(snap.Errors, r.exitStatuses(ctx, snap.Containers, exited)...)
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

// exitStatuses sets the exit status of the exited containers (indexes
// into cts): cached ones from the cache, up to MaxExitStatusPerList others
// (newest first) from ContainerStatus. A failed call is a detail error: the
// container has no exit status in this listing and is asked again by the
// next. The cache keeps only containers of this listing. Under mu.
func (r *Resolver) exitStatuses(ctx context.Context, cts []identity.Container, exited []int) []error {
	if r.exits == nil {
		r.exits = map[string]exitInfo{}
	}
	var todo []int
	listed := make(map[string]bool, len(exited))
	for _, i := range exited {
		listed[cts[i].ID] = true
		if _, ok := r.exits[cts[i].ID]; !ok {
			todo = append(todo, i)
		}
	}
	for id := range r.exits {
		if !listed[id] {
			delete(r.exits, id)
		}
	}
	sort.SliceStable(todo, func(a, b int) bool { return cts[todo[a]].StartTime.After(cts[todo[b]].StartTime) })
	var errs []error
	for n, i := range todo {
		if n == MaxExitStatusPerList || ctx.Err() != nil {
			break
		}
		st, err := r.client.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: cts[i].ID})
		if err != nil {
			errs = append(errs, fmt.Errorf("cri %s: ContainerStatus %s (exit status): %w", r.endpoint, cts[i].ID, err))
			continue
		}
		s := st.GetStatus()
		if s == nil || s.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED {
			continue // no status, or not exited after all (a race with the listing): asked again next time
		}
		x := exitInfo{code: s.GetExitCode(), reason: s.GetReason(), finished: nsTime(s.GetFinishedAt())}
		for _, ref := range []string{s.GetImage().GetUserSpecifiedImage(), s.GetImage().GetImage()} {
			if n, _ := identity.SplitImage(ref); n != "" {
				x.image = ref
				break
			}
		}
		r.exits[cts[i].ID] = x
	}
	for _, i := range exited {
		x, ok := r.exits[cts[i].ID]
		if !ok {
			continue
		}
		ct := &cts[i]
		ct.ExitStatus, ct.ExitCode, ct.Reason, ct.FinishedAt = true, x.code, x.reason, x.finished
		if ct.ImageName == "" && x.image != "" {
			ct.ImageName, ct.ImageTag = identity.SplitImage(x.image)
		}
	}
	return errs
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

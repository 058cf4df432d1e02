// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package identity resolves a container ID found in the cgroup tree to its
// Kubernetes identity (pod, namespace, container name, image, restart count,
// start time). Runtime APIs (CRI, containerd) are listed in the background
// into a cache; a scrape only reads the cache. When no runtime answers, the
// cgroup path and /var/log/pods still give a partial identity: the result is
// never an empty string, an unknown field is simply left empty and omitted.
package identity // import "github.com/containerstats/containerstatsreceiver/internal/identity"

import (
	"context"
	"strings"
	"time"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
)

// Source is where a container's identity came from.
type Source uint8

const (
	// SourcePath: only the cgroup path (and /var/log/pods when readable).
	SourcePath Source = iota
	// SourceCRI: the CRI runtime service.
	SourceCRI
	// SourceContainerd: containerd's own API.
	SourceContainerd
	// SourceDocker: the Docker Engine API (dockerd, or Podman's
	// Docker-compatible service).
	SourceDocker
)

// Sources is the number of Source values (arrays indexed by Source).
const Sources = int(SourceDocker) + 1

func (s Source) String() string {
	switch s {
	case SourceCRI:
		return "cri"
	case SourceContainerd:
		return "containerd"
	case SourceDocker:
		return "docker"
	default:
		return "path"
	}
}

// Container is what a runtime knows about one container. Empty strings are
// unknown values; callers omit them.
type Container struct {
	ID            string
	Name          string // container.name
	ContainerName string // k8s.container.name
	ImageName     string
	ImageTag      string
	Runtime       string // container.runtime.name
	PodUID        string
	PodName       string
	Namespace     string
	SandboxID     string
	RestartCount  int64
	HasRestart    bool
	// StartTime is the container's creation time from the runtime; zero
	// when unknown.
	StartTime time.Time
	// Labels are the container's labels whose keys are on the allow-list
	// (container_labels; container.label.<key>); nil when none.
	Labels map[string]string
	// Sandbox marks pause/sandbox containers.
	Sandbox bool
	// Exited marks containers the runtime reports as exited (CRI
	// CONTAINER_EXITED, containerd task STOPPED). Created containers are
	// not exited: their cgroup appears as they start.
	Exited bool
	// ExitStatus: the runtime's exit status of an exited container was
	// read (CRI ContainerStatus, fetched only when events are on); then
	// ExitCode is the main process' exit code (0 is a value), Reason the
	// runtime's reason ("OOMKilled", "Error", "Completed"; may be empty)
	// and FinishedAt when it exited (zero when the runtime did not say).
	ExitStatus bool
	ExitCode   int32
	Reason     string
	FinishedAt time.Time
	Source     Source
}

// Pod is what a runtime knows about one pod sandbox.
type Pod struct {
	UID       string
	Name      string
	Namespace string
	Labels    map[string]string
	StartTime time.Time
	Source    Source
}

// Snapshot is one complete listing of a runtime.
type Snapshot struct {
	Containers []Container
	Pods       []Pod
	// SandboxIDs are the IDs of pod sandboxes (pause containers).
	SandboxIDs []string
	// Errors are details the listing could not read (one container's
	// image name, say): the listing stands without them and the cache
	// logs them.
	Errors []error
}

// Resolver lists one runtime API. Implementations must only call read-only
// RPCs and honor ctx's deadline.
type Resolver interface {
	// Source is the source recorded on what List returns.
	Source() Source
	// Endpoint names the endpoint in logs.
	Endpoint() string
	List(ctx context.Context) (Snapshot, error)
	Close() error
}

// SplitImage splits an image reference into name and tag:
// "docker.io/library/busybox:1.36" -> ("docker.io/library/busybox", "1.36"),
// "reg:5000/app@sha256:..." -> ("reg:5000/app", ""). A bare image ID
// ("sha256:<hex>" or 64 hex) has no name: both are empty.
func SplitImage(ref string) (name, tag string) {
	ref = strings.TrimSpace(ref)
	if ref == "" || strings.HasPrefix(ref, "sha256:") || cgroupfs.IsHex64(ref) {
		return "", ""
	}
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref = ref[:i]
	}
	slash := strings.LastIndexByte(ref, '/')
	if i := strings.LastIndexByte(ref, ':'); i > slash {
		name, tag = ref[:i], ref[i+1:]
	} else {
		name = ref
	}
	if name == "" {
		return "", "" // ":tag" or "@digest" alone names nothing
	}
	return name, tag
}

// AllowedLabels returns the labels of l whose keys are in allow; nil when
// there are none.
func AllowedLabels(l map[string]string, allow []string) map[string]string {
	var out map[string]string
	for _, k := range allow {
		if v, ok := l[k]; ok {
			if out == nil {
				out = make(map[string]string, len(allow))
			}
			out[k] = v
		}
	}
	return out
}

// Kubernetes labels the kubelet puts on sandboxes and containers.
const (
	LabelPodName       = "io.kubernetes.pod.name"
	LabelPodNamespace  = "io.kubernetes.pod.namespace"
	LabelPodUID        = "io.kubernetes.pod.uid"
	LabelContainerName = "io.kubernetes.container.name"
	// LabelDockerType is what docker's Kubernetes integration (dockershim,
	// cri-dockerd) marks containers with; "podsandbox" is a sandbox.
	LabelDockerType = "io.kubernetes.docker.type"
)

// PodLabels returns the user's pod labels from a sandbox's labels: the
// kubelet's own io.kubernetes.pod.* keys and runtime-internal keys are
// dropped.
func PodLabels(l map[string]string) map[string]string {
	out := make(map[string]string, len(l))
	for k, v := range l {
		switch {
		case k == LabelPodName, k == LabelPodNamespace, k == LabelPodUID, k == LabelContainerName:
		case strings.HasPrefix(k, "io.cri-containerd."), strings.HasPrefix(k, "io.kubernetes.docker."):
		default:
			out[k] = v
		}
	}
	return out
}

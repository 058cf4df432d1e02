// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package gpu reads NVIDIA GPU device statistics through NVML (go-nvml) and
// attributes GPU use to containers: by the host PIDs NVML reports, mapped
// through /proc/<pid>/cgroup to a container ID, and by the kubelet's
// pod-resources allocations. It never calls a mutating NVML function.
package gpu // import "github.com/containerstats/containerstatsreceiver/internal/gpu"

import (
	"context"
	"errors"

	"github.com/containerstats/containerstatsreceiver/internal/podresources"
	"github.com/containerstats/containerstatsreceiver/internal/procfs"
)

// Procs reads a process's cgroup membership; procfs.FS satisfies it.
type Procs interface {
	Cgroup(pid int) ([]procfs.CgroupLine, error)
}

// AllocationLister lists the kubelet's device allocations;
// *podresources.Client satisfies it.
type AllocationLister interface {
	List(ctx context.Context) ([]podresources.Allocation, error)
}

// ErrUnavailable is wrapped by Open's error when the node cannot report GPU
// metrics at all: no libnvidia-ml.so.1, no driver loaded, or no GPU. It is
// an expected state on most nodes, not a fault.
var ErrUnavailable = errors.New("NVIDIA GPU metrics unavailable")

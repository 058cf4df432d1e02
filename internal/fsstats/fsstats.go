// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package fsstats collects filesystem usage in the background and caches
// it, so that no scrape waits on a container runtime: each container's
// writable layer and the image filesystems (from the runtime, through a
// Source such as CRI), the sizes of the containers' log files under
// <root>/var/log/pods, the capacity of the image filesystems (statfs), and
// the pods' volumes under <root>/var/lib/kubelet/pods (statfs, and a
// bounded directory walk, volumes.go).
// The node filesystem's statfs is cheap and is taken at scrape time
// (Collector.NodeFS).
package fsstats // import "github.com/containerstats/containerstatsreceiver/internal/fsstats"

import (
	"context"

	"github.com/containerstats/containerstatsreceiver/internal/opt"
)

// Usage is what a runtime reports for one filesystem use: bytes and
// inodes used, each absent when the runtime did not give it or had not
// measured it yet.
type Usage struct {
	Bytes  opt.Value[uint64]
	Inodes opt.Value[uint64]
}

// ImageFS is one image filesystem as the runtime reports it.
type ImageFS struct {
	// Mountpoint is the runtime's path on the host (not under root).
	Mountpoint string
	Usage
}

// Source is the runtime the collector asks (CRI: internal/cri's
// FilesystemSource). Both calls are read-only; ctx carries the deadline.
type Source interface {
	// WritableLayers returns the writable layer of every container the
	// runtime knows, by container ID.
	WritableLayers(ctx context.Context) (map[string]Usage, error)
	// ImageFilesystems returns the runtime's image filesystems.
	ImageFilesystems(ctx context.Context) ([]ImageFS, error)
}

// Space is one filesystem's statfs: bytes and inodes. Inodes are absent
// on filesystems that report no inode table (f_files 0, e.g. btrfs).
type Space struct {
	Type       uint32 // f_type, the filesystem's magic number (TmpfsMagic, ...)
	Capacity   uint64 // f_blocks x fragment size
	Available  uint64 // f_bavail x fragment size (unprivileged users)
	Used       uint64 // (f_blocks - f_bfree) x fragment size
	Inodes     opt.Value[uint64]
	InodesFree opt.Value[uint64]
}

// Image is one image filesystem with its statfs (absent when the
// mountpoint could not be statted under root).
type Image struct {
	ImageFS
	Space opt.Value[Space]
}

// LogDir names one container's log directory,
// /var/log/pods/<namespace>_<pod>_<uid>/<container>/.
type LogDir struct {
	PodUID    string
	Container string
}

// Snapshot is one background collection. It is never changed after it is
// published: scrapes read it without locks.
type Snapshot struct {
	// Layers is every container's writable layer by container ID; nil
	// without a runtime or when the last call failed.
	Layers map[string]Usage
	// Images are the image filesystems; nil as Layers.
	Images []Image
	// Logs is the sum of the sizes of the regular files in each
	// container's log directory.
	Logs map[LogDir]uint64
	// LogsAllocated is, for the same directories, the kubelet's count of
	// them (its logs.usedBytes): the allocated blocks (st_blocks x 512) of
	// every entry that is not a directory. PodLogsAllocated is the same for
	// the files directly in a pod's log directory, by pod UID (the
	// kubelet's pod-level logs). Both nil when the logs are not walked.
	LogsAllocated    map[LogDir]uint64
	PodLogsAllocated map[string]uint64
	// Volumes is every pod's volumes, by pod UID; nil when the volumes are
	// not collected.
	Volumes map[string]*PodVolumes
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cri // import "github.com/containerstats/containerstatsreceiver/internal/identity/cri"

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/containerstats/containerstatsreceiver/internal/fsstats"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/opt"
)

// containerStatsLister is the one runtime-service RPC Stats uses.
type containerStatsLister interface {
	ListContainerStats(ctx context.Context, in *runtimeapi.ListContainerStatsRequest, opts ...grpc.CallOption) (*runtimeapi.ListContainerStatsResponse, error)
}

// imageFsInformer is the one image-service RPC Stats uses.
type imageFsInformer interface {
	ImageFsInfo(ctx context.Context, in *runtimeapi.ImageFsInfoRequest, opts ...grpc.CallOption) (*runtimeapi.ImageFsInfoResponse, error)
}

// Stats reads filesystem usage from a CRI runtime: containers' writable
// layers (ListContainerStats) and image filesystems (ImageFsInfo), both
// read-only. It is an fsstats.Source.
type Stats struct {
	endpoint string
	closer   func() error
	list     containerStatsLister
	imageFs  imageFsInformer
}

// NewStats connects lazily to the CRI socket at endpoint (a path or
// "unix://path") on a connection of its own.
func NewStats(endpoint string, maxBackoff time.Duration) (*Stats, error) {
	conn, path, err := identity.DialUnix("cri", endpoint, maxBackoff)
	if err != nil {
		return nil, err
	}
	s := newStats(path, runtimeapi.NewRuntimeServiceClient(conn), runtimeapi.NewImageServiceClient(conn))
	s.closer = conn.Close
	return s, nil
}

func newStats(endpoint string, list containerStatsLister, imageFs imageFsInformer) *Stats {
	return &Stats{endpoint: endpoint, list: list, imageFs: imageFs}
}

// Close closes the connection.
func (s *Stats) Close() error {
	if s.closer == nil {
		return nil
	}
	return s.closer()
}

// WritableLayers lists every container's stats and returns their writable
// layers by container ID. A container without a writable_layer message is
// left out.
func (s *Stats) WritableLayers(ctx context.Context) (map[string]fsstats.Usage, error) {
	r, err := s.list.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{})
	if err != nil {
		return nil, fmt.Errorf("cri %s: ListContainerStats: %w", s.endpoint, err)
	}
	out := make(map[string]fsstats.Usage, len(r.GetStats()))
	for _, st := range r.GetStats() {
		id := st.GetAttributes().GetId()
		if id == "" || st.GetWritableLayer() == nil {
			continue
		}
		out[id] = usageOf(st.GetWritableLayer())
	}
	return out, nil
}

// ImageFilesystems returns ImageFsInfo's image filesystems (the optional
// container_filesystems of runtimes that split image and container
// storage are not used).
func (s *Stats) ImageFilesystems(ctx context.Context) ([]fsstats.ImageFS, error) {
	r, err := s.imageFs.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
	if err != nil {
		return nil, fmt.Errorf("cri %s: ImageFsInfo: %w", s.endpoint, err)
	}
	out := make([]fsstats.ImageFS, 0, len(r.GetImageFilesystems()))
	for _, f := range r.GetImageFilesystems() {
		out = append(out, fsstats.ImageFS{Mountpoint: f.GetFsId().GetMountpoint(), Usage: usageOf(f)})
	}
	return out, nil
}

// usageOf maps a CRI FilesystemUsage. A value the runtime did not send is
// absent; so is a 0 with timestamp 0: containerd answers that before its
// first measurement, and it is not a measured zero.
func usageOf(u *runtimeapi.FilesystemUsage) fsstats.Usage {
	val := func(v *runtimeapi.UInt64Value) opt.Value[uint64] {
		if v == nil || v.GetValue() == 0 && u.GetTimestamp() == 0 {
			return opt.Value[uint64]{}
		}
		return opt.Some(v.GetValue())
	}
	return fsstats.Usage{Bytes: val(u.GetUsedBytes()), Inodes: val(u.GetInodesUsed())}
}

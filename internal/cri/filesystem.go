// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cri // import "github.com/containerstats/containerstatsreceiver/internal/cri"

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/containerstats/containerstatsreceiver/internal/fsstats"
	"github.com/containerstats/containerstatsreceiver/internal/opt"
)

// containerStatsLister is the one runtime-service RPC FilesystemSource
// uses.
type containerStatsLister interface {
	ListContainerStats(ctx context.Context, in *runtimeapi.ListContainerStatsRequest, opts ...grpc.CallOption) (*runtimeapi.ListContainerStatsResponse, error)
}

// imageFsInformer is the one image-service RPC FilesystemSource uses.
type imageFsInformer interface {
	ImageFsInfo(ctx context.Context, in *runtimeapi.ImageFsInfoRequest, opts ...grpc.CallOption) (*runtimeapi.ImageFsInfoResponse, error)
}

// FilesystemSource reads filesystem usage from a CRI runtime: containers'
// writable layers (ListContainerStats) and image filesystems
// (ImageFsInfo), both read-only. It is the filesystem collection's
// fsstats.Source.
type FilesystemSource struct {
	endpoint string
	closer   func() error
	list     containerStatsLister
	imageFs  imageFsInformer
}

// NewFilesystemSource reads through c; closing the source closes c.
func NewFilesystemSource(c *Client) *FilesystemSource {
	s := newFilesystemSource(c.endpoint, runtimeapi.NewRuntimeServiceClient(c.conn), runtimeapi.NewImageServiceClient(c.conn))
	s.closer = c.Close
	return s
}

func newFilesystemSource(endpoint string, list containerStatsLister, imageFs imageFsInformer) *FilesystemSource {
	return &FilesystemSource{endpoint: endpoint, list: list, imageFs: imageFs}
}

// Close closes the connection.
func (s *FilesystemSource) Close() error {
	if s.closer == nil {
		return nil
	}
	return s.closer()
}

// WritableLayers lists every container's stats and returns their writable
// layers by container ID. A container without a writable_layer message is
// left out.
func (s *FilesystemSource) WritableLayers(ctx context.Context) (map[string]fsstats.Usage, error) {
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
func (s *FilesystemSource) ImageFilesystems(ctx context.Context) ([]fsstats.ImageFS, error) {
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

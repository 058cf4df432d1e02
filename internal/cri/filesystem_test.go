// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cri

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/containerstats/containerstatsreceiver/internal/fsstats"
	"github.com/containerstats/containerstatsreceiver/internal/opt"
)

type fakeStatsClient struct {
	stats  []*runtimeapi.ContainerStats
	images []*runtimeapi.FilesystemUsage
	err    error
	gotCtx bool
}

func (f *fakeStatsClient) ListContainerStats(ctx context.Context, _ *runtimeapi.ListContainerStatsRequest, _ ...grpc.CallOption) (*runtimeapi.ListContainerStatsResponse, error) {
	_, f.gotCtx = ctx.Deadline()
	if f.err != nil {
		return nil, f.err
	}
	return &runtimeapi.ListContainerStatsResponse{Stats: f.stats}, nil
}

func (f *fakeStatsClient) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest, ...grpc.CallOption) (*runtimeapi.ImageFsInfoResponse, error) {
	if f.err != nil {
		return nil, f.err
	}
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: f.images}, nil
}

func fsUsage(ts int64, mp string, bytes, inodes *runtimeapi.UInt64Value) *runtimeapi.FilesystemUsage {
	return &runtimeapi.FilesystemUsage{Timestamp: ts, FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: mp}, UsedBytes: bytes, InodesUsed: inodes}
}

func u64(v uint64) *runtimeapi.UInt64Value { return &runtimeapi.UInt64Value{Value: v} }

// TestFilesystemWritableLayers: values by container ID; a value not sent, or a
// 0 with timestamp 0 (containerd before its first measurement), is absent;
// a measured 0 (timestamp set) is a 0; containers without a writable
// layer or an ID are left out.
func TestFilesystemWritableLayers(t *testing.T) {
	f := &fakeStatsClient{stats: []*runtimeapi.ContainerStats{
		{Attributes: &runtimeapi.ContainerAttributes{Id: "a"}, WritableLayer: fsUsage(1700000000000000001, "/snap", u64(8388611), u64(17))},
		{Attributes: &runtimeapi.ContainerAttributes{Id: "b"}, WritableLayer: fsUsage(0, "/snap", u64(0), u64(0))},
		{Attributes: &runtimeapi.ContainerAttributes{Id: "c"}, WritableLayer: fsUsage(1700000000000000002, "/snap", u64(0), nil)},
		{Attributes: &runtimeapi.ContainerAttributes{Id: "d"}, WritableLayer: fsUsage(0, "", u64(4099), u64(0))},
		{Attributes: &runtimeapi.ContainerAttributes{Id: "e"}},
		{WritableLayer: fsUsage(1, "", u64(5), u64(6))},
	}}
	s := newFilesystemSource("/x.sock", f, f)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := s.WritableLayers(ctx)
	require.NoError(t, err)
	assert.True(t, f.gotCtx, "the caller's deadline reaches the RPC")
	assert.Equal(t, map[string]fsstats.Usage{
		"a": {Bytes: opt.Some[uint64](8388611), Inodes: opt.Some[uint64](17)},
		"b": {},
		"c": {Bytes: opt.Some[uint64](0)},
		"d": {Bytes: opt.Some[uint64](4099)},
	}, got)
}

func TestFilesystemImageFilesystems(t *testing.T) {
	f := &fakeStatsClient{images: []*runtimeapi.FilesystemUsage{
		fsUsage(1700000000000000003, "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs", u64(123456789), u64(4321)),
		fsUsage(0, "/var/lib/other", u64(0), u64(0)),
	}}
	got, err := newFilesystemSource("/x.sock", f, f).ImageFilesystems(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []fsstats.ImageFS{
		{Mountpoint: "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs", Usage: fsstats.Usage{Bytes: opt.Some[uint64](123456789), Inodes: opt.Some[uint64](4321)}},
		{Mountpoint: "/var/lib/other"},
	}, got)
}

func TestFilesystemErrorsNameTheCallAndSocket(t *testing.T) {
	boom := errors.New("boom")
	s := newFilesystemSource("/run/x.sock", &fakeStatsClient{err: boom}, &fakeStatsClient{err: boom})
	_, err := s.WritableLayers(context.Background())
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "/run/x.sock: ListContainerStats")
	_, err = s.ImageFilesystems(context.Background())
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "/run/x.sock: ImageFsInfo")
}

// dialFilesystem is a FilesystemSource on a client of its own.
func dialFilesystem(endpoint string) (*FilesystemSource, error) {
	c, err := Dial(endpoint)
	if err != nil {
		return nil, err
	}
	return NewFilesystemSource(c), nil
}

// TestFilesystemDeadSocket: nothing listens on the socket; both calls fail
// within their deadline with an error, and Close works.
func TestFilesystemDeadSocket(t *testing.T) {
	s, err := dialFilesystem("unix://" + filepath.Join(t.TempDir(), "none.sock"))
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = s.WritableLayers(ctx)
	require.Error(t, err)
	_, err = s.ImageFilesystems(ctx)
	require.Error(t, err)
}

// TestFilesystemOverTheWire serves ListContainerStats and ImageFsInfo on a real
// unix socket.
func TestFilesystemOverTheWire(t *testing.T) {
	f := startFake(t)
	s, err := dialFilesystem(f.socket)
	require.NoError(t, err)
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	layers, err := s.WritableLayers(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]fsstats.Usage{"w1": {Bytes: opt.Some[uint64](7340033), Inodes: opt.Some[uint64](29)}}, layers)
	images, err := s.ImageFilesystems(ctx)
	require.NoError(t, err)
	assert.Equal(t, []fsstats.ImageFS{{Mountpoint: "/var/lib/img", Usage: fsstats.Usage{Bytes: opt.Some[uint64](99999937), Inodes: opt.Some[uint64](3001)}}}, images)
}

// FuzzUsageOf: a value is present exactly when the runtime sent it and it
// is not the unmeasured 0 with timestamp 0, and then it is the value sent.
func FuzzUsageOf(f *testing.F) {
	f.Add(int64(0), uint64(0), true, uint64(0), false)
	f.Add(int64(1700000000000000001), uint64(8388608), true, uint64(17), true)
	f.Add(int64(0), uint64(4099), true, uint64(0), true)
	f.Fuzz(func(t *testing.T, ts int64, b uint64, hasB bool, i uint64, hasI bool) {
		var bv, iv *runtimeapi.UInt64Value
		if hasB {
			bv = u64(b)
		}
		if hasI {
			iv = u64(i)
		}
		got := usageOf(fsUsage(ts, "/m", bv, iv))
		check := func(v opt.Value[uint64], sent bool, want uint64) {
			present := sent && (want != 0 || ts != 0)
			if v.OK != present || v.OK && v.V != want {
				t.Fatalf("ts %d sent %v value %d: got %+v", ts, sent, want, v)
			}
		}
		check(got.Bytes, hasB, b)
		check(got.Inodes, hasI, i)
	})
}

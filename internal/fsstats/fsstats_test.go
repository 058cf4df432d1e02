// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package fsstats

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/containerstats/containerstatsreceiver/internal/opt"
)

type fakeSource struct {
	mu     sync.Mutex
	layers map[string]Usage
	images []ImageFS
	err    error
	block  bool // calls wait for their deadline
	calls  atomic.Int64
	closed atomic.Bool
}

func (f *fakeSource) WritableLayers(ctx context.Context) (map[string]Usage, error) {
	f.calls.Add(1)
	f.mu.Lock()
	block, err, l := f.block, f.err, f.layers
	f.mu.Unlock()
	if block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return l, err
}

func (f *fakeSource) ImageFilesystems(context.Context) ([]ImageFS, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.images, f.err
}

func (f *fakeSource) Close() error { f.closed.Store(true); return nil }

func writeFile(tb testing.TB, p string, n int) {
	tb.Helper()
	require.NoError(tb, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(tb, os.WriteFile(p, make([]byte, n), 0o600))
}

func TestLogSizes(t *testing.T) {
	root := t.TempDir()
	pods := filepath.Join(root, "var/log/pods")
	writeFile(t, filepath.Join(pods, "ns1_web_uid-1/app/0.log"), 1031)
	writeFile(t, filepath.Join(pods, "ns1_web_uid-1/app/1.log"), 2053)
	writeFile(t, filepath.Join(pods, "ns1_web_uid-1/app/0.log.20260102-030405.gz"), 307)
	writeFile(t, filepath.Join(pods, "ns1_web_uid-1/side/0.log"), 4099)
	require.NoError(t, os.MkdirAll(filepath.Join(pods, "ns1_web_uid-1/empty"), 0o755))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(pods, "ns1_web_uid-1/side/link.log")))
	writeFile(t, filepath.Join(pods, "ns1_web_uid-1/side/sub/x.log"), 5) // not a regular file of the dir
	writeFile(t, filepath.Join(pods, "not-a-pod-dir/app/0.log"), 11)
	writeFile(t, filepath.Join(pods, "ns2_db_uid-2/db/0.log"), 0)
	writeFile(t, filepath.Join(pods, "ns2_db_uid-2/stray.log"), 13)

	c := New(Config{Root: root, Lstat: fakeBlocks()})
	sizes, alloc, podAlloc := c.logSizes()
	assert.Equal(t, map[LogDir]uint64{
		{PodUID: "uid-1", Container: "app"}:   1031 + 2053 + 307,
		{PodUID: "uid-1", Container: "side"}:  4099,
		{PodUID: "uid-1", Container: "empty"}: 0,
		{PodUID: "uid-2", Container: "db"}:    0,
	}, sizes)
	// The kubelet's count: allocated blocks of every entry but directories
	// (fakeBlocks: whole 4 KiB blocks, none for a link).
	assert.Equal(t, map[LogDir]uint64{
		{PodUID: "uid-1", Container: "app"}:   3 * 4096,
		{PodUID: "uid-1", Container: "side"}:  2 * 4096,
		{PodUID: "uid-1", Container: "empty"}: 0,
		{PodUID: "uid-2", Container: "db"}:    0,
	}, alloc)
	assert.Equal(t, map[string]uint64{"uid-1": 0, "uid-2": 4096}, podAlloc, "files directly in the pod's directory")
	sizes, alloc, podAlloc = New(Config{Root: filepath.Join(root, "none")}).logSizes()
	assert.Empty(t, sizes)
	assert.Empty(t, alloc)
	assert.Empty(t, podAlloc)
}

func TestNodeFSPrefersKubeletDir(t *testing.T) {
	root := t.TempDir()
	var asked []string
	statfs := func(p string) (Space, error) {
		asked = append(asked, p)
		if _, err := os.Stat(p); err != nil {
			return Space{}, err
		}
		return Space{Capacity: 1}, nil
	}
	c := New(Config{Root: root, Statfs: statfs})
	_, err := c.NodeFS()
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(root, "var/lib/kubelet"), root}, asked)

	require.NoError(t, os.MkdirAll(filepath.Join(root, "var/lib/kubelet"), 0o755))
	asked = nil
	_, err = c.NodeFS()
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(root, "var/lib/kubelet")}, asked)

	// A real statfs of the test's own directory matches the syscall's.
	sp, err := New(Config{Root: root}).NodeFS()
	require.NoError(t, err)
	var st syscall.Statfs_t
	require.NoError(t, syscall.Statfs(root, &st))
	assert.Equal(t, st.Blocks*uint64(st.Frsize), sp.Capacity)
}

func TestSpaceOf(t *testing.T) {
	assert.Equal(t, Space{Capacity: 4096 * 1009, Available: 4096 * 503, Used: 4096 * (1009 - 601), Inodes: opt.Some[uint64](7001), InodesFree: opt.Some[uint64](3001)},
		spaceOf(4096, 8192, 1009, 601, 503, 7001, 3001))
	assert.Equal(t, Space{Capacity: 512 * 10, Available: 512 * 2, Used: 512 * 7}, spaceOf(0, 512, 10, 3, 2, 0, 0), "f_frsize 0: f_bsize; no inode table: inodes absent")
}

// TestCollectorLoop: Start returns at once, the first collection comes
// without waiting for the interval, image filesystems get their statfs
// under root, and Shutdown stops the loop, closes the source and is safe
// twice.
func TestCollectorLoop(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "var/log/pods/ns_p_u/c/0.log"), 211)
	src := &fakeSource{
		layers: map[string]Usage{"c1": {Bytes: opt.Some[uint64](8388617), Inodes: opt.Some[uint64](19)}},
		images: []ImageFS{{Mountpoint: "/var/lib/img", Usage: Usage{Bytes: opt.Some[uint64](1234577)}}, {Mountpoint: "/gone"}},
	}
	statfs := func(p string) (Space, error) {
		if p == filepath.Join(root, "/var/lib/img") {
			return Space{Capacity: 1 << 30, Available: 1 << 29, Used: 1 << 28}, nil
		}
		return Space{}, &os.PathError{Op: "statfs", Path: p, Err: syscall.ENOENT}
	}
	c := New(Config{
		Root: root, Interval: time.Hour, Timeout: time.Second, Statfs: statfs,
		Connect: func() (Source, error) { return src, nil },
	})
	assert.Same(t, emptySnapshot, c.Snapshot())
	began := time.Now()
	require.NoError(t, c.Start(context.Background()))
	assert.Less(t, time.Since(began), 100*time.Millisecond)
	require.Eventually(t, func() bool { return c.Snapshot() != emptySnapshot }, 10*time.Second, 5*time.Millisecond)
	s := c.Snapshot()
	assert.Equal(t, src.layers, s.Layers)
	assert.Equal(t, []Image{
		{ImageFS: src.images[0], Space: opt.Some(Space{Capacity: 1 << 30, Available: 1 << 29, Used: 1 << 28})},
		{ImageFS: src.images[1]},
	}, s.Images)
	assert.Equal(t, map[LogDir]uint64{{PodUID: "u", Container: "c"}: 211}, s.Logs)
	require.NoError(t, c.Shutdown(context.Background()))
	assert.True(t, src.closed.Load())
	require.NoError(t, c.Shutdown(context.Background()))
	assert.Equal(t, int64(1), src.calls.Load(), "one collection per interval")
}

func TestCollectorShutdownWithoutStart(t *testing.T) {
	c := New(Config{Root: t.TempDir()})
	require.NoError(t, c.Shutdown(context.Background()))
	require.NoError(t, c.Shutdown(context.Background()))
}

// TestCollectorShutdownDuringHangingCall: a runtime that never answers
// does not hold Shutdown: the loop's own context is cancelled.
func TestCollectorShutdownDuringHangingCall(t *testing.T) {
	src := &fakeSource{block: true}
	c := New(Config{Root: t.TempDir(), Interval: time.Hour, Timeout: time.Hour, Connect: func() (Source, error) { return src, nil }})
	require.NoError(t, c.Start(context.Background()))
	require.Eventually(t, func() bool { return src.calls.Load() == 1 }, 10*time.Second, 5*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, c.Shutdown(ctx))
}

// TestCollectorRuntimeFailure: a failing runtime gives no layers and no
// image filesystems (absent, not zeros), logs still; one warning for a run
// of failures, one info when it answers again.
func TestCollectorRuntimeFailure(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "var/log/pods/ns_p_u/c/0.log"), 223)
	src := &fakeSource{err: errors.New("connection refused"), layers: map[string]Usage{"x": {}}}
	c := New(Config{Root: root, Logger: zap.New(core)})
	for range 3 {
		c.Collect(context.Background(), src)
		s := c.Snapshot()
		assert.Nil(t, s.Layers)
		assert.Nil(t, s.Images)
		assert.Equal(t, map[LogDir]uint64{{PodUID: "u", Container: "c"}: 223}, s.Logs)
	}
	assert.Equal(t, 1, logs.FilterLevelExact(zap.WarnLevel).Len())
	src.mu.Lock()
	src.err = nil
	src.mu.Unlock()
	c.Collect(context.Background(), src)
	assert.Equal(t, map[string]Usage{"x": {}}, c.Snapshot().Layers)
	assert.Equal(t, 1, logs.FilterMessage("Filesystem stats: the runtime answers again").Len())

	// Without a runtime: logs only.
	c2 := New(Config{Root: root})
	require.NoError(t, c2.Start(context.Background()))
	require.Eventually(t, func() bool { return c2.Snapshot() != emptySnapshot }, 10*time.Second, 5*time.Millisecond)
	assert.Nil(t, c2.Snapshot().Layers)
	require.NoError(t, c2.Shutdown(context.Background()))
}

func TestCollectorConnectError(t *testing.T) {
	boom := errors.New("bad endpoint")
	c := New(Config{Root: t.TempDir(), Connect: func() (Source, error) { return nil, boom }})
	require.ErrorIs(t, c.Start(context.Background()), boom)
	require.NoError(t, c.Shutdown(context.Background()))
}

// halfSource implements image filesystems but not container stats.
type halfSource struct{ fakeSource }

func (*halfSource) WritableLayers(context.Context) (map[string]Usage, error) {
	return nil, errors.New("Unimplemented")
}

// TestCollectorHalfRuntime: the two calls are independent: image
// filesystems are reported when only container stats fail (and the
// failure is logged).
func TestCollectorHalfRuntime(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	src := &halfSource{fakeSource{images: []ImageFS{{Mountpoint: "/img", Usage: Usage{Bytes: opt.Some[uint64](5003)}}}}}
	c := New(Config{Root: t.TempDir(), Logger: zap.New(core), Statfs: func(string) (Space, error) { return Space{}, os.ErrNotExist }})
	c.Collect(context.Background(), src)
	assert.Nil(t, c.Snapshot().Layers)
	assert.Equal(t, []Image{{ImageFS: src.images[0]}}, c.Snapshot().Images)
	assert.Equal(t, 1, logs.FilterLevelExact(zap.WarnLevel).Len())
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package node

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
)

// TestCgroupIndex finds containers of the v1-cgroupfs fixture with their
// QoS class, and sees a new container only after the rediscovery interval.
func TestCgroupIndex(t *testing.T) {
	root := filepath.Join(t.TempDir(), "v1")
	require.NoError(t, os.CopyFS(root, os.DirFS("../../testdata/fixtures/v1-cgroupfs")))
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	x := NewCgroupIndex(cgroupfs.NewHost(root), false, func() time.Time { return now }, nil)
	ctx := context.Background()

	c, ok := x.Cgroup(ctx, strings.Repeat("c3", 32))
	require.True(t, ok)
	assert.Equal(t, "besteffort", c.QoS)
	assert.Equal(t, "2b3c4d5e-0000-4000-8000-00000000000b", c.PodUID)
	c, ok = x.Cgroup(ctx, strings.Repeat("d4", 32))
	require.True(t, ok)
	assert.Equal(t, "guaranteed", c.QoS)

	newID := strings.Repeat("e5", 32)
	_, ok = x.Cgroup(ctx, newID)
	assert.False(t, ok)
	ctrls, err := os.ReadDir(filepath.Join(root, "sys/fs/cgroup"))
	require.NoError(t, err)
	for _, ctrl := range ctrls {
		pod := filepath.Join(root, "sys/fs/cgroup", ctrl.Name(), "kubepods/burstable/pod1a2b3c4d-0000-4000-8000-00000000000a")
		if _, err := os.Stat(pod); err == nil {
			require.NoError(t, os.MkdirAll(filepath.Join(pod, newID), 0o755)) // cpu,cpuacct may be a link
		}
	}
	now = now.Add(DefaultRediscover - time.Second)
	_, ok = x.Cgroup(ctx, newID)
	assert.False(t, ok, "no walk before the rediscovery interval")
	now = now.Add(2 * time.Second)
	c, ok = x.Cgroup(ctx, newID)
	require.True(t, ok)
	assert.Equal(t, "burstable", c.QoS)

	_, ok = NewCgroupIndex(cgroupfs.NewHost(t.TempDir()), false, nil, nil).Cgroup(ctx, newID)
	assert.False(t, ok, "no cgroup tree: nothing, no panic")
}

// TestCgroupIndexErrorsAreLogged: Detect and Discover failures and
// directories that cannot be listed are logged (at warn, once while they
// last, naming root_path and the cause), and a walk that works again says
// so; containers below an unreadable directory keep their last cgroup.
func TestCgroupIndexErrorsAreLogged(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }

	core, logs := observer.New(zapcore.InfoLevel)
	empty := t.TempDir()
	x := NewCgroupIndex(cgroupfs.NewHost(empty), false, clock, zap.New(core))
	_, ok := x.Cgroup(ctx, strings.Repeat("c3", 32))
	assert.False(t, ok)
	now = now.Add(DefaultRediscover)
	_, _ = x.Cgroup(ctx, strings.Repeat("c3", 32))
	warn := logs.FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, warn, 1, "logged once while it lasts")
	assert.Equal(t, empty, warn[0].ContextMap()["root_path"])
	assert.Contains(t, warn[0].ContextMap()["error"], "no cgroup filesystem")

	core, logs = observer.New(zapcore.InfoLevel)
	root := filepath.Join(t.TempDir(), "v1")
	require.NoError(t, os.CopyFS(root, os.DirFS("../../testdata/fixtures/v1-cgroupfs")))
	x = NewCgroupIndex(cgroupfs.NewHost(root), false, clock, zap.New(core))
	c3 := strings.Repeat("c3", 32)
	_, ok = x.Cgroup(ctx, c3)
	require.True(t, ok)
	besteffort := filepath.Join(x.layout.WalkRoot(), "kubepods/besteffort")
	x.layout.SetListFault(func(dir string) error {
		if dir == besteffort {
			return syscall.EIO
		}
		return nil
	})
	now = now.Add(DefaultRediscover)
	_, ok = x.Cgroup(ctx, strings.Repeat("e5", 32)) // unknown: walks again
	assert.False(t, ok)
	warn = logs.FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, warn, 1)
	assert.Contains(t, warn[0].ContextMap()["error"], besteffort)
	assert.Contains(t, warn[0].ContextMap()["error"], syscall.EIO.Error())
	c, ok := x.Cgroup(ctx, c3)
	require.True(t, ok, "c3, below the unreadable directory, keeps its cgroup")
	assert.Equal(t, "besteffort", c.QoS)

	x.layout.SetListFault(nil)
	now = now.Add(DefaultRediscover)
	_, _ = x.Cgroup(ctx, strings.Repeat("e5", 32))
	assert.Equal(t, 1, logs.FilterMessageSnippet("readable again").Len())
}

// TestCgroupIndexUpdate: a tree discovered elsewhere (the metrics scrape's)
// answers lookups without a walk of the index's own (its root here has no
// cgroup tree at all, so a walk would find nothing), and counts as a walk
// for the rediscovery interval.
func TestCgroupIndexUpdate(t *testing.T) {
	l, err := cgroupfs.Detect(filepath.Join("..", "..", "testdata", "fixtures", "v1-cgroupfs"))
	require.NoError(t, err)
	tree, err := l.Discover(false)
	require.NoError(t, err)

	core, logs := observer.New(zapcore.InfoLevel)
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	x := NewCgroupIndex(cgroupfs.NewHost(t.TempDir()), false, func() time.Time { return now }, zap.New(core))
	x.Update(&tree)
	c, ok := x.Cgroup(context.Background(), strings.Repeat("c3", 32))
	require.True(t, ok)
	assert.Equal(t, "besteffort", c.QoS)
	_, ok = x.Cgroup(context.Background(), strings.Repeat("e5", 32))
	assert.False(t, ok)
	assert.Zero(t, logs.Len(), "no walk of its own within the rediscovery interval")
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package logs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCgroupIndex finds containers of the v1-cgroupfs fixture with their
// QoS class, and sees a new container only after the rediscovery interval.
func TestCgroupIndex(t *testing.T) {
	root := filepath.Join(t.TempDir(), "v1")
	require.NoError(t, os.CopyFS(root, os.DirFS("../../testdata/fixtures/v1-cgroupfs")))
	now := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	x := NewCgroupIndex(root, false, func() time.Time { return now })
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

	_, ok = NewCgroupIndex(t.TempDir(), false, nil).Cgroup(ctx, newID)
	assert.False(t, ok, "no cgroup tree: nothing, no panic")
}

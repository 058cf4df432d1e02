// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(entries)
}

// Files open relative to a cached descriptor of their directory; a removed
// directory still reads as vanished, one re-created under the same path is
// read afresh (not through the dead descriptor), an absent file stays
// absent, and Sweep closes the descriptors of directories no longer read.
func TestReaderDirCache(t *testing.T) {
	root := t.TempDir()
	cg := filepath.Join(root, "sys/fs/cgroup")
	a := filepath.Join(cg, "a")
	require.NoError(t, os.MkdirAll(a, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cg, "cgroup.controllers"), nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(a, "cpu.stat"), []byte("usage_usec 5\n"), 0o600))
	l, err := Detect(root)
	require.NoError(t, err)
	var opened []string
	r := NewReader(l)
	r.SetTrace(func(p string) { opened = append(opened, p) })
	before := openFDs(t)

	cpu, err := r.CPU("/a")
	require.NoError(t, err)
	assert.Equal(t, Some(5000), cpu.Usage)
	assert.Equal(t, []string{filepath.Join(a, "cpu.stat")}, opened, "the trace still names the full path")
	require.Len(t, r.dirs.fds, 1)
	assert.Equal(t, before+1, openFDs(t), "one directory descriptor held")

	mem, err := r.Memory("/a", MemoryAll)
	require.NoError(t, err)
	assert.False(t, mem.Usage.OK, "absent through the cached descriptor: no data, no error")

	// Same content path, new directory: the new file is read.
	require.NoError(t, os.RemoveAll(a))
	_, err = r.CPU("/a")
	require.ErrorIs(t, err, ErrVanished)
	require.NoError(t, os.MkdirAll(a, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(a, "cpu.stat"), []byte("usage_usec 7\n"), 0o600))
	cpu, err = r.CPU("/a")
	require.NoError(t, err)
	assert.Equal(t, Some(7000), cpu.Usage, "re-created directory read afresh")

	// Replaced while its descriptor is cached (a new directory renamed into
	// place, so the new one surely has another inode): read afresh.
	a2 := filepath.Join(cg, "a2")
	require.NoError(t, os.MkdirAll(a2, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(a2, "cpu.stat"), []byte("usage_usec 9\n"), 0o600))
	require.NoError(t, os.RemoveAll(a))
	require.NoError(t, os.Rename(a2, a))
	cpu, err = r.CPU("/a")
	require.NoError(t, err)
	assert.Equal(t, Some(9000), cpu.Usage, "replaced directory read afresh")
	_, err = r.CPU("/a")
	require.NoError(t, err)
	require.Len(t, r.dirs.fds, 1, "the new directory cached again")

	// A scrape that reads nothing keeps /a for one sweep (it was used in
	// this generation), then closes it.
	r.Sweep()
	assert.Len(t, r.dirs.fds, 1)
	r.Sweep()
	assert.Empty(t, r.dirs.fds)
	assert.Equal(t, before, openFDs(t), "descriptors closed")

	_, err = r.CPU("/a")
	require.NoError(t, err)
	r.Close()
	assert.Empty(t, r.dirs.fds)
	assert.Equal(t, before, openFDs(t))
	cpu, err = r.CPU("/a")
	require.NoError(t, err, "usable after Close")
	assert.Equal(t, Some(9000), cpu.Usage)
	r.Close()
}

// A full cache falls back to full-path opens.
func TestReaderDirCacheFull(t *testing.T) {
	root := t.TempDir()
	cg := filepath.Join(root, "sys/fs/cgroup")
	for _, d := range []string{"a", "b"} {
		require.NoError(t, os.MkdirAll(filepath.Join(cg, d), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(cg, d, "cpu.stat"), []byte("usage_usec 5\n"), 0o600))
	}
	require.NoError(t, os.WriteFile(filepath.Join(cg, "cgroup.controllers"), nil, 0o600))
	l, err := Detect(root)
	require.NoError(t, err)
	r := NewReader(l)
	defer r.Close()
	r.dirs.max = 1
	for _, d := range []string{"/a", "/b"} {
		cpu, err := r.CPU(d)
		require.NoError(t, err)
		assert.Equal(t, Some(5000), cpu.Usage)
	}
	assert.Len(t, r.dirs.fds, 1)
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Count: the entries of /proc/<pid>/fd; a missing process is not an
// error; a directory that cannot be listed is, naming it.
func TestFDCounter(t *testing.T) {
	root := t.TempDir()
	fd := filepath.Join(root, "proc/42/fd")
	require.NoError(t, os.MkdirAll(fd, 0o755))
	for i := 0; i < 5; i++ {
		require.NoError(t, os.Symlink("/dev/null", filepath.Join(fd, strconv.Itoa(i))))
	}
	c := NewFS(root).NewFDCounter()
	n, ok, err := c.Count(42)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, 5, n)

	_, ok, err = c.Count(43)
	require.NoError(t, err)
	assert.False(t, ok, "exited: skipped")

	require.NoError(t, os.MkdirAll(filepath.Join(root, "proc/44"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc/44/fd"), nil, 0o644))
	_, _, err = c.Count(44)
	require.ErrorIs(t, err, syscall.ENOTDIR)
	assert.Contains(t, err.Error(), filepath.Join(root, "proc/44/fd"))
}

// Count on the real /proc: this process's own descriptors, one more after
// opening a file.
func TestFDCounterRealSelf(t *testing.T) {
	c := NewFS("/").NewFDCounter()
	before, ok, err := c.Count(os.Getpid())
	require.NoError(t, err)
	require.True(t, ok)
	f, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer f.Close()
	after, _, err := c.Count(os.Getpid())
	require.NoError(t, err)
	assert.Equal(t, before+1, after)
}

func TestNetNS(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "proc/1/ns"), 0o755))
	require.NoError(t, os.Symlink("net:[4026531840]", filepath.Join(root, "proc/1/ns/net")))
	ns, ok, err := NewFS(root).NetNS(1, true)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "net:[4026531840]", ns)
	_, ok, err = NewFS(root).NetNS(2, true)
	require.NoError(t, err)
	assert.False(t, ok)

	// This process's own namespace reads like the kernel's names, and
	// the net/dev inode method names it the same as for another process
	// in it (PID 1 is not: a sandbox may have its own).
	ns, ok, err = NewFS("/").NetNS(os.Getpid(), true)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Regexp(t, `^net:\[[0-9]+\]$`, ns)
	a, ok, err := NewFS("/").NetNS(os.Getpid(), false)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Regexp(t, `^net/dev:[0-9]+$`, a)
	b, _, err := NewFS("/").NetNS(os.Getppid(), false)
	require.NoError(t, err)
	assert.Equal(t, a, b, "the parent shares this process's namespace")
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs

import (
	"fmt"
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
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc/44/fd"), nil, 0o600))
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
	if c.bySize { // procfs 6.2+: the stat size and the listing agree, but
		// listing one's own fd directory holds one more descriptor open:
		// the directory's.
		c.bySize = false
		listed, _, err := c.Count(os.Getpid())
		require.NoError(t, err)
		assert.Equal(t, after+1, listed)
	}
}

func TestReleaseAtLeast(t *testing.T) {
	for rel, want := range map[string]bool{
		"6.18.44-fc-v595": true, "6.2.0": true, "6.2": true, "6.1.112-generic": false,
		"5.15.0-91-generic": false, "10.0.1": true, "6.10.3": true, "x": false, "6.x": false, "": false,
	} {
		assert.Equal(t, want, releaseAtLeast(rel, 6, 2), rel)
	}
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

// BenchmarkFDCounterRealProc counts this process's own /proc/<pid>/fd on
// the real procfs with fds descriptors open: the cost per process of
// container.file_descriptor.count (one open, getdents until empty, close;
// procfs builds the listing from the process's fd table).
func BenchmarkFDCounterRealProc(b *testing.B) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		b.Skip("no /proc")
	}
	c := NewFS("/").NewFDCounter()
	pid := os.Getpid()
	for _, extra := range []int{0, 64, 1024} {
		var opened []int
		for i := 0; i < extra; i++ {
			fd, err := syscall.Open(os.DevNull, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
			require.NoError(b, err)
			opened = append(opened, fd)
		}
		n, _, err := c.Count(pid)
		require.NoError(b, err)
		for _, bySize := range []bool{true, false} {
			if bySize && !c.bySize {
				continue // not procfs 6.2+: only the listing
			}
			method := map[bool]string{true: "stat", false: "getdents"}[bySize]
			b.Run(fmt.Sprintf("fds=%d/method=%s", n, method), func(b *testing.B) {
				saved := c.bySize
				c.bySize = bySize
				defer func() { c.bySize = saved }()
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, _, err := c.Count(pid); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/process")
			})
		}
		for _, fd := range opened {
			_ = syscall.Close(fd)
		}
	}
}

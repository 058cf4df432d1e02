// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package rawfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadAllGrowsAndReuses(t *testing.T) {
	dir := t.TempDir()
	want := bytes.Repeat([]byte("0123456789"), 2000) // larger than the buffer
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), want, 0o600))
	p := Path(nil, dir, "f")
	assert.Equal(t, filepath.Join(dir, "f"), String(p))
	fd, err := Open(p)
	require.NoError(t, err)
	got, err := ReadAll(fd, make([]byte, 0, 16))
	Close(fd)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	_, err = Open(Path(p, dir, "missing"))
	assert.ErrorIs(t, err, syscall.ENOENT)
	_, err = Open([]byte("no-nul"))
	assert.ErrorIs(t, err, syscall.EINVAL)
}

func TestOpenReadAllocatesNothing(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte("usage_usec 1\n"), 0o600))
	p := Path(make([]byte, 0, 256), dir, "f")
	buf := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(100, func() {
		fd, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		buf, _ = ReadAll(fd, buf)
		Close(fd)
	})
	assert.Zero(t, allocs)
}

func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file"), nil, 0o600))
	for i := 0; i < 300; i++ { // more entries than one 8 KiB getdents call holds
		require.NoError(t, os.Mkdir(filepath.Join(dir, "d"+strconv.Itoa(i)+strings.Repeat("x", 40)), 0o755))
	}
	got := map[string]bool{}
	require.NoError(t, ReadDir(Path(nil, dir, ""), make([]byte, 8192), func(name []byte, isDir bool) {
		got[string(name)] = isDir
	}))
	assert.Len(t, got, 302)
	assert.True(t, got["sub"])
	assert.False(t, got["file"])
	err := ReadDir(Path(nil, dir, "missing"), nil, func([]byte, bool) {})
	assert.ErrorIs(t, err, syscall.ENOENT)

	buf := make([]byte, 8192)
	p := Path(nil, dir, "")
	allocs := testing.AllocsPerRun(20, func() {
		_ = ReadDir(p, buf, func([]byte, bool) {})
	})
	assert.Zero(t, allocs)
}

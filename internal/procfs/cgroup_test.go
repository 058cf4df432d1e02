// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCgroupHybrid(t *testing.T) {
	lines, err := parseCgroup([]byte("12:cpu,cpuacct:/kubepods/burstable/podx/abc\n1:name=systemd:/init.scope\n0::/a:b\n"))
	require.NoError(t, err)
	require.Len(t, lines, 3)
	assert.Equal(t, CgroupLine{HierarchyID: 12, Controllers: []string{"cpu", "cpuacct"}, Path: "/kubepods/burstable/podx/abc"}, lines[0])
	assert.Equal(t, []string{"name=systemd"}, lines[1].Controllers)
	assert.Equal(t, CgroupLine{HierarchyID: 0, Path: "/a:b"}, lines[2], "the path keeps its colons; v2 has no controllers")
}

func TestParseCgroupErrors(t *testing.T) {
	for _, in := range []string{"", "\n", "0:/x\n", "x::/y\n", "-1::/y\n", "01::/y\n", "0::relative\n"} {
		_, err := parseCgroup([]byte(in))
		assert.Error(t, err, "%q", in)
	}
}

func TestCgroupReadsFileAndNamesIt(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "proc", "42"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc", "42", "cgroup"), []byte("0::/x\n"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "proc", "43"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc", "43", "cgroup"), []byte("garbage\n"), 0o600))
	f := NewFS(root)
	lines, err := f.Cgroup(42)
	require.NoError(t, err)
	assert.Equal(t, "/x", lines[0].Path)
	_, err = f.Cgroup(43)
	require.ErrorContains(t, err, filepath.Join(root, "proc", "43", "cgroup"))
	_, err = f.Cgroup(44)
	require.ErrorIs(t, err, fs.ErrNotExist, "a gone process is recognizable: %v", err)
}

// FuzzParseCgroup: no panic, and what it accepts prints back to lines that
// parse to the same result.
func FuzzParseCgroup(f *testing.F) {
	f.Add([]byte("12:cpu,cpuacct:/kubepods/burstable/pod1/abc\n0::/kubepods.slice/x.scope\n"))
	f.Add([]byte("1:name=systemd:/\n"))
	f.Add([]byte("0::/a:b:c\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines, err := parseCgroup(data)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, l := range lines {
			b.WriteString(l.String() + "\n")
		}
		back, err := parseCgroup([]byte(b.String()))
		require.NoError(t, err)
		require.Equal(t, lines, back)
	})
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLoadavgTasks(t *testing.T) {
	n, err := parseLoadavgTasks([]byte("0.20 0.18 0.12 3/811 11206\n"))
	require.NoError(t, err)
	assert.Equal(t, uint64(811), n)
	for _, bad := range []string{"", "0.20 0.18 0.12", "0.20 0.18 0.12 811 11206", "0.20 0.18 0.12 3/x 1", "0.20 0.18 0.12 3/-1 1"} {
		_, err := parseLoadavgTasks([]byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}

func TestTasksAndLimit(t *testing.T) {
	root := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(root, "proc", rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o600))
	}
	f := NewFS(root)
	_, err := f.Tasks()
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = f.TaskLimit()
	require.ErrorIs(t, err, fs.ErrNotExist, "neither file: absent, never 0")

	write("loadavg", "1.00 2.00 3.00 4/567 8910\n")
	n, err := f.Tasks()
	require.NoError(t, err)
	assert.Equal(t, uint64(567), n)

	write("sys/kernel/threads-max", "191234\n")
	lim, err := f.TaskLimit()
	require.NoError(t, err)
	assert.Equal(t, uint64(191234), lim, "threads-max alone")
	write("sys/kernel/pid_max", "4194304\n")
	lim, err = f.TaskLimit()
	require.NoError(t, err)
	assert.Equal(t, uint64(191234), lim, "the lower of the two")
	write("sys/kernel/pid_max", "32768\n")
	lim, err = f.TaskLimit()
	require.NoError(t, err)
	assert.Equal(t, uint64(32768), lim, "the lower of the two")
	write("sys/kernel/pid_max", "lots\n")
	_, err = f.TaskLimit()
	require.ErrorContains(t, err, "pid_max")
}

func FuzzParseLoadavgTasks(f *testing.F) {
	f.Add([]byte("0.20 0.18 0.12 3/811 11206\n"))
	f.Add([]byte("0 0 0 /\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := parseLoadavgTasks(data)
		if err != nil {
			return
		}
		back, err := parseLoadavgTasks([]byte(fmt.Sprintf("0 0 0 1/%d 1", n)))
		require.NoError(t, err)
		require.Equal(t, n, back)
	})
}

func FuzzParseSysctlUint(f *testing.F) {
	f.Add([]byte("4194304\n"))
	f.Add([]byte(" -1 "))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parseSysctlUint(data)
		if err != nil {
			return
		}
		back, err := parseSysctlUint([]byte(fmt.Sprintf("%d\n", v)))
		require.NoError(t, err)
		require.Equal(t, v, back)
	})
}

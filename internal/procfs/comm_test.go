// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseComm(t *testing.T) {
	for in, want := range map[string]string{
		"kubelet\n":                     "kubelet",
		"containerd-shim\n":             "containerd-shim",
		"\n":                            "", // prctl(PR_SET_NAME, "")
		"a\nb\n":                        "a\nb",
		"kworker/u8:2-events_unbound\n": "kworker/u8:2-events_unbound",
	} {
		got, err := parseComm([]byte(in))
		require.NoError(t, err, "%q", in)
		assert.Equal(t, want, got, "%q", in)
	}
	for _, in := range []string{"", "kubelet", strings.Repeat("x", maxComm+1) + "\n"} {
		_, err := parseComm([]byte(in))
		assert.Error(t, err, "%q", in)
	}
}

func TestCommAndPIDs(t *testing.T) {
	root := t.TempDir()
	for pid, comm := range map[string]string{"1": "systemd\n", "42": "kubelet\n", "43": "kubelet"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, "proc", pid), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, "proc", pid, "comm"), []byte(comm), 0o600))
	}
	for _, d := range []string{"self", "sys", "0", "042", "-5", "4x"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, "proc", d), 0o755))
	}
	f := NewFS(root)
	pids, err := f.PIDs([]int{7})
	require.NoError(t, err)
	slices.Sort(pids[1:])
	assert.Equal(t, []int{7, 1, 42, 43}, pids, "appended to dst; only canonical decimal names")

	name, err := f.Comm(42)
	require.NoError(t, err)
	assert.Equal(t, "kubelet", name)
	_, err = f.Comm(43)
	require.ErrorContains(t, err, filepath.Join(root, "proc", "43", "comm"), "a malformed file is named")
	_, err = f.Comm(44)
	require.ErrorIs(t, err, fs.ErrNotExist, "a gone process is recognizable: %v", err)
	_, err = NewFS(filepath.Join(root, "nothing")).PIDs(nil)
	require.Error(t, err)
}

func TestParsePID(t *testing.T) {
	for in, want := range map[string]int{"1": 1, "4194304": 4194304, "2147483647": 1<<31 - 1} {
		got, ok := parsePID([]byte(in))
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "0", "01", "+1", "-1", "1a", "self", "2147483648", "99999999999"} {
		_, ok := parsePID([]byte(in))
		assert.False(t, ok, in)
	}
}

// FuzzParseComm: no panic, and what it accepts is the name plus the
// kernel's newline (round trip).
func FuzzParseComm(f *testing.F) {
	f.Add([]byte("kubelet\n"))
	f.Add([]byte("containerd-shim\n"))
	f.Add([]byte("a\nb"))
	f.Fuzz(func(t *testing.T, data []byte) {
		name, err := parseComm(data)
		if err != nil {
			return
		}
		require.Equal(t, string(data), name+"\n")
		back, err := parseComm([]byte(name + "\n"))
		require.NoError(t, err)
		require.Equal(t, name, back)
	})
}

// FuzzParsePID: no panic, and an accepted name is the canonical decimal
// form of a positive PID (round trip through strconv).
func FuzzParsePID(f *testing.F) {
	f.Add([]byte("4242"))
	f.Add([]byte("0"))
	f.Add([]byte("2147483648"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pid, ok := parsePID(data)
		if !ok {
			return
		}
		require.Positive(t, pid)
		require.Equal(t, string(data), strconv.Itoa(pid))
	})
}

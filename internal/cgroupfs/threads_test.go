// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseIDList(t *testing.T) {
	got, err := parseIDList([]byte("12\n7\n\n2147483647\n"), []int{1})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 12, 7, 2147483647}, got)
	got, err = parseIDList(nil, nil)
	require.NoError(t, err)
	assert.Empty(t, got)
	for _, bad := range []string{"x\n", "1 2\n", "-3\n", "2147483648\n"} {
		_, err := parseIDList([]byte(bad), nil)
		require.ErrorIs(t, err, errMalformed, "%q", bad)
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(s), 0o600))
}

// Threads on v2 reads cgroup.threads of the cgroup and its sub-cgroups; a
// cgroup without a thread list has no data (ok false); a missing cgroup is
// ErrVanished.
func TestThreadsV2Recursive(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "sys/fs/cgroup")
	write(t, filepath.Join(base, "cgroup.controllers"), "cpu\n")
	write(t, filepath.Join(base, "ctr/cgroup.threads"), "10\n11\n")
	write(t, filepath.Join(base, "ctr/sub/cgroup.threads"), "12\n")
	write(t, filepath.Join(base, "ctr/sub/deeper/cgroup.threads"), "13\n")
	require.NoError(t, os.MkdirAll(filepath.Join(base, "nolist"), 0o755))
	l, err := Detect(root)
	require.NoError(t, err)
	r := NewReader(l)
	tids, ok, err := r.Threads("/ctr", nil)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.ElementsMatch(t, []int{10, 11, 12, 13}, tids)
	_, ok, err = r.Threads("/nolist", nil)
	require.NoError(t, err)
	assert.False(t, ok)
	_, _, err = r.Threads("/gone", nil)
	require.ErrorIs(t, err, ErrVanished)
	write(t, filepath.Join(base, "ctr/sub/cgroup.threads"), "12\nbad\n")
	_, _, err = r.Threads("/ctr", nil)
	require.ErrorIs(t, err, errMalformed)
	assert.Contains(t, err.Error(), filepath.Join("ctr", "sub", "cgroup.threads"))
}

// FuzzParseIDList: no panic; the IDs printed one per line parse back equal.
func FuzzParseIDList(f *testing.F) {
	f.Add([]byte("1\n22\n333\n"))
	f.Add([]byte("\n\n4"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ids, err := parseIDList(data, nil)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, id := range ids {
			fmt.Fprintf(&b, "%d\n", id)
		}
		back, err := parseIDList([]byte(b.String()), nil)
		require.NoError(t, err)
		require.Len(t, back, len(ids))
		for i := range ids {
			require.Equal(t, ids[i], back[i])
		}
	})
}

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

// Pids on v2: current and a finite max; "max" is unlimited; a cgroup
// without the pids controller has neither; garbage names the file.
func TestPidsV2(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "sys/fs/cgroup")
	write(t, filepath.Join(base, "cgroup.controllers"), "cpu pids\n")
	write(t, filepath.Join(base, "a/pids.current"), "7\n")
	write(t, filepath.Join(base, "a/pids.max"), "4096\n")
	write(t, filepath.Join(base, "b/pids.current"), "3\n")
	write(t, filepath.Join(base, "b/pids.max"), "max\n")
	require.NoError(t, os.MkdirAll(filepath.Join(base, "nopids"), 0o755))
	l, err := Detect(root)
	require.NoError(t, err)
	r := NewReader(l)

	p, err := r.Pids("/a")
	require.NoError(t, err)
	assert.Equal(t, Some(7), p.Current)
	assert.Equal(t, Limit{V: 4096, OK: true}, p.Max)
	assert.True(t, p.Max.Finite())

	p, err = r.Pids("/b")
	require.NoError(t, err)
	assert.Equal(t, Some(3), p.Current)
	assert.True(t, p.Max.OK && p.Max.Unlimited, "max is unlimited, not a number")

	p, err = r.Pids("/nopids")
	require.NoError(t, err)
	assert.False(t, p.Current.OK, "absent, not 0")
	assert.False(t, p.Max.OK)

	write(t, filepath.Join(base, "a/pids.current"), "seven\n")
	_, err = r.Pids("/a")
	require.ErrorIs(t, err, errMalformed)
	assert.Contains(t, err.Error(), filepath.Join("a", "pids.current"))
}

// Pids on v1 and hybrid reads the v1 pids hierarchy; a cgroup the pids
// hierarchy does not hold is absent, not vanished; without a pids
// hierarchy a hybrid node falls back to the unified tree.
func TestPidsV1AndHybrid(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "sys/fs/cgroup")
	write(t, filepath.Join(base, "memory/cgroup.procs"), "")
	write(t, filepath.Join(base, "pids/cgroup.procs"), "")
	write(t, filepath.Join(base, "pids/k/pids.current"), "12\n")
	write(t, filepath.Join(base, "pids/k/pids.max"), "max\n")
	write(t, filepath.Join(base, "unified/cgroup.controllers"), "")
	write(t, filepath.Join(base, "unified/k/pids.current"), "99\n")
	l, err := Detect(root)
	require.NoError(t, err)
	require.Equal(t, ModeHybrid, l.Mode)
	r := NewReader(l)
	p, err := r.Pids("/k")
	require.NoError(t, err)
	assert.Equal(t, Some(12), p.Current, "v1 pids hierarchy wins")
	assert.True(t, p.Max.Unlimited)
	p, err = r.Pids("/elsewhere")
	require.NoError(t, err)
	assert.Equal(t, PidsStat{}, p)

	require.NoError(t, os.RemoveAll(filepath.Join(base, "pids")))
	l, err = Detect(root)
	require.NoError(t, err)
	p, err = NewReader(l).Pids("/k")
	require.NoError(t, err)
	assert.Equal(t, Some(99), p.Current, "unified tree when no v1 pids hierarchy")
	assert.False(t, p.Max.OK)
}

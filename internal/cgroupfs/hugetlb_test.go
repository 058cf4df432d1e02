// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The kernel's names (mem_fmt in mm/hugetlb_cgroup.c) for the sizes of
// x86-64, arm64 (64KB, 32MB, 16GB contiguous pages) and ppc64 (16MB).
func TestParseHugePageDir(t *testing.T) {
	for dir, want := range map[string]HugePageSize{
		"hugepages-2048kB":     {"2MB", 2 << 20},
		"hugepages-1048576kB":  {"1GB", 1 << 30},
		"hugepages-64kB":       {"64KB", 64 << 10},
		"hugepages-32768kB":    {"32MB", 32 << 20},
		"hugepages-16384kB":    {"16MB", 16 << 20},
		"hugepages-16777216kB": {"16GB", 16 << 30},
	} {
		got, err := parseHugePageDir(dir)
		require.NoError(t, err, dir)
		assert.Equal(t, want, got, dir)
	}
	for _, bad := range []string{"hugepages-", "hugepages-kB", "hugepages-2048", "hugepages-0kB", "hugepages-x2kB", "hugepages-99999999999999999999kB"} {
		_, err := parseHugePageDir(bad)
		require.ErrorIs(t, err, errMalformed, bad)
	}
}

var hugeName = regexp.MustCompile(`^[1-9][0-9]*(KB|MB|GB)$`)

// FuzzParseHugePageDir: no panic; a parsed size is named as the kernel
// names it, and the name times its unit is the size rounded down to that
// unit (the kernel's integer division), so a whole-unit size round-trips.
func FuzzParseHugePageDir(f *testing.F) {
	f.Add("hugepages-2048kB")
	f.Add("hugepages-1048576kB")
	f.Add("hugepages-64kB")
	f.Add("hugepages-1536kB")
	f.Fuzz(func(t *testing.T, dir string) {
		s, err := parseHugePageDir(dir)
		if err != nil {
			return
		}
		require.Regexp(t, hugeName, s.Name)
		n, err := strconv.ParseUint(s.Name[:len(s.Name)-2], 10, 64)
		require.NoError(t, err)
		unit := map[string]uint64{"KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}[s.Name[len(s.Name)-2:]]
		require.Equal(t, s.Bytes/unit, n)
		again, err := parseHugePageDir("hugepages-" + strconv.FormatUint(s.Bytes>>10, 10) + "kB")
		require.NoError(t, err, "the canonical directory name of a parsed size parses")
		require.Equal(t, s, again)
	})
}

func TestHugePageSizes(t *testing.T) {
	root := t.TempDir()
	sizes, err := HugePageSizes(root)
	require.NoError(t, err)
	assert.Empty(t, sizes, "no sysfs directory: no sizes, no error")
	for _, d := range []string{"hugepages-1048576kB", "hugepages-2048kB"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, "sys/kernel/mm/hugepages", d), 0o755))
	}
	sizes, err = HugePageSizes(root)
	require.NoError(t, err)
	assert.Equal(t, []HugePageSize{{"2MB", 2 << 20}, {"1GB", 1 << 30}}, sizes)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys/kernel/mm/hugepages", "hugepages-xkB"), 0o755))
	_, err = HugePageSizes(root)
	require.ErrorIs(t, err, errMalformed)
	assert.Contains(t, err.Error(), "hugepages-xkB")
}

var twoSizes = []HugePageSize{{"2MB", 2 << 20}, {"1GB", 1 << 30}}

// v2 (and a hybrid node's unified tree): .current and .max; "max" is
// unlimited; a cgroup without the controller has no file, so no value; a
// limit is not read unless asked; garbage names the file.
func TestHugetlbV2(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "sys/fs/cgroup")
	write(t, filepath.Join(base, "cgroup.controllers"), "cpu hugetlb\n")
	write(t, filepath.Join(base, "a/hugetlb.2MB.current"), "4194304\n")
	write(t, filepath.Join(base, "a/hugetlb.2MB.max"), "8388608\n")
	write(t, filepath.Join(base, "a/hugetlb.1GB.current"), "0\n")
	write(t, filepath.Join(base, "a/hugetlb.1GB.max"), "max\n")
	require.NoError(t, os.MkdirAll(filepath.Join(base, "none"), 0o755))
	l, err := Detect(root)
	require.NoError(t, err)
	r := NewReader(l)

	h, err := r.Hugetlb("/a", twoSizes, true, nil)
	require.NoError(t, err)
	assert.Equal(t, []Hugetlb{
		{Size: "2MB", Usage: Some(4194304), Limit: Limit{V: 8388608, OK: true}},
		{Size: "1GB", Usage: Some(0), Limit: Limit{OK: true, Unlimited: true}},
	}, h)
	h, err = r.Hugetlb("/a", twoSizes, false, h)
	require.NoError(t, err)
	assert.False(t, h[0].Limit.OK, "limit not read")

	h, err = r.Hugetlb("/none", twoSizes, true, h)
	require.NoError(t, err)
	assert.Empty(t, h, "no files: absent, not 0")
	h, err = r.Hugetlb("/gone", twoSizes, true, h)
	require.NoError(t, err)
	assert.Empty(t, h)

	write(t, filepath.Join(base, "a/hugetlb.2MB.current"), "lots\n")
	_, err = r.Hugetlb("/a", twoSizes, true, nil)
	require.ErrorIs(t, err, errMalformed)
	assert.Contains(t, err.Error(), filepath.Join("a", "hugetlb.2MB.current"))
}

// v1: the hugetlb hierarchy's usage_in_bytes / limit_in_bytes, the
// default page-rounded LONG_MAX limit unlimited; the root has files too.
// A hybrid node without a v1 hugetlb hierarchy reads the unified tree.
func TestHugetlbV1AndHybrid(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "sys/fs/cgroup")
	write(t, filepath.Join(base, "memory/cgroup.procs"), "")
	write(t, filepath.Join(base, "hugetlb/cgroup.procs"), "")
	write(t, filepath.Join(base, "hugetlb/hugetlb.2MB.usage_in_bytes"), "6291456\n")
	write(t, filepath.Join(base, "hugetlb/k/hugetlb.2MB.usage_in_bytes"), "2097152\n")
	write(t, filepath.Join(base, "hugetlb/k/hugetlb.2MB.limit_in_bytes"), "9223372036854771712\n")
	l, err := Detect(root)
	require.NoError(t, err)
	r := NewReader(l)
	h, err := r.Hugetlb("/", twoSizes[:1], false, nil)
	require.NoError(t, err)
	assert.Equal(t, []Hugetlb{{Size: "2MB", Usage: Some(6291456)}}, h)
	h, err = r.Hugetlb("/k", twoSizes, true, nil)
	require.NoError(t, err)
	assert.Equal(t, []Hugetlb{{Size: "2MB", Usage: Some(2097152), Limit: Limit{V: 9223372036854771712, OK: true, Unlimited: true}}}, h)

	require.NoError(t, os.RemoveAll(filepath.Join(base, "hugetlb")))
	write(t, filepath.Join(base, "unified/cgroup.controllers"), "hugetlb\n")
	write(t, filepath.Join(base, "unified/k/hugetlb.2MB.current"), "10485760\n")
	l, err = Detect(root)
	require.NoError(t, err)
	require.Equal(t, ModeHybrid, l.Mode)
	h, err = NewReader(l).Hugetlb("/k", twoSizes, false, nil)
	require.NoError(t, err)
	assert.Equal(t, []Hugetlb{{Size: "2MB", Usage: Some(10485760)}}, h)
}

// Procs lists cgroup.procs of the cgroup and its sub-cgroups.
func TestProcs(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "sys/fs/cgroup")
	write(t, filepath.Join(base, "cgroup.controllers"), "cpu\n")
	write(t, filepath.Join(base, "c/cgroup.procs"), "10\n11\n")
	write(t, filepath.Join(base, "c/sub/cgroup.procs"), "12\n")
	l, err := Detect(root)
	require.NoError(t, err)
	pids, ok, err := NewReader(l).Procs("/c", nil)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.ElementsMatch(t, []int{10, 11, 12}, pids)
	_, _, err = NewReader(l).Procs("/gone", nil)
	require.ErrorIs(t, err, ErrVanished)
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// CPU and CPUBandwidth on v2 share one read of cpu.stat per cgroup: the
// copy CPU keeps serves the same cgroup's CPUBandwidth only, never
// another's.
func TestCPUStatV2CopyIsPerCgroup(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "sys/fs/cgroup")
	write(t, filepath.Join(base, "cgroup.controllers"), "cpu\n")
	write(t, filepath.Join(base, "a/cpu.stat"), "usage_usec 11\nuser_usec 7\nsystem_usec 3\nnr_periods 13\nnr_throttled 5\nthrottled_usec 17\n")
	write(t, filepath.Join(base, "b/cpu.stat"), "usage_usec 23\nuser_usec 19\nsystem_usec 2\nnr_periods 29\nnr_throttled 31\nthrottled_usec 37\n")
	l, err := Detect(root)
	require.NoError(t, err)
	r := NewReader(l)
	want := CPUWant{Throttling: true}

	c, err := r.CPU("/a")
	require.NoError(t, err)
	assert.Equal(t, CPUStat{Usage: Some(11000), User: Some(7000), System: Some(3000)}, c)
	b, err := r.CPUBandwidth("/b", want)
	require.NoError(t, err)
	assert.Equal(t, CPUBandwidth{Periods: Some(29), ThrottledPeriods: Some(31), ThrottledTime: Some(37000)}, b, "b's own file, not a's copy")
	b, err = r.CPUBandwidth("/a", want)
	require.NoError(t, err)
	assert.Equal(t, CPUBandwidth{Periods: Some(13), ThrottledPeriods: Some(5), ThrottledTime: Some(17000)}, b)
}

// CPU on v1: cpuacct.usage, usage_user and usage_sys in ns; without the
// two mode files (kernels before 4.7) the modes come from cpuacct.stat's
// ticks (USER_HZ 100: 10 ms a tick); a cgroup without cpuacct.usage has no
// usage, not 0; without a cpuacct hierarchy there is nothing.
func TestCPUV1(t *testing.T) {
	r := memTree(t, false, map[string]string{
		"cpuacct/cgroup.procs":         "",
		"cpuacct/a/cpuacct.usage":      "1000003\n",
		"cpuacct/a/cpuacct.usage_user": "600007\n",
		"cpuacct/a/cpuacct.usage_sys":  "300011\n",
		"cpuacct/a/cpuacct.stat":       "user 99\nsystem 98\n",
		"cpuacct/old/cpuacct.usage":    "5000013\n",
		"cpuacct/old/cpuacct.stat":     "user 3\nsystem 7\n",
		"cpuacct/none/cpuacct.stat":    "user 5\nsystem 2\n",
	})
	c, err := r.CPU("/a")
	require.NoError(t, err)
	assert.Equal(t, CPUStat{Usage: Some(1000003), User: Some(600007), System: Some(300011)}, c, "the precise files, not the ticks")
	c, err = r.CPU("/old")
	require.NoError(t, err)
	assert.Equal(t, CPUStat{Usage: Some(5000013), User: Some(30_000_000), System: Some(70_000_000)}, c)
	c, err = r.CPU("/none")
	require.NoError(t, err)
	assert.Equal(t, CPUStat{User: Some(50_000_000), System: Some(20_000_000)}, c, "no usage file: absent, not 0")
	_, err = r.CPU("/elsewhere")
	require.ErrorIs(t, err, ErrVanished)
	c, err = memTree(t, false, map[string]string{}).CPU("/a")
	require.NoError(t, err)
	assert.Equal(t, CPUStat{}, c, "no cpuacct hierarchy: nothing")
}

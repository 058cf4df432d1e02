// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memTree writes files (path relative to root/sys/fs/cgroup -> content) and
// returns a Reader on it. v1 trees get a memory hierarchy, v2 trees a
// cgroup.controllers at the base.
func memTree(t *testing.T, v2 bool, files map[string]string) *Reader {
	t.Helper()
	root := t.TempDir()
	base := filepath.Join(root, "sys", "fs", "cgroup")
	if v2 {
		files["cgroup.controllers"] = "cpu memory\n"
	} else {
		files["memory/cgroup.procs"] = ""
	}
	for p, c := range files {
		full := filepath.Join(base, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o600))
	}
	l, err := Detect(root)
	require.NoError(t, err)
	return NewReader(l)
}

// v1 keys mapped to distinct values, pgfault > pgmajfault as on a real kernel.
const v1Stat = `cache 1001
rss 1002
mapped_file 1003
shmem 1009
pgfault 1004
pgmajfault 1005
inactive_file 1006
workingset_refault_anon 1007
workingset_refault_file 1008
total_cache 52428800
total_rss 41943040
total_rss_huge 2097152
total_mapped_file 8388608
total_shmem 12288
total_swap 1048576
total_pgfault 7654321
total_pgmajfault 4321
total_inactive_anon 4096
total_active_anon 41938944
total_inactive_file 20971520
total_active_file 31457280
total_workingset_refault_anon 6001
total_workingset_refault_file 6002
`

func TestMemoryV1Mapping(t *testing.T) {
	r := memTree(t, false, map[string]string{
		"memory/pod/c/memory.usage_in_bytes":        "99614720\n",
		"memory/pod/c/memory.stat":                  v1Stat,
		"memory/pod/c/memory.memsw.usage_in_bytes":  "100663296\n",
		"memory/pod/c/memory.limit_in_bytes":        "268435456\n",
		"memory/pod/c/memory.oom_control":           "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n",
		"memory/pod/memory.usage_in_bytes":          "104857600\n",
		"memory/pod/memory.stat":                    v1Stat,
		"memory/pod/memory.memsw.usage_in_bytes":    "104853504\n", // read before usage grew: floored
		"memory/pod/memory.limit_in_bytes":          "9223372036854771712\n",
		"memory/pod/memory.oom_control":             "oom_kill_disable 0\nunder_oom 0\n", // Linux < 4.13
		"memory/pod/nomemsw/memory.usage_in_bytes":  "4096\n",
		"memory/pod/nomemsw/memory.stat":            "total_rss 4096\n",
		"memory/pod/nomemsw/memory.limit_in_bytes":  "4096000\n",
		"memory/pod/nomemsw/memory.oom_control":     "oom_kill_disable 0\nunder_oom 1\noom_kill 7\n",
		"memory/pod/nomemsw/sub/memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 11\n",
	})
	got, err := r.Memory("/pod/c", MemoryAll)
	require.NoError(t, err)
	assert.Equal(t, MemoryStat{
		Usage:        Some(99614720),
		InactiveFile: Some(20971520),
		Anon:         Some(41943040),
		File:         Some(52428800),
		MappedFile:   Some(8388608),
		Shmem:        Some(12288),
		Swap:         Some(1048576),
		Limit:        Limit{V: 268435456, OK: true},
		OOMKills:     Some(3),
		PgFault:      Some(7654321),
		PgMajFault:   Some(4321),
		RefaultAnon:  Some(6001),
		RefaultFile:  Some(6002),
	}, got)

	got, err = r.Memory("/pod", MemoryAll)
	require.NoError(t, err)
	assert.Equal(t, Some(0), got.Swap, "memsw below usage (two reads) floors at 0")
	assert.False(t, got.Limit.Finite(), "page-rounded LONG_MAX is no limit")
	assert.False(t, got.OOMKills.OK, "no oom_kill key: no value, not 0")

	got, err = r.Memory("/pod/nomemsw", MemoryAll)
	require.NoError(t, err)
	assert.False(t, got.Swap.OK, "no memsw (swap accounting off): no swap value")
	assert.False(t, got.InactiveFile.OK)
	assert.False(t, got.RefaultAnon.OK, "no refault keys (Linux < 5.9): no value, not 0")
	assert.False(t, got.RefaultFile.OK)

	kills := map[string]uint64{}
	require.NoError(t, r.OOMKillsTreeV1("/pod", nil, func(rel string, v uint64) { kills[rel] = v }))
	assert.Equal(t, map[string]uint64{"/pod/c": 3, "/pod/nomemsw": 7, "/pod/nomemsw/sub": 11}, kills)
	require.ErrorIs(t, r.OOMKillsTreeV1("/gone", nil, func(string, uint64) {}), ErrVanished)
	// Counters the caller read a moment ago are not read again: a known
	// value (distinct from the file's) is what the walk reports, the
	// others come from the files, the subtree is walked as before.
	kills = map[string]uint64{}
	require.NoError(t, r.OOMKillsTreeV1("/pod", map[string]uint64{"/pod/c": 300, "/pod": 5},
		func(rel string, v uint64) { kills[rel] = v }))
	assert.Equal(t, map[string]uint64{"/pod": 5, "/pod/c": 300, "/pod/nomemsw": 7, "/pod/nomemsw/sub": 11}, kills)
}

func TestMemoryV2Mapping(t *testing.T) {
	stat := "anon 41943040\nfile 52428800\nfile_mapped 8388608\ninactive_file 20971520\nactive_file 31457280\npgfault 7654321\npgmajfault 4321\nshmem 4096\nworkingset_refault_anon 5001\nworkingset_refault_file 5002\n"
	r := memTree(t, true, map[string]string{
		"pod/c/memory.current":      "99614720\n",
		"pod/c/memory.stat":         stat,
		"pod/c/memory.swap.current": "1048576\n",
		"pod/c/memory.max":          "268435456\n",
		"pod/c/memory.events":       "low 1\nhigh 2\nmax 30\noom 4\noom_kill 3\noom_group_kill 0\n",
		"pod/memory.current":        "104857600\n",
		"pod/memory.stat":           stat,
		"pod/memory.max":            "max\n",
		"bad/memory.current":        "1\n",
		"bad/memory.events":         "oom_kill three\n",
	})
	got, err := r.Memory("/pod/c", MemoryAll)
	require.NoError(t, err)
	assert.Equal(t, MemoryStat{
		Usage:        Some(99614720),
		InactiveFile: Some(20971520),
		Anon:         Some(41943040),
		File:         Some(52428800),
		MappedFile:   Some(8388608),
		Shmem:        Some(4096),
		Swap:         Some(1048576),
		Limit:        Limit{V: 268435456, OK: true},
		OOMKills:     Some(3),
		PgFault:      Some(7654321),
		PgMajFault:   Some(4321),
		RefaultAnon:  Some(5001),
		RefaultFile:  Some(5002),
	}, got)

	got, err = r.Memory("/pod", MemoryAll)
	require.NoError(t, err)
	assert.Equal(t, Limit{OK: true, Unlimited: true}, got.Limit, `"max" is no limit`)
	assert.False(t, got.Swap.OK, "no memory.swap.current: no swap value, not 0")
	assert.False(t, got.OOMKills.OK, "no memory.events: no value")

	_, err = r.Memory("/bad", MemoryAll)
	require.ErrorIs(t, err, errMalformed)
	assert.Contains(t, err.Error(), "memory.events")

	_, err = r.Memory("/gone", MemoryAll)
	require.ErrorIs(t, err, ErrVanished)

	var none []string
	require.NoError(t, r.OOMKillsTreeV1("/pod", nil, func(rel string, _ uint64) { none = append(none, rel) }))
	sort.Strings(none)
	assert.Empty(t, none, "v2 counters are hierarchical already: no walk")
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseStatState(t *testing.T) {
	cases := map[string]byte{
		"1 (systemd) S 0 1 1 0 -1 4194560\n":    'S',
		"42 (a) b) (c) R 1 2 3\n":               'R', // comm with ") (" inside
		"7 (kworker/0:1-events) I 2 0 0 0 -1\n": 'I',
		"9 (x) D":                               'D',
		"10 (() t 1\n":                          't',
		"11 (sh) Z 1 0 0\n":                     'Z',
		"12 (sp ace) T 1\n":                     'T',
	}
	for in, want := range cases {
		got, err := parseStatState([]byte(in))
		require.NoError(t, err, in)
		assert.Equal(t, string(want), string(got), in)
	}
	for _, bad := range []string{"", "1 sleeping S 1", "1 (x)", "1 (x)S 1", "1 (x) 5 1", "1 (x) SS 1", ") S 1"} {
		_, err := parseStatState([]byte(bad))
		require.ErrorIs(t, err, errMalformedStat, "%q", bad)
	}
}

func TestStateOf(t *testing.T) {
	for c, want := range map[byte]TaskState{
		'R': StateRunning, 'S': StateSleeping, 'D': StateUninterruptible, 'T': StateStopped,
		't': StateStopped, 'I': StateIdle, 'Z': StateZombie, 'X': StateOther, 'W': StateOther, 'P': StateOther,
	} {
		assert.Equal(t, want, stateOf(c), string(c))
	}
}

// writeStat writes <root>/proc/<tid>/stat with the given state.
func writeStat(tb testing.TB, root string, tid int, state byte) {
	tb.Helper()
	dir := filepath.Join(root, "proc", strconv.Itoa(tid))
	require.NoError(tb, os.MkdirAll(dir, 0o755))
	line := fmt.Sprintf("%d (worker %d) %c 1 1 1 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 0 100 1000 10\n", tid, tid, state)
	require.NoError(tb, os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o600))
}

func TestTaskStateReaderCount(t *testing.T) {
	root := t.TempDir()
	states := []byte("RRRSSDTtIZX")
	tids := make([]int, 0, len(states)+1)
	for i, c := range states {
		writeStat(t, root, 100+i, c)
		tids = append(tids, 100+i)
	}
	tids = append(tids, 999) // exited between listing and read: skipped
	r := NewFS(root).NewTaskStateReader()
	var got TaskCounts
	require.NoError(t, r.Count(tids, &got))
	assert.Equal(t, TaskCounts{StateRunning: 3, StateSleeping: 2, StateUninterruptible: 1, StateStopped: 2, StateIdle: 1, StateZombie: 1}, got)

	// A malformed file is an error naming it; the other threads still count.
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc", "101", "stat"), []byte("garbage"), 0o600))
	got = TaskCounts{}
	err := r.Count(tids, &got)
	require.ErrorIs(t, err, errMalformedStat)
	assert.Contains(t, err.Error(), filepath.Join("proc", "101", "stat"))
	assert.Equal(t, int64(2), got[StateRunning])
}

// A stat line longer than the initial buffer (a long comm cannot happen, but
// the file has ~52 fields) still parses.
func TestTaskStateReaderLongLine(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "proc", "5")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	line := "5 (x) D " + string(bytes.Repeat([]byte("123 "), 400)) + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o600))
	st, ok, err := NewFS(root).NewTaskStateReader().State(5)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, StateUninterruptible, st)
}

// The real /proc: this process's main thread is alive and has a state.
func TestTaskStateReaderRealProc(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	_, ok, err := NewFS("/").NewTaskStateReader().State(os.Getpid())
	require.NoError(t, err)
	assert.True(t, ok)
}

func BenchmarkTaskStateReader(b *testing.B) {
	root := b.TempDir()
	const n = 1000
	tids := make([]int, n)
	for i := range tids {
		tids[i] = 1000 + i
		writeStat(b, root, tids[i], "RSDI"[i%4])
	}
	r := NewFS(root).NewTaskStateReader()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var c TaskCounts
		if err := r.Count(tids, &c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/thread")
}

// FuzzParseStatState: no panic; a state it finds is a letter, and printing
// "pid (comm) <state> ..." with the comm it skipped parses back to it.
func FuzzParseStatState(f *testing.F) {
	f.Add([]byte("1 (systemd) S 0 1 1\n"))
	f.Add([]byte("42 (a) b) (c) R 1\n"))
	f.Add([]byte("9 (x) D"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseStatState(data)
		if err != nil {
			return
		}
		require.True(t, isLetter(c))
		i := bytes.LastIndexByte(data, ')')
		comm := data[bytes.IndexByte(data, '(')+1 : i]
		back, err := parseStatState([]byte(fmt.Sprintf("7 (%s) %c 1 2\n", comm, c)))
		require.NoError(t, err)
		require.Equal(t, c, back)
	})
}

// BenchmarkTaskStateReaderRealProc reads the states of this process's own
// threads from the real /proc.
func BenchmarkTaskStateReaderRealProc(b *testing.B) {
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		b.Skip("no /proc")
	}
	var tids []int
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, n)
		}
	}
	r := NewFS("/").NewTaskStateReader()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var c TaskCounts
		if err := r.Count(tids, &c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(tids)), "ns/thread")
}

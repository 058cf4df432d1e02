// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A stat line of a process whose comm holds spaces and parentheses; every
// field has a distinct value, starttime (22) is 987654.
const statLine = "4242 (sl) eep (x)) S 4241 4242 4242 0 -1 4194560 101 0 102 0 103 104 0 0 20 0 1 0 987654 4530176 105 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"

func TestParseStatStartTicks(t *testing.T) {
	v, err := parseStatStartTicks([]byte(statLine))
	require.NoError(t, err)
	assert.Equal(t, uint64(987654), v)
	for _, bad := range []string{
		"", "4242 sleep S 1", "4242 (sleep) S 1 2 3",
		"4242 (sleep) S 4241 4242 4242 0 -1 4194560 101 0 102 0 103 104 0 0 20 0 1 0 -5 4530176\n",
	} {
		_, err := parseStatStartTicks([]byte(bad))
		assert.ErrorIs(t, err, errMalformedStat, "%q", bad)
	}
}

func TestStartTime(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "proc", "4242"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc", "4242", "stat"), []byte(statLine), 0o600))
	boot := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	got, err := NewFS(root).StartTime(4242, boot)
	require.NoError(t, err)
	assert.Equal(t, boot.Add(9876540*time.Millisecond), got)
	_, err = NewFS(root).StartTime(4243, boot)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func FuzzParseStatStartTicks(f *testing.F) {
	f.Add([]byte(statLine))
	f.Add([]byte("1 (a) S"))
	f.Fuzz(func(_ *testing.T, data []byte) {
		_, _ = parseStatStartTicks(data) // never panics
	})
}

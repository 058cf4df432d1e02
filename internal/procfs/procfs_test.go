// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/opt"
)

func TestMeminfoFieldNotes(t *testing.T) {
	// The v2 node of field note 2.
	fs := NewFS(filepath.Join("..", "..", "testdata", "fixtures", "v2-cgroupfs"))
	m, err := fs.Meminfo()
	require.NoError(t, err)
	require.True(t, m.MemTotal.OK)
	assert.Equal(t, uint64(16374584*1024), m.MemTotal.V)
	assert.Equal(t, uint64(2568*1024), m.ActiveAnon.V)
	assert.Equal(t, uint64(791340*1024), m.InactiveAnon.V)
	assert.Equal(t, uint64(869852*1024), m.ActiveFile.V)
	assert.Equal(t, uint64(4608000*1024), m.InactiveFile.V)
}

func TestMeminfoAbsentFields(t *testing.T) {
	m, err := parseMeminfo([]byte("MemTotal: 10 kB\nHugePages_Total: 0\n"))
	require.NoError(t, err)
	assert.False(t, m.ActiveAnon.OK, "a field the kernel did not print is absent, not zero")
	_, err = parseMeminfo([]byte("Active(anon): x kB\n"))
	require.Error(t, err)
	_, err = parseMeminfo([]byte("Active(anon): 1 MB\n"))
	require.Error(t, err)
}

func TestBootTime(t *testing.T) {
	bt, err := NewFS(filepath.Join("..", "..", "testdata", "fixtures", "v1-cgroupfs")).BootTime()
	require.NoError(t, err)
	assert.Equal(t, time.Unix(1700000000, 0), bt)
	_, err = NewFS(t.TempDir()).BootTime()
	require.Error(t, err)
	_, err = parseBootTime([]byte("cpu 1 2\n"))
	require.Error(t, err)
}

func FuzzParseMeminfo(f *testing.F) {
	f.Add([]byte("MemTotal:       16374584 kB\nActive(anon):       2568 kB\nInactive(file):  4608000 kB\n"))
	f.Add([]byte("Active(file): 18014398509481983 kB\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseMeminfo(data)
		if err != nil || !m.ActiveAnon.OK {
			return
		}
		// Round trip in bytes (no unit).
		back, err := parseMeminfo([]byte(fmt.Sprintf("Active(anon): %d\n", m.ActiveAnon.V)))
		require.NoError(t, err)
		require.Equal(t, m.ActiveAnon.V, back.ActiveAnon.V)
	})
}

func FuzzParseBootTime(f *testing.F) {
	f.Add([]byte("cpu 1 2 3\nbtime 1700000000\n"))
	f.Add([]byte("btime -5\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		bt, err := parseBootTime(data)
		if err != nil {
			return
		}
		back, err := parseBootTime([]byte(fmt.Sprintf("btime %d\n", bt.Unix())))
		require.NoError(t, err)
		require.Equal(t, bt, back)
	})
}

func TestVmstat(t *testing.T) {
	v, err := parseVmstat([]byte("nr_free_pages 1\npgfault 52000001\npgmajfault 52003\noom_kill 5\npgsteal_kswapd 9\n"))
	require.NoError(t, err)
	require.True(t, v.PgFault.OK)
	assert.Equal(t, uint64(52000001), v.PgFault.V)
	assert.Equal(t, uint64(52003), v.PgMajFault.V)
	assert.Equal(t, uint64(5), v.OOMKill.V)

	v, err = parseVmstat([]byte("pgfault 7\n"))
	require.NoError(t, err)
	assert.False(t, v.OOMKill.OK, "a counter the kernel did not print is absent, not zero")
	_, err = parseVmstat([]byte("oom_kill -1\n"))
	require.Error(t, err)
	_, err = NewFS(t.TempDir()).Vmstat()
	require.Error(t, err)
}

// FuzzParseVmstat: no panic, and a kept counter prints back to itself.
func FuzzParseVmstat(f *testing.F) {
	f.Add([]byte("pgfault 52000001\npgmajfault 52003\noom_kill 5\n"))
	f.Add([]byte("oom_kill 18446744073709551615"))
	f.Add([]byte("pgfault x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parseVmstat(data)
		if err != nil {
			return
		}
		for _, p := range []opt.Value[uint64]{v.PgFault, v.PgMajFault, v.OOMKill} {
			if !p.OK {
				continue
			}
			back, err := parseVmstat([]byte(fmt.Sprintf("pgfault %d\n", p.V)))
			require.NoError(t, err)
			require.Equal(t, p, back.PgFault)
		}
	})
}

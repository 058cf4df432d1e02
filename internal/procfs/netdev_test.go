// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const netDevSample = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:    1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0          0
  eth0: 2000 21 3 4 5 6 7 8 9000 91 11 12 13 14 15 16
`

func TestParseNetDev(t *testing.T) {
	got, err := parseNetDev([]byte(netDevSample), nil)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, NetDev{Name: "lo", RxBytes: 1000, RxPackets: 10, TxBytes: 1000, TxPackets: 10}, got[0])
	assert.Equal(t, NetDev{
		Name: "eth0", RxBytes: 2000, RxPackets: 21, RxErrors: 3, RxDropped: 4,
		TxBytes: 9000, TxPackets: 91, TxErrors: 11, TxDropped: 12,
	}, got[1])

	for _, bad := range []string{"", "eth0: 1 2 3\n", netDevSample + "eth1: 1 2 3\n", netDevSample + "eth1: x 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n", netDevSample + " : 1\n"} {
		_, err := parseNetDev([]byte(bad), nil)
		assert.Error(t, err, "%q", bad)
	}
}

func TestNetDevReadAndGone(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "proc/42/net"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc/42/net/dev"), []byte(netDevSample), 0o600))
	f := NewFS(root)
	devs, ok, err := f.NetDev(42, nil)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Len(t, devs, 2)
	_, ok, err = f.NetDev(43, nil)
	require.NoError(t, err)
	assert.False(t, ok, "a gone process is no data")
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc/42/net/dev"), []byte("garbage"), 0o600))
	_, _, err = f.NetDev(42, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join("42", "net", "dev"))
}

func FuzzParseNetDev(f *testing.F) {
	f.Add([]byte(netDevSample))
	f.Add([]byte("a|b\nc\nx: 1 2 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		devs, err := parseNetDev(data, nil)
		if err == nil {
			for _, d := range devs {
				if d.Name == "" {
					t.Fatal("empty interface name")
				}
			}
		}
	})
}

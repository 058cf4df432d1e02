// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDiskStats(t *testing.T) {
	data := "   7       0 loop0 1 2 3 4 5 6 7 8 0 10 11 12 13 14 15 16 17\n" +
		" 254       0 vda 21 22 23 24 25 26 27 28 0 30 31 32 33 34 35\n" +
		"   8      16 sdb 41 42 43 44 45 46 47 48 0 50 51\n"
	ds, err := parseDiskStats([]byte(data), nil)
	require.NoError(t, err)
	require.Equal(t, []DiskStat{
		{Major: 7, Minor: 0, Name: "loop0", ReadOps: 1, ReadBytes: 3 * 512, WriteOps: 5, WriteBytes: 7 * 512, DiscardOps: 12, DiscardBytes: 14 * 512, HasDiscard: true},
		{Major: 254, Minor: 0, Name: "vda", ReadOps: 21, ReadBytes: 23 * 512, WriteOps: 25, WriteBytes: 27 * 512, DiscardOps: 32, DiscardBytes: 34 * 512, HasDiscard: true},
		{Major: 8, Minor: 16, Name: "sdb", ReadOps: 41, ReadBytes: 43 * 512, WriteOps: 45, WriteBytes: 47 * 512},
	}, ds, "17, 15 and 11 columns (kernels 5.5+, 4.18+, older); no discard columns: no discard values")

	again, err := parseDiskStats([]byte(data), ds[:0])
	require.NoError(t, err)
	assert.Equal(t, ds, again, "reusing the slice")

	for _, bad := range []string{"8 0 sda 1 2 3\n", "x 0 sda 1 2 3 4 5 6 7 8 9 10 11\n", "8 0 sda 1 2 3 4 5 6 7 8 9 10 x\n", "8 4294967296 sda 1 2 3 4 5 6 7 8 9 10 11\n"} {
		_, err := parseDiskStats([]byte(bad), nil)
		assert.Error(t, err, bad)
	}
}

func TestParseUevent(t *testing.T) {
	d, err := parseUevent([]byte("MAJOR=254\nMINOR=1\nDEVNAME=vda1\nDEVTYPE=partition\nPARTN=1\n"))
	require.NoError(t, err)
	assert.Equal(t, BlockDevice{Name: "vda1", Partition: true}, d)
	d, err = parseUevent([]byte("MAJOR=253\nMINOR=0\nDEVNAME=dm-0\nDEVTYPE=disk\n"))
	require.NoError(t, err)
	assert.Equal(t, BlockDevice{Name: "dm-0"}, d)
	_, err = parseUevent([]byte("MAJOR=1\n"))
	assert.Error(t, err)
}

func TestDiskStatsAndBlockDeviceUnderRoot(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "proc"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc/diskstats"), []byte(" 254 0 vda 1 2 3 4 5 6 7 8 0 10 11\n"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys/dev/block/254:0"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "sys/dev/block/254:0/uevent"), []byte("DEVNAME=vda\nDEVTYPE=disk\n"), 0o600))
	fs := NewFS(root)
	ds, err := fs.DiskStats(nil)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	assert.Equal(t, "vda", ds[0].Name)
	d, err := fs.BlockDevice(254, 0)
	require.NoError(t, err)
	assert.Equal(t, BlockDevice{Name: "vda"}, d)
	_, err = fs.BlockDevice(8, 0)
	assert.ErrorIs(t, err, os.ErrNotExist)

	require.NoError(t, os.WriteFile(filepath.Join(root, "proc/diskstats"), []byte("garbage\n"), 0o600))
	_, err = fs.DiskStats(nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(root, "proc/diskstats"), "the error names the file")
}

// FuzzParseDiskStats: no panic; what it reports prints back (as 15-column
// lines) to the same values.
func FuzzParseDiskStats(f *testing.F) {
	f.Add([]byte("   7       0 loop0 1 2 3 4 5 6 7 8 0 10 11 12 13 14 15 16 17\n 254 0 vda 21 22 23 24 25 26 27 28 0 30 31\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		ds, err := parseDiskStats(data, nil)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, d := range ds {
			if d.ReadBytes%512 != 0 || d.WriteBytes%512 != 0 || d.DiscardBytes%512 != 0 || strings.ContainsAny(d.Name, " \t\n") || d.Name == "" {
				t.Fatalf("impossible value from %q: %+v", data, d)
			}
			fmt.Fprintf(&b, "%d %d %s %d 0 %d 0 %d 0 %d 0 0 0 0", d.Major, d.Minor, d.Name, d.ReadOps, d.ReadBytes/512, d.WriteOps, d.WriteBytes/512)
			if d.HasDiscard {
				fmt.Fprintf(&b, " %d 0 %d 0", d.DiscardOps, d.DiscardBytes/512)
			}
			b.WriteByte('\n')
		}
		back, err := parseDiskStats([]byte(b.String()), nil)
		require.NoError(t, err)
		require.Equal(t, ds, back)
	})
}

func FuzzParseUevent(f *testing.F) {
	f.Add([]byte("MAJOR=254\nMINOR=1\nDEVNAME=vda1\nDEVTYPE=partition\n"))
	f.Add([]byte("DEVNAME=\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := parseUevent(data)
		if err == nil && d.Name == "" {
			t.Fatalf("no error and no name from %q", data)
		}
	})
}

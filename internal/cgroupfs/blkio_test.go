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

func TestParseIOStat(t *testing.T) {
	data := "254:0 rbytes=11 wbytes=22 rios=3 wios=4 dbytes=55 dios=6 cost.usage=7 cost.wait=8\n" +
		"259:3 rbytes=101 wbytes=202 rios=13 wios=14\n"
	devs, err := parseIOStat([]byte(data), nil)
	require.NoError(t, err)
	require.Equal(t, []IODevice{
		{Major: 254, Minor: 0, ReadBytes: Some(11), WriteBytes: Some(22), ReadOps: Some(3), WriteOps: Some(4), DiscBytes: Some(55), DiscOps: Some(6)},
		{Major: 259, Minor: 3, ReadBytes: Some(101), WriteBytes: Some(202), ReadOps: Some(13), WriteOps: Some(14)},
	}, devs, "dbytes/dios absent on the second device: absent, not 0")

	for _, bad := range []string{"254 rbytes=1\n", "254:0 rbytes\n", "254:0 rbytes=x\n", "a:b rbytes=1\n", "254:99999999999 rbytes=1\n"} {
		_, err := parseIOStat([]byte(bad), nil)
		assert.ErrorIs(t, err, errMalformed, bad)
	}
}

func TestParseBlkioRwstat(t *testing.T) {
	bytes := "254:0 Read 100\n254:0 Write 200\n254:0 Sync 300\n254:0 Async 0\n254:0 Discard 5\n254:0 Total 305\n" +
		"8:16 Read 7\n8:16 Write 9\n8:16 Sync 16\n8:16 Async 0\n8:16 Total 16\nTotal 321\n"
	ops := "254:0 Read 1\n254:0 Write 2\n254:0 Discard 3\n254:0 Total 6\n8:16 Read 4\n8:16 Write 5\n8:16 Total 9\nTotal 15\n"
	devs, err := parseBlkioRwstat([]byte(bytes), nil, true)
	require.NoError(t, err)
	devs, err = parseBlkioRwstat([]byte(ops), devs, false)
	require.NoError(t, err)
	require.Equal(t, []IODevice{
		{Major: 254, Minor: 0, ReadBytes: Some(100), WriteBytes: Some(200), DiscBytes: Some(5), ReadOps: Some(1), WriteOps: Some(2), DiscOps: Some(3)},
		{Major: 8, Minor: 16, ReadBytes: Some(7), WriteBytes: Some(9), ReadOps: Some(4), WriteOps: Some(5)},
	}, devs)

	devs, err = parseBlkioRwstat([]byte("Total 0\n"), nil, true)
	require.NoError(t, err)
	assert.Empty(t, devs, "the unaccounted file lists no device")

	for _, bad := range []string{"Total x\n", "254:0 Read\n", "254:0 Read x\n", "254-0 Read 1\n", "254:0 Read 1 2\n"} {
		_, err := parseBlkioRwstat([]byte(bad), nil, true)
		assert.ErrorIs(t, err, errMalformed, bad)
	}
}

// blkioTree writes a v1 node with memory and blkio hierarchies.
func blkioTree(t *testing.T) (string, *Reader) {
	root := t.TempDir()
	base := filepath.Join(root, "sys/fs/cgroup")
	write(t, filepath.Join(base, "memory/cgroup.procs"), "")
	write(t, filepath.Join(base, "blkio/cgroup.procs"), "")
	l, err := Detect(root)
	require.NoError(t, err)
	return filepath.Join(base, "blkio"), NewReader(l)
}

func writeBlkio(t *testing.T, dir, prefix, bytes, ops string) {
	write(t, filepath.Join(dir, prefix+"io_service_bytes_recursive"), bytes)
	write(t, filepath.Join(dir, prefix+"io_serviced_recursive"), ops)
}

// TestIOV1: the throttle files when they list a device; the BFQ files when
// only those do; no devices and IOUnaccountedV1 when both say "Total 0"
// (not accounted: absent, never zeros); IONone without files or cgroup.
func TestIOV1(t *testing.T) {
	blk, r := blkioTree(t)
	const none = "Total 0\n"
	writeBlkio(t, filepath.Join(blk, "thr"), "blkio.throttle.", "254:0 Read 10\n254:0 Write 20\n254:0 Total 30\nTotal 30\n", "254:0 Read 1\n254:0 Write 2\n254:0 Total 3\nTotal 3\n")
	writeBlkio(t, filepath.Join(blk, "thr"), "blkio.bfq.", "254:0 Read 99\nTotal 99\n", "254:0 Read 99\nTotal 99\n")
	writeBlkio(t, filepath.Join(blk, "bfq"), "blkio.throttle.", none, none)
	writeBlkio(t, filepath.Join(blk, "bfq"), "blkio.bfq.", "8:0 Read 40\n8:0 Write 50\n8:0 Total 90\nTotal 90\n", "8:0 Read 4\n8:0 Write 5\n8:0 Total 9\nTotal 9\n")
	writeBlkio(t, filepath.Join(blk, "zero"), "blkio.throttle.", "254:0 Read 0\n254:0 Write 0\n254:0 Total 0\nTotal 0\n", "254:0 Read 0\n254:0 Write 0\n254:0 Total 0\nTotal 0\n")
	writeBlkio(t, filepath.Join(blk, "unacc"), "blkio.throttle.", none, none)
	writeBlkio(t, filepath.Join(blk, "unacc"), "blkio.bfq.", none, none)
	require.NoError(t, os.MkdirAll(filepath.Join(blk, "nofiles"), 0o755))

	st, err := r.IO("/thr", nil)
	require.NoError(t, err)
	assert.Equal(t, IOThrottleV1, st.Source)
	assert.Equal(t, []IODevice{{Major: 254, ReadBytes: Some(10), WriteBytes: Some(20), ReadOps: Some(1), WriteOps: Some(2)}}, st.Devices, "throttle wins over BFQ")

	st, err = r.IO("/bfq", st.Devices)
	require.NoError(t, err)
	assert.Equal(t, IOBFQV1, st.Source)
	assert.Equal(t, []IODevice{{Major: 8, ReadBytes: Some(40), WriteBytes: Some(50), ReadOps: Some(4), WriteOps: Some(5)}}, st.Devices)

	st, err = r.IO("/zero", nil)
	require.NoError(t, err)
	assert.Equal(t, IOThrottleV1, st.Source)
	assert.Equal(t, []IODevice{{Major: 254, ReadBytes: Some(0), WriteBytes: Some(0), ReadOps: Some(0), WriteOps: Some(0)}}, st.Devices, "a listed device is accounted: a real 0")

	st, err = r.IO("/unacc", nil)
	require.NoError(t, err)
	assert.Equal(t, IOUnaccountedV1, st.Source)
	assert.Empty(t, st.Devices, "Total 0 without devices: not accounted, no values")

	for _, rel := range []string{"/nofiles", "/gone"} {
		st, err = r.IO(rel, nil)
		require.NoError(t, err, rel)
		assert.Equal(t, IONone, st.Source, rel)
		assert.Empty(t, st.Devices, rel)
	}

	write(t, filepath.Join(blk, "thr/blkio.throttle.io_serviced_recursive"), "254:0 Read lots\n")
	_, err = r.IO("/thr", nil)
	require.ErrorIs(t, err, errMalformed)
	assert.Contains(t, err.Error(), filepath.Join(blk, "thr/blkio.throttle.io_serviced_recursive"), "the error names the file")
}

// TestIOV2: io.stat on the unified tree; absent without the io controller.
func TestIOV2(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "sys/fs/cgroup")
	write(t, filepath.Join(base, "cgroup.controllers"), "cpu io memory pids\n")
	write(t, filepath.Join(base, "a/io.stat"), "254:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=5 dios=6\n")
	write(t, filepath.Join(base, "idle/io.stat"), "")
	require.NoError(t, os.MkdirAll(filepath.Join(base, "noio"), 0o755))
	l, err := Detect(root)
	require.NoError(t, err)
	r := NewReader(l)

	st, err := r.IO("/a", nil)
	require.NoError(t, err)
	assert.Equal(t, IOStatV2, st.Source)
	assert.Equal(t, []IODevice{{Major: 254, ReadBytes: Some(1), WriteBytes: Some(2), ReadOps: Some(3), WriteOps: Some(4), DiscBytes: Some(5), DiscOps: Some(6)}}, st.Devices)

	st, err = r.IO("/idle", nil)
	require.NoError(t, err)
	assert.Equal(t, IOStatV2, st.Source)
	assert.Empty(t, st.Devices, "no I/O yet: no device")

	st, err = r.IO("/noio", nil)
	require.NoError(t, err)
	assert.Equal(t, IONone, st.Source)
}

// FuzzParseIOStat: no panic; every device it reports prints back (as
// io.stat) to the same device.
func FuzzParseIOStat(f *testing.F) {
	f.Add([]byte("254:0 rbytes=11 wbytes=22 rios=3 wios=4 dbytes=55 dios=6 cost.usage=7\n259:3 rbytes=1\n"))
	f.Add([]byte("8:0 rbytes=18446744073709551615\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		devs, err := parseIOStat(data, nil)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, d := range devs {
			fmt.Fprintf(&b, "%d:%d", d.Major, d.Minor)
			for _, kv := range []struct {
				k string
				v U64
			}{{"rbytes", d.ReadBytes}, {"wbytes", d.WriteBytes}, {"dbytes", d.DiscBytes}, {"rios", d.ReadOps}, {"wios", d.WriteOps}, {"dios", d.DiscOps}} {
				if kv.v.OK {
					fmt.Fprintf(&b, " %s=%d", kv.k, kv.v.V)
				}
			}
			b.WriteByte('\n')
		}
		back, err := parseIOStat([]byte(b.String()), nil)
		require.NoError(t, err)
		require.Equal(t, devs, back)
	})
}

// FuzzParseBlkioRwstat: no panic; the devices it reports print back (as
// an rwstat file) to the same devices.
func FuzzParseBlkioRwstat(f *testing.F) {
	f.Add([]byte("254:0 Read 100\n254:0 Write 200\n254:0 Sync 300\n254:0 Async 0\n254:0 Discard 5\n254:0 Total 305\nTotal 305\n"))
	f.Add([]byte("Total 0\n"))
	f.Add([]byte("8:16 Read 18446744073709551615\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		devs, err := parseBlkioRwstat(data, nil, true)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, d := range devs {
			for _, kv := range []struct {
				k string
				v U64
			}{{"Read", d.ReadBytes}, {"Write", d.WriteBytes}, {"Discard", d.DiscBytes}} {
				if kv.v.OK {
					fmt.Fprintf(&b, "%d:%d %s %d\n", d.Major, d.Minor, kv.k, kv.v.V)
				}
			}
			if !d.ReadBytes.OK && !d.WriteBytes.OK && !d.DiscBytes.OK {
				fmt.Fprintf(&b, "%d:%d Total 0\n", d.Major, d.Minor)
			}
		}
		back, err := parseBlkioRwstat([]byte(b.String()), nil, true)
		require.NoError(t, err)
		require.Equal(t, devs, back)
	})
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package vmnode

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cpioMember is one member read back from a newc archive.
type cpioMember struct {
	mode, rmajor, rminor uint32
	data                 string
}

// readCpio parses a newc archive the way the kernel's unpacker does
// (init/initramfs.c): 110-byte ASCII headers, name and data each padded to
// 4 bytes, a TRAILER!!! member at the end.
func readCpio(b []byte) (map[string]cpioMember, []string, error) {
	out := map[string]cpioMember{}
	var order []string
	for off := 0; ; {
		if off+110 > len(b) || string(b[off:off+6]) != "070701" {
			return nil, nil, errors.New("bad header at " + strconv.Itoa(off))
		}
		field := func(i int) uint32 {
			v, _ := strconv.ParseUint(string(b[off+6+8*i:off+14+8*i]), 16, 32)
			return uint32(v)
		}
		mode, size, rmaj, rmin, nameLen := field(1), field(6), field(9), field(10), field(11)
		name := string(b[off+110 : off+110+int(nameLen)-1])
		off = (off + 110 + int(nameLen) + 3) &^ 3
		data := string(b[off : off+int(size)])
		off = (off + int(size) + 3) &^ 3
		if name == "TRAILER!!!" {
			if off != len(b) {
				return nil, nil, errors.New("data after the trailer")
			}
			return out, order, nil
		}
		out[name] = cpioMember{mode: mode, rmajor: rmaj, rminor: rmin, data: data}
		order = append(order, name)
	}
}

func TestWriteInitramfs(t *testing.T) {
	dir := t.TempDir()
	bb := filepath.Join(dir, "busybox")
	require.NoError(t, os.WriteFile(bb, []byte("static busybox, 37 bytes long......."), 0o755)) //nolint:gosec // G306: an executable
	files := map[string]string{}
	for _, m := range []string{"virtio", "ext4"} {
		files[m] = filepath.Join(dir, m+".ko")
		require.NoError(t, os.WriteFile(files[m], []byte("module "+m), 0o600))
	}
	out := filepath.Join(dir, "initrd")
	require.NoError(t, writeInitramfs(out, bb, []string{"virtio", "ext4"}, files))
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	got, order, err := readCpio(b)
	require.NoError(t, err)
	assert.Equal(t, "static busybox, 37 bytes long.......", got["bin/busybox"].data)
	assert.Equal(t, uint32(sIFREG|0o755), got["bin/busybox"].mode)
	assert.Equal(t, uint32(sIFLNK|0o777), got["bin/sh"].mode)
	assert.Equal(t, "busybox", got["bin/sh"].data)
	assert.Equal(t, cpioMember{mode: sIFCHR | 0o600, rmajor: 5, rminor: 1}, got["dev/console"], "the kernel opens it for init's stdio")
	assert.Equal(t, "module ext4", got["modules/ext4.ko"].data)
	assert.Equal(t, "virtio\next4\n", got["modules/order"].data)
	assert.Equal(t, initScript, got["init"].data)
	assert.Equal(t, uint32(sIFREG|0o755), got["init"].mode)
	for _, d := range []string{"bin", "dev", "proc", "sys", "newroot", "modules"} {
		assert.Equal(t, uint32(sIFDIR|0o755), got[d].mode, d)
	}
	assert.Less(t, indexOf(order, "bin"), indexOf(order, "bin/busybox"), "directories before their members")
}

func indexOf(s []string, x string) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return -1
}

func TestParseModinfo(t *testing.T) {
	b := []byte("license=GPL\x00depends=jbd2,mbcache,crc16\x00intree=Y\x00name=ext4\x00")
	assert.Equal(t, []string{"jbd2", "mbcache", "crc16"}, parseModinfo(b))
	assert.Empty(t, parseModinfo([]byte("depends=\x00name=virtio_ring\x00")), "no dependencies")
	assert.Empty(t, parseModinfo(nil))
}

func FuzzParseModinfo(f *testing.F) {
	f.Add([]byte("license=GPL\x00depends=jbd2,mbcache,crc16\x00name=ext4\x00"))
	f.Add([]byte("depends=,a,,b \x00depends=c"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, d := range parseModinfo(b) {
			if d == "" || strings.ContainsAny(d, ",\x00") || strings.TrimSpace(d) != d {
				t.Fatalf("dependency %q", d)
			}
		}
	})
}

func TestLoadOrder(t *testing.T) {
	deps := map[string][]string{
		"ext4": {"jbd2", "mbcache", "crc16"}, "jbd2": nil, "mbcache": nil, "crc16": nil,
		"virtio_blk": {"virtio", "virtio_ring"}, "virtio": {"virtio_ring"}, "virtio_ring": nil,
		"9p": {"9pnet", "fscache", "netfs"}, "9pnet": nil, "fscache": {"netfs"}, "netfs": nil,
		"loop_a": {"loop_b"}, "loop_b": {"loop_a"},
	}
	files := map[string]string{}
	for m := range deps {
		files[m] = m + ".ko"
	}
	files["virtio_blk"] = "virtio-blk.ko" // the file's name may use dashes
	lookup := func(f string) ([]string, error) {
		return deps[modName(strings.TrimSuffix(f, ".ko"))], nil
	}
	order, err := loadOrder([]string{"virtio_blk", "ext4", "9p", "virtio"}, files, lookup)
	require.NoError(t, err)
	assert.Equal(t, []string{"virtio_ring", "virtio", "virtio_blk", "crc16", "jbd2", "mbcache", "ext4", "9pnet", "netfs", "fscache", "9p"}, order,
		"dependencies first, each module once")
	_, err = loadOrder([]string{"loop_a"}, files, lookup)
	assert.ErrorContains(t, err, "cycle: loop_a -> loop_b -> loop_a")
	_, err = loadOrder([]string{"ext4", "nosuch"}, files, lookup)
	assert.ErrorContains(t, err, "module nosuch")
	_, err = loadOrder([]string{"ext4"}, files, func(string) ([]string, error) { return nil, errors.New("bad ELF") })
	assert.ErrorContains(t, err, "bad ELF")
}

func TestIndexModules(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"kernel/fs/ext4/ext4.ko", "kernel/drivers/block/virtio-blk.ko", "modules.order"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), nil, 0o600))
	}
	idx, err := indexModules(dir)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"ext4":       filepath.Join(dir, "kernel/fs/ext4/ext4.ko"),
		"virtio_blk": filepath.Join(dir, "kernel/drivers/block/virtio-blk.ko"),
	}, idx)
}

func TestXZPayload(t *testing.T) {
	bz := append([]byte("MZ setup code, not compressed"), append(xzMagic, []byte("stream")...)...)
	p, err := xzPayload(bz)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(p, xzMagic))
	assert.Equal(t, "stream", string(p[len(xzMagic):]))
	_, err = xzPayload([]byte("gzip kernel"))
	assert.Error(t, err)
}

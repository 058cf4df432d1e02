// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package vmnode

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// cpioWriter writes a cpio archive in the "newc" format the kernel unpacks
// as its initramfs (Documentation/driver-api/early-userspace/buffer-format.rst).
type cpioWriter struct {
	w   io.Writer
	ino uint32
	err error
}

// entry writes one member: a directory (mode with S_IFDIR), a regular file
// (S_IFREG, data), a symlink (S_IFLNK, data = target) or a character device
// (S_IFCHR, rdev major/minor).
func (c *cpioWriter) entry(name string, mode uint32, data []byte, rmajor, rminor uint32) {
	if c.err != nil {
		return
	}
	c.ino++
	nlink := uint32(1)
	if mode&0o170000 == 0o040000 {
		nlink = 2
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		c.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rmajor, rminor, len(name)+1, 0)
	var b bytes.Buffer
	b.WriteString(hdr)
	b.WriteString(name)
	b.WriteByte(0)
	pad4(&b)
	b.Write(data)
	pad4(&b)
	_, c.err = c.w.Write(b.Bytes())
}

// close writes the trailer.
func (c *cpioWriter) close() error {
	c.entry("TRAILER!!!", 0, nil, 0, 0)
	return c.err
}

func pad4(b *bytes.Buffer) {
	for b.Len()%4 != 0 {
		b.WriteByte(0)
	}
}

const (
	sIFDIR = 0o040000
	sIFREG = 0o100000
	sIFLNK = 0o120000
	sIFCHR = 0o020000
)

// parseModinfo returns the modules a kernel module depends on, from the
// contents of its .modinfo section (NUL-separated key=value strings, one of
// them "depends=a,b").
func parseModinfo(b []byte) []string {
	var deps []string
	for _, kv := range bytes.Split(b, []byte{0}) {
		v, ok := bytes.CutPrefix(kv, []byte("depends="))
		if !ok {
			continue
		}
		for _, d := range strings.Split(string(v), ",") {
			if d = strings.TrimSpace(d); d != "" {
				deps = append(deps, d)
			}
		}
	}
	return deps
}

// moduleDeps reads the dependencies of the module file ko.
func moduleDeps(ko string) ([]string, error) {
	f, err := elf.Open(ko)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ko, err)
	}
	defer f.Close()
	s := f.Section(".modinfo")
	if s == nil {
		return nil, fmt.Errorf("%s: no .modinfo section", ko)
	}
	b, err := s.Data()
	if err != nil {
		return nil, fmt.Errorf("%s: .modinfo: %w", ko, err)
	}
	return parseModinfo(b), nil
}

// indexModules maps module names (as the kernel names them: "-" and "_"
// are the same) to their .ko files under a lib/modules/<version> tree.
func indexModules(dir string) (map[string]string, error) {
	idx := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".ko") {
			idx[modName(strings.TrimSuffix(d.Name(), ".ko"))] = p
		}
		return nil
	})
	return idx, err
}

func modName(s string) string { return strings.ReplaceAll(s, "-", "_") }

// loadOrder returns the modules to load for want, dependencies first, each
// once: the order insmod needs them in.
func loadOrder(want []string, files map[string]string, deps func(string) ([]string, error)) ([]string, error) {
	var order []string
	state := map[string]int{} // 1: visiting, 2: done
	var visit func(string, []string) error
	visit = func(m string, path []string) error {
		m = modName(m)
		switch state[m] {
		case 2:
			return nil
		case 1:
			return fmt.Errorf("module dependency cycle: %s", strings.Join(append(path, m), " -> "))
		}
		f, ok := files[m]
		if !ok {
			return fmt.Errorf("module %s (needed by %s) not in the kernel package", m, strings.Join(path, " -> "))
		}
		state[m] = 1
		ds, err := deps(f)
		if err != nil {
			return err
		}
		sort.Strings(ds)
		for _, d := range ds {
			if err := visit(d, append(path, m)); err != nil {
				return err
			}
		}
		state[m] = 2
		order = append(order, m)
		return nil
	}
	for _, m := range want {
		if err := visit(m, nil); err != nil {
			return nil, err
		}
	}
	return order, nil
}

// initScript is the initramfs's /init: load the modules, mount the root
// image (the first virtio disk) and hand over to systemd.
const initScript = `#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /modules/order); do
  insmod /modules/$m.ko || echo "vmnode-init: insmod $m failed"
done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
if ! mount -t ext4 -o rw /dev/vda /newroot; then
  echo "vmnode-init: cannot mount /dev/vda"
  poweroff -f
fi
mount --move /dev /newroot/dev
umount /proc /sys
exec switch_root /newroot /sbin/init
`

// writeInitramfs writes the initramfs: the static busybox, the modules in
// load order and /init.
func writeInitramfs(path, busybox string, modules []string, files map[string]string) error {
	bb, err := os.ReadFile(busybox)
	if err != nil {
		return fmt.Errorf("initramfs: %w", err)
	}
	var out bytes.Buffer
	c := &cpioWriter{w: &out}
	for _, d := range []string{"bin", "dev", "proc", "sys", "newroot", "modules"} {
		c.entry(d, sIFDIR|0o755, nil, 0, 0)
	}
	c.entry("dev/console", sIFCHR|0o600, nil, 5, 1)
	c.entry("bin/busybox", sIFREG|0o755, bb, 0, 0)
	c.entry("bin/sh", sIFLNK|0o777, []byte("busybox"), 0, 0)
	for _, m := range modules {
		b, err := os.ReadFile(files[m])
		if err != nil {
			return fmt.Errorf("initramfs: %w", err)
		}
		c.entry("modules/"+m+".ko", sIFREG|0o644, b, 0, 0)
	}
	c.entry("modules/order", sIFREG|0o644, []byte(strings.Join(modules, "\n")+"\n"), 0, 0)
	c.entry("init", sIFREG|0o755, []byte(initScript), 0, 0)
	if err := c.close(); err != nil {
		return err
	}
	return os.WriteFile(path, out.Bytes(), 0o600)
}

// xzMagic starts the xz stream a bzImage carries its kernel in.
var xzMagic = []byte{0xFD, '7', 'z', 'X', 'Z', 0x00}

// xzPayload returns the xz stream inside a bzImage (from its magic on), so
// that the uncompressed ELF kernel can be booted directly (PVH entry):
// QEMU then skips seconds of emulated decompression.
func xzPayload(bz []byte) ([]byte, error) {
	i := bytes.Index(bz, xzMagic)
	if i < 0 {
		return nil, errors.New("no xz stream in the kernel image")
	}
	return bz[i:], nil
}

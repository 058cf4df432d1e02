// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package cgrouptest // import "github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// V2 reports whether the machine is pure cgroup v2.
func V2() bool {
	_, err := os.Stat(filepath.Join(Base, "cgroup.controllers"))
	return err == nil
}

// memDir is where the container's memory accounting lives.
func (c *Container) memDir() string {
	if V2() {
		return c.Dir("")
	}
	return c.Dir("memory")
}

// MemoryUsage reads the kernel's own usage file for the container.
func (c *Container) MemoryUsage(tb testing.TB) uint64 {
	tb.Helper()
	name := "memory.usage_in_bytes"
	if V2() {
		name = "memory.current"
	}
	return readUint(tb, filepath.Join(c.memDir(), name))
}

// MemoryStat reads one key of the container's memory.stat.
func (c *Container) MemoryStat(tb testing.TB, key string) uint64 {
	tb.Helper()
	f, err := os.Open(filepath.Join(c.memDir(), "memory.stat"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), " "); ok && k == key {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return n
		}
	}
	tb.Fatalf("memory.stat has no %s", key)
	return 0
}

// InactiveFile is the container's inactive file cache as the receiver
// defines it (v1 total_inactive_file, v2 inactive_file).
func (c *Container) InactiveFile(tb testing.TB) uint64 {
	if V2() {
		return c.MemoryStat(tb, "inactive_file")
	}
	return c.MemoryStat(tb, "total_inactive_file")
}

func readUint(tb testing.TB, p string) uint64 {
	tb.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// MemoryStatKey is the container's memory.stat key for a v2 name: v1 uses
// the hierarchical total_* keys and a few other names.
func MemoryStatKey(v2name string) string {
	if V2() {
		return v2name
	}
	switch v2name {
	case "anon":
		return "total_rss"
	case "file":
		return "total_cache"
	case "file_mapped":
		return "total_mapped_file"
	}
	return "total_" + v2name
}

// OOMKills reads the kernel's oom_kill counter of the container (v1
// memory.oom_control, v2 memory.events).
func (c *Container) OOMKills(tb testing.TB) uint64 {
	tb.Helper()
	name := "memory.oom_control"
	if V2() {
		name = "memory.events"
	}
	data, err := os.ReadFile(filepath.Join(c.memDir(), name))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return n
		}
	}
	tb.Fatalf("%s has no oom_kill", name)
	return 0
}

// SetMemoryLimit limits the container to bytes of memory and no swap (v1
// memory.limit_in_bytes and, with swap accounting, memory.memsw.limit_in_bytes;
// v2 memory.max and memory.swap.max; v1 memory.swappiness 0). Only tests
// write limits.
func (c *Container) SetMemoryLimit(tb testing.TB, bytes uint64) {
	tb.Helper()
	v := strconv.FormatUint(bytes, 10)
	if V2() {
		c.Write(tb, "", "memory.max", v)
		if _, err := os.Stat(filepath.Join(c.memDir(), "memory.swap.max")); err == nil {
			c.Write(tb, "", "memory.swap.max", "0")
		}
		return
	}
	c.Write(tb, "memory", "memory.limit_in_bytes", v)
	if _, err := os.Stat(filepath.Join(c.memDir(), "memory.memsw.limit_in_bytes")); err == nil {
		c.Write(tb, "memory", "memory.memsw.limit_in_bytes", v)
	}
	// Without swap accounting, memsw is absent: swappiness 0 keeps the
	// cgroup's anonymous memory out of swap instead.
	c.Write(tb, "memory", "memory.swappiness", "0")
}

// DropFileCache drops the clean page cache of the file at path
// (posix_fadvise POSIX_FADV_DONTNEED), whichever cgroup it is charged to.
func DropFileCache(tb testing.TB, path string) {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	const fadvDontNeed = 4
	if _, _, errno := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0); errno != 0 {
		tb.Fatalf("fadvise %s: %v", path, errno)
	}
}

// OnTmpfs reports whether dir is on tmpfs, whose pages are shmem and cannot
// be dropped like page cache.
func OnTmpfs(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && st.Type == 0x01021994
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgrouptest // import "github.com/containerstats/containerstatsreceiver/internal/cgrouptest"

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
func (c *Container) MemoryUsage(t testing.TB) uint64 {
	t.Helper()
	name := "memory.usage_in_bytes"
	if V2() {
		name = "memory.current"
	}
	return readUint(t, filepath.Join(c.memDir(), name))
}

// MemoryStat reads one key of the container's memory.stat.
func (c *Container) MemoryStat(t testing.TB, key string) uint64 {
	t.Helper()
	f, err := os.Open(filepath.Join(c.memDir(), "memory.stat"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), " "); ok && k == key {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("memory.stat has no %s", key)
	return 0
}

// InactiveFile is the container's inactive file cache as the receiver
// defines it (v1 total_inactive_file, v2 inactive_file).
func (c *Container) InactiveFile(t testing.TB) uint64 {
	if V2() {
		return c.MemoryStat(t, "inactive_file")
	}
	return c.MemoryStat(t, "total_inactive_file")
}

func readUint(t testing.TB, p string) uint64 {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

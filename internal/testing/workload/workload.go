// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

// Package workload is what test workloads do, whoever runs them: a
// cgrouptest child (the test binary re-executed into a real cgroup) or the
// static workload command (internal/testing/cmd/workload) that a test's
// container image carries as /bin/workload. Each mode charges its cgroup
// with one kind of use (CPU, anonymous memory, page cache, direct block
// I/O, huge pages, file descriptors) that a test then compares with the
// kernel's own files.
package workload // import "github.com/containerstats/containerstatsreceiver/internal/testing/workload"

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Modes.
const (
	// Burn: args "threads=K" busy OS threads and "mib=N" MiB of
	// allocated and touched memory; runs until killed.
	Burn = "burn"
	// Sleep: does nothing until killed.
	Sleep = "sleep"
	// Spin: arg "threads=K": exactly K threads always runnable (state
	// R) and every other thread asleep. A Go process cannot promise that
	// (sysmon and idle Ms wake up now and then), so the workload execs
	// /bin/sh, which starts K busy subshells (one thread each, builtins
	// only) and waits for them, asleep. They stay in the workload's cgroup
	// and process group.
	Spin = "spin"
	// Cache: args "mib=N" and "file=PATH": writes N MiB to PATH, fsyncs
	// it, reads it back twice (so its page cache is on the active list),
	// then creates PATH.ready and sleeps until killed.
	Cache = "cache"
	// Mix: args "anon=A", "active=B", "inactive=C" (MiB) and "file=PATH":
	// touches A MiB of anonymous memory, writes B MiB to PATH.active and
	// reads it back twice (active page cache), writes C MiB to
	// PATH.inactive once (inactive page cache), creates PATH.ready and
	// sleeps until killed: a working set (anon + active file) that differs
	// from usage, from anon and from anon + file by tens of MiB each. With
	// "cpu=MS" it first burns CPU on one thread until the process has used
	// MS ms of CPU time (user + system), so that it holds a known amount
	// of CPU time and then uses none.
	Mix = "mix"
	// DirectWrite: args "mib=N" and "file=PATH": writes N MiB to PATH (a
	// block device) with O_DIRECT, so the bios are the workload's, then
	// returns (exit 0).
	DirectWrite = "directwrite"
	// Hugetlb: args "pages=N" and "pagesize=BYTES": maps N huge pages of
	// the default huge page size (MAP_HUGETLB, pagesize must be that size)
	// and touches each, so they are charged to the cgroup's hugetlb
	// controller; sleeps until killed. Exit status 5 when the mapping fails
	// (no free huge pages).
	Hugetlb = "hugetlb"
	// FDs: args "fds=K" and "file=PATH": opens the runtime's poller, writes
	// PATH.ready (the test counts descriptors from then on), waits for the
	// poke, then opens K more file descriptors (/dev/null, raw open(2), so
	// the poller opens none of its own) and sleeps until killed.
	FDs = "fds"
)

// Run does mode's work with args ("key=value", others ignored) and returns
// the process's exit status for the modes that end (DirectWrite, errors);
// the others never return. poke waits for the second signal of FDs.
func Run(mode string, args []string, poke func() error) int {
	ints := map[string]int{}
	strs := map[string]string{}
	for _, a := range args {
		if k, v, ok := strings.Cut(a, "="); ok && !strings.HasPrefix(k, "-") {
			strs[k] = v
			if n, err := strconv.Atoi(v); err == nil {
				ints[k] = n
			}
		}
	}
	fail := func(code int, err error) int {
		fmt.Fprintf(os.Stderr, "workload %s: %v\n", mode, err)
		return code
	}
	switch mode {
	case Burn:
		burn(ints["threads"], ints["mib"])
	case Sleep:
	case Spin:
		return fail(2, spin(ints["threads"]))
	case Cache:
		if err := cache(strs["file"], ints["mib"]); err != nil {
			return fail(4, err)
		}
		if err := os.WriteFile(strs["file"]+".ready", nil, 0o600); err != nil {
			return fail(4, err)
		}
	case Mix:
		touch(ints["anon"])
		if err := cache(strs["file"]+".active", ints["active"]); err != nil {
			return fail(4, err)
		}
		if err := write(strs["file"]+".inactive", ints["inactive"]); err != nil {
			return fail(4, err)
		}
		if err := burnFor(time.Duration(ints["cpu"]) * time.Millisecond); err != nil {
			return fail(4, err)
		}
		if err := os.WriteFile(strs["file"]+".ready", nil, 0o600); err != nil {
			return fail(4, err)
		}
	case DirectWrite:
		if err := directWrite(strs["file"], ints["mib"]); err != nil {
			return fail(4, err)
		}
		return 0
	case Hugetlb:
		if err := hugetlb(ints["pages"], ints["pagesize"]); err != nil {
			return fail(5, err)
		}
	case FDs:
		// The Go runtime opens its poller's two descriptors (epoll and an
		// eventfd) the first time it needs them, at a moment of its own
		// (a race-enabled binary caught it mid-count). Open them now, with
		// a pipe the poller takes, so that after the poke the count moves
		// by the K descriptors below and nothing else. (Cgroup CPU limit
		// files the runtime may hold open: GODEBUG in the child's
		// environment, cgrouptest.Start.)
		if r, w, err := os.Pipe(); err == nil {
			_, _ = r.Close(), w.Close()
		}
		if err := os.WriteFile(strs["file"]+".ready", nil, 0o600); err != nil {
			return fail(4, err)
		}
		if err := poke(); err != nil {
			return fail(3, err)
		}
		for i := 0; i < ints["fds"]; i++ {
			if _, err := syscall.Open(os.DevNull, syscall.O_RDONLY, 0); err != nil {
				return fail(4, err)
			}
		}
	default:
		return fail(2, fmt.Errorf("unknown mode %q", mode))
	}
	// Asleep until killed. Not select{}: in a process with no other
	// goroutine (the static command) the runtime calls that a deadlock.
	for {
		time.Sleep(time.Hour)
	}
}

var sink []byte

// touch allocates mib MiB and writes to every page of it.
func touch(mib int) {
	if mib > 0 {
		sink = make([]byte, mib<<20)
		for i := 0; i < len(sink); i += 4096 {
			sink[i] = 1
		}
	}
}

func burn(threads, mib int) {
	touch(mib)
	if threads > 0 {
		runtime.GOMAXPROCS(threads + 1)
	}
	for i := 0; i < threads; i++ {
		go func() {
			runtime.LockOSThread()
			x := time.Now().UnixNano()
			for {
				x = x*6364136223846793005 + 1442695040888963407
				if x == 0 {
					sink = nil
				}
			}
		}()
	}
}

// burnFor spins on the calling thread until the process has used d of
// CPU time (getrusage: user + system, every thread).
func burnFor(d time.Duration) error {
	x := time.Now().UnixNano()
	for {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			return err
		}
		if time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) >= d {
			return nil
		}
		for i := 0; i < 1<<20; i++ { // ~1 ms between the checks
			x = x*6364136223846793005 + 1442695040888963407
		}
		if x == 0 {
			sink = nil
		}
	}
}

func spin(threads int) error {
	script := fmt.Sprintf("i=0; while [ $i -lt %d ]; do (while :; do :; done) & i=$((i+1)); done; wait", threads)
	return syscall.Exec("/bin/sh", []string{"sh", "-c", script}, os.Environ()) //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
}

// write writes mib MiB to path and fsyncs it (clean pages, so they can be
// dropped); pages written once sit on the inactive list.
func write(path string, mib int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	for i := 0; i < mib; i++ {
		if _, err := f.Write(buf); err != nil {
			return err
		}
	}
	return f.Sync()
}

// cache fills the page cache with mib MiB of path, charged to this cgroup,
// and reads it twice so that its pages move to the active list.
func cache(path string, mib int) error {
	if err := write(path, mib); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for pass := 0; pass < 2; pass++ {
		for off := int64(0); off < int64(mib)<<20; off += int64(len(buf)) {
			if _, err := f.ReadAt(buf, off); err != nil {
				return err
			}
		}
	}
	return nil
}

// directWrite writes mib MiB to path with O_DIRECT from a page-aligned
// buffer (an anonymous mapping), one 1 MiB write at a time.
func directWrite(path string, mib int) error {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_DIRECT, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	buf, err := syscall.Mmap(-1, 0, 1<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return err
	}
	defer func() { _ = syscall.Munmap(buf) }()
	for i := range buf {
		buf[i] = byte(i)
	}
	for i := 0; i < mib; i++ {
		if _, err := f.WriteAt(buf, int64(i)<<20); err != nil {
			return err
		}
	}
	return nil
}

// hugetlb maps pages huge pages of pagesize bytes and writes to each.
func hugetlb(pages, pagesize int) error {
	if pages <= 0 || pagesize <= 0 {
		return fmt.Errorf("pages=%d pagesize=%d", pages, pagesize)
	}
	mem, err := syscall.Mmap(-1, 0, pages*pagesize, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_HUGETLB)
	if err != nil {
		return fmt.Errorf("mmap %d huge pages: %w", pages, err)
	}
	for i := 0; i < len(mem); i += pagesize {
		mem[i] = 1
	}
	sink = mem
	return nil
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package cgrouptest // import "github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const childEnv = "CGROUPTEST_CHILD"

// Child modes for Container.Start.
const (
	// ModeBurn: args "threads=K" busy OS threads and "mib=N" MiB of
	// allocated and touched memory; runs until killed.
	ModeBurn = "burn"
	// ModeSleep: does nothing until killed.
	ModeSleep = "sleep"
	// ModeSpin: arg "threads=K": exactly K threads always runnable (state
	// R) and every other thread asleep. A Go process cannot promise that
	// (sysmon and idle Ms wake up now and then), so the child execs
	// /bin/sh, which starts K busy subshells (one thread each, builtins
	// only) and waits for them, asleep. They stay in the child's cgroup and
	// process group, so Kill ends them all.
	ModeSpin = "spin"
	// ModeCache: args "mib=N" and "file=PATH": writes N MiB to PATH, fsyncs
	// it, reads it back twice (so its page cache is on the active list),
	// then creates PATH.ready and sleeps until killed.
	ModeCache = "cache"
	// ModeDirectWrite: args "mib=N" and "file=PATH": writes N MiB to PATH
	// (a block device) with O_DIRECT, so the bios are the child's, then
	// exits 0 (Child.WaitTimeout).
	ModeDirectWrite = "directwrite"
	// ModeHugetlb: args "pages=N" and "pagesize=BYTES": maps N huge pages
	// of the default huge page size (MAP_HUGETLB, pagesize must be that
	// size) and touches each, so they are charged to the cgroup's hugetlb
	// controller; sleeps until killed. Exits 5 when the mapping fails (no
	// free huge pages).
	ModeHugetlb = "hugetlb"
	// ModeFDs: arg "fds=K": sleeps until Child.Poke, then opens K more file
	// descriptors (/dev/null, raw open(2), so the Go runtime's poller opens
	// none of its own) and sleeps until killed.
	ModeFDs = "fds"
)

// MaybeRunChild runs a child's work and exits when this process was started
// by Container.Start; otherwise it returns at once. Call it first in
// TestMain.
func MaybeRunChild() {
	mode := os.Getenv(childEnv)
	if mode == "" {
		return
	}
	// Wait until the parent has moved us into the cgroup.
	var b [1]byte
	if _, err := os.Stdin.Read(b[:]); err != nil {
		os.Exit(3)
	}
	args := map[string]int{}
	strs := map[string]string{}
	for _, a := range os.Args[1:] {
		if k, v, ok := strings.Cut(a, "="); ok && !strings.HasPrefix(k, "-") {
			strs[k] = v
			if n, err := strconv.Atoi(v); err == nil {
				args[k] = n
			}
		}
	}
	switch mode {
	case ModeBurn:
		burn(args["threads"], args["mib"])
	case ModeSleep:
	case ModeSpin:
		spin(args["threads"])
	case ModeCache:
		if err := cache(strs["file"], args["mib"]); err != nil {
			fmt.Fprintf(os.Stderr, "cgrouptest: cache child: %v\n", err)
			os.Exit(4)
		}
	case ModeDirectWrite:
		if err := directWrite(strs["file"], args["mib"]); err != nil {
			fmt.Fprintf(os.Stderr, "cgrouptest: directwrite child: %v\n", err)
			os.Exit(4)
		}
		os.Exit(0)
	case ModeHugetlb:
		if err := hugetlb(args["pages"], args["pagesize"]); err != nil {
			fmt.Fprintf(os.Stderr, "cgrouptest: hugetlb child: %v\n", err)
			os.Exit(5)
		}
	case ModeFDs:
		if _, err := os.Stdin.Read(b[:]); err != nil {
			os.Exit(3)
		}
		for i := 0; i < args["fds"]; i++ {
			if _, err := syscall.Open(os.DevNull, syscall.O_RDONLY, 0); err != nil {
				fmt.Fprintf(os.Stderr, "cgrouptest: fds child: %v\n", err)
				os.Exit(4)
			}
		}
	default:
		fmt.Fprintf(os.Stderr, "cgrouptest: unknown child mode %q\n", mode)
		os.Exit(2)
	}
	select {}
}

var sink []byte

func burn(threads, mib int) {
	if mib > 0 {
		sink = make([]byte, mib<<20)
		for i := 0; i < len(sink); i += 4096 {
			sink[i] = 1
		}
	}
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

func spin(threads int) {
	script := fmt.Sprintf("i=0; while [ $i -lt %d ]; do (while :; do :; done) & i=$((i+1)); done; wait", threads)
	err := syscall.Exec("/bin/sh", []string{"sh", "-c", script}, os.Environ())
	fmt.Fprintf(os.Stderr, "cgrouptest: exec /bin/sh: %v\n", err)
	os.Exit(2)
}

// cache fills the page cache with mib MiB of path, charged to this cgroup.
func cache(path string, mib int) error {
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
	if err := f.Sync(); err != nil { // clean pages, so they can be dropped
		return err
	}
	// A page accessed twice moves to the active list.
	for pass := 0; pass < 2; pass++ {
		for off := int64(0); off < int64(mib)<<20; off += int64(len(buf)) {
			if _, err := f.ReadAt(buf, off); err != nil {
				return err
			}
		}
	}
	return os.WriteFile(path+".ready", nil, 0o644)
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

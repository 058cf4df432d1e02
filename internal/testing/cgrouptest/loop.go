// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package cgrouptest // import "github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Loop is a loop block device made for one test.
type Loop struct {
	Path         string // /dev/loopN
	Name         string // loopN, as the kernel names it
	Major, Minor uint32
}

// NewLoop creates a new loop device (a fresh request queue: nothing a
// previous test did to a queue, such as activating blk-throttle, carries
// over) backed by a sizeMiB file in a test directory, and removes both in
// cleanup. Needs root and /dev/loop-control.
func NewLoop(tb testing.TB, sizeMiB int) *Loop {
	tb.Helper()
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
	if err != nil {
		tb.Fatalf("loop device: %v", err)
	}
	defer ctl.Close()
	// An index no one uses: the kernel picks free ones from 0 up.
	idx := -1
	for i := 240; i < 480; i++ {
		if _, statErr := os.Stat(fmt.Sprintf("/sys/block/loop%d", i)); os.IsNotExist(statErr) {
			idx = i
			break
		}
	}
	if idx < 0 {
		tb.Fatal("loop device: no free index in 240..479")
	}
	if ioctlSetIntErr := unix.IoctlSetInt(int(ctl.Fd()), unix.LOOP_CTL_ADD, idx); ioctlSetIntErr != nil {
		tb.Fatalf("loop device: LOOP_CTL_ADD %d: %v", idx, ioctlSetIntErr)
	}
	l := &Loop{Path: fmt.Sprintf("/dev/loop%d", idx), Name: fmt.Sprintf("loop%d", idx), Major: 7, Minor: uint32(idx)}
	tb.Cleanup(func() {
		ctl, openFileErr := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
		if openFileErr != nil {
			tb.Errorf("loop device %s: %v", l.Path, openFileErr)
			return
		}
		defer ctl.Close()
		// EBUSY while the detach settles.
		for i := 0; ; i++ {
			removeErr := unix.IoctlSetInt(int(ctl.Fd()), unix.LOOP_CTL_REMOVE, idx)
			if removeErr == nil {
				return
			}
			if removeErr != unix.EBUSY || i == 100 {
				tb.Errorf("loop device %s: LOOP_CTL_REMOVE: %v", l.Path, removeErr)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	backing := filepath.Join(tb.TempDir(), "loop.img")
	bf, err := os.Create(backing)
	if err != nil {
		tb.Fatal(err)
	}
	defer bf.Close()
	if truncateErr := bf.Truncate(int64(sizeMiB) << 20); truncateErr != nil {
		tb.Fatal(truncateErr)
	}
	dev, err := os.OpenFile(l.Path, os.O_RDWR, 0)
	if err != nil {
		tb.Fatalf("loop device: %v", err)
	}
	defer dev.Close()
	if err := unix.IoctlSetInt(int(dev.Fd()), unix.LOOP_SET_FD, int(bf.Fd())); err != nil {
		tb.Fatalf("loop device %s: LOOP_SET_FD: %v", l.Path, err)
	}
	tb.Cleanup(func() { // before LOOP_CTL_REMOVE (cleanups run last first)
		dev, err := os.OpenFile(l.Path, os.O_RDWR, 0)
		if err != nil {
			tb.Errorf("loop device %s: %v", l.Path, err)
			return
		}
		defer dev.Close()
		if err := unix.IoctlSetInt(int(dev.Fd()), unix.LOOP_CLR_FD, 0); err != nil {
			tb.Errorf("loop device %s: LOOP_CLR_FD: %v", l.Path, err)
		}
	})
	return l
}

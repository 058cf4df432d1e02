// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package cgrouptest

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
)

// probeMiB is what ProbeBlkio writes.
const probeMiB = 4

// ProbeBlkio finds out from the kernel whether it accounts a container's
// block I/O on the device that holds path (a file, made if missing and
// removed after, or a block device) where the receiver reads it: a
// throw-away cgroup's child writes 4 MiB to path with O_DIRECT, so the
// bios are its own, and the receiver's reader (cgroupfs.Reader.IO) reads
// the cgroup. why says what the kernel showed.
//
// cgroup v2 (io.stat) accounts every cgroup. cgroup v1 accounts only on
// devices where blk-throttle is active, which it is from the first
// blkio.throttle.*_device rule anyone set on the device since boot
// (docs/blkio.md): a fact of the machine and of its history, so a test
// that expects a container's block I/O asks this first.
func ProbeBlkio(tb testing.TB, path string) (accounted bool, why string) {
	tb.Helper()
	c := NewStandaloneContainer(tb)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			tb.Fatal(err)
		}
		_ = f.Close()
		tb.Cleanup(func() { _ = os.Remove(path) })
	}
	ch := c.Start(tb, ModeDirectWrite, "file="+path, fmt.Sprintf("mib=%d", probeMiB))
	if err := ch.WaitTimeout(tb, time.Minute); err != nil {
		tb.Fatalf("block I/O probe: the O_DIRECT write to %s: %v", path, err)
	}
	l, err := cgroupfs.Detect("/")
	if err != nil {
		tb.Fatal(err)
	}
	st, err := cgroupfs.NewReader(l).IO(c.Rel, nil)
	if err != nil {
		tb.Fatal(err)
	}
	accounted, why = blkioVerdict(st, probeMiB<<20)
	return accounted, fmt.Sprintf("%d MiB written with O_DIRECT to %s from a fresh cgroup: %s", probeMiB, path, why)
}

// blkioVerdict says whether st, a cgroup's block I/O read after it wrote
// wrote bytes, shows the write accounted, and what it showed. Accounted:
// a device listed (v1 lists one only where it accounts; v2 lists what the
// cgroup did I/O on) with at least wrote bytes written.
func blkioVerdict(st cgroupfs.IOStat, wrote uint64) (bool, string) {
	if st.Source == cgroupfs.IONone {
		return false, "no block I/O files"
	}
	var devs []string
	accounted := false
	for _, d := range st.Devices {
		w := "absent"
		if d.WriteBytes.OK {
			w = fmt.Sprint(d.WriteBytes.V)
			accounted = accounted || d.WriteBytes.V >= wrote
		}
		devs = append(devs, fmt.Sprintf("%d:%d Write %s", d.Major, d.Minor, w))
	}
	if len(devs) == 0 {
		return false, st.Source.String() + " lists no device (Total 0): not accounted"
	}
	verdict := "accounted"
	if !accounted {
		verdict = fmt.Sprintf("not accounted (no device with %d bytes written)", wrote)
	}
	return accounted, fmt.Sprintf("%s lists %s: %s", st.Source, strings.Join(devs, ", "), verdict)
}

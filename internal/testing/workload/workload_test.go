// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package workload

import (
	"syscall"
	"testing"
	"time"
)

// TestBurnFor: burnFor returns once the process has used the CPU time
// asked for, and not long after.
func TestBurnFor(t *testing.T) {
	used := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	want := used() + 100*time.Millisecond
	if err := burnFor(want); err != nil {
		t.Fatal(err)
	}
	got := used()
	if got < want {
		t.Fatalf("burnFor(%s) returned at %s of CPU time", want, got)
	}
	// A check every ~1 ms of CPU; the test binary's other threads add a little.
	if got > want+50*time.Millisecond {
		t.Errorf("burnFor(%s) burned on to %s", want, got)
	}
}

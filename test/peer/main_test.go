// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package peer

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
)

func TestMain(m *testing.M) {
	runDockerstatsChild()
	runPeerChild()
	cgrouptest.MaybeRunChild()
	os.Exit(m.Run())
}

// Child modes of this harness (started through cgrouptest's Container.Start,
// which sets CGROUPTEST_CHILD to the mode).
const (
	// modeIdle: arg "threads=K": K extra OS threads, all asleep, plus the
	// Go runtime's own; nothing runs until killed.
	modeIdle = "peer-idle"
	// modeBusy: wakes every 250 ms, spins ~1 ms and rewrites 1 MiB of a
	// 4 MiB buffer (CPU time and memory counters move each interval) at
	// ~0.4% of a core.
	modeBusy = "peer-busy"
)

var sink []byte

// runPeerChild does a child's work, never returning, when this process was
// started in one of this harness's modes; otherwise it returns at once.
func runPeerChild() {
	mode := os.Getenv("CGROUPTEST_CHILD")
	if mode != modeIdle && mode != modeBusy {
		return
	}
	var b [1]byte // wait until moved into the cgroup
	if _, err := os.Stdin.Read(b[:]); err != nil {
		os.Exit(3)
	}
	threads := 0
	for _, a := range os.Args[1:] {
		if v, ok := strings.CutPrefix(a, "threads="); ok {
			threads, _ = strconv.Atoi(v)
		}
	}
	runtime.GOMAXPROCS(1)
	block := make(chan struct{})
	for i := 0; i < threads; i++ {
		go func() {
			runtime.LockOSThread() // one OS thread each, parked in futex
			<-block
		}()
	}
	if mode == modeBusy {
		sink = make([]byte, 4<<20)
		off := 0
		for {
			deadline := time.Now().Add(time.Millisecond)
			x := uint64(1)
			for time.Now().Before(deadline) {
				x = x*6364136223846793005 + 1442695040888963407
			}
			for i := 0; i < 1<<20; i += 4096 {
				sink[(off+i)%len(sink)] = byte(x)
			}
			off += 1 << 20
			time.Sleep(250 * time.Millisecond)
		}
	}
	select {}
}

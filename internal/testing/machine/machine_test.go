// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package machine

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"go.opentelemetry.io/collector/scraper/scrapererror"
)

func TestOwnErrorsKeepsOnlyOwnEntities(t *testing.T) {
	var errs scrapererror.ScrapeErrors
	errs.AddPartial(3, fmt.Errorf("container %s: %w", "aaaa1111", errors.New("cgroup vanished")))
	errs.AddPartial(2, fmt.Errorf("pod %s: %w", "pod-mine", errors.New("cgroup vanished")))
	errs.AddPartial(1, fmt.Errorf("container %s: %w", "bbbb2222", errors.New("cgroup vanished")))
	errs.AddPartial(1, errors.New("node memory: read /proc/meminfo: boom"))
	got := OwnErrors(errs.Combine(), "aaaa1111", "pod-mine")
	want := []string{
		"container aaaa1111: cgroup vanished",
		"pod pod-mine: cgroup vanished",
		"node memory: read /proc/meminfo: boom",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d errors %v, want %v", len(got), got, want)
	}
	for i := range want {
		if got[i].Error() != want[i] {
			t.Errorf("error %d = %q, want %q", i, got[i], want[i])
		}
	}
	if OwnErrors(nil, "x") != nil {
		t.Error("nil error gave errors")
	}
}

// TestLockExcludesOtherProcesses: while this process holds the lock, a second
// process cannot take it; after release this process holds no lock on it.
func TestLockExcludesOtherProcesses(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		Need(t, "flock(1) not installed (util-linux)")
	}
	try := func() error {
		return exec.Command("flock", "-n", LockPath(), "true").Run() //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
	}
	t.Run("held", func(t *testing.T) {
		Lock(t)
		Lock(t) // reentrant within the process
		if err := try(); err == nil {
			t.Fatal("another process took the lock while it was held")
		}
		if !ownsFlock(t) {
			t.Fatal("/proc/locks shows no lock of this process on the lock file")
		}
	})
	// Released: another process may take it at once (checking that here
	// would race with real-machine tests of other packages), so check that
	// this process let go of it.
	mu.Lock()
	n := holds
	mu.Unlock()
	if n != 0 {
		t.Fatalf("after the holders' cleanup: holds=%d", n)
	}
	if ownsFlock(t) {
		t.Fatal("after the holders' cleanup this process still holds the flock")
	}
}

// ownsFlock reports whether /proc/locks lists a FLOCK of this process on
// the lock file ("1: FLOCK  ADVISORY  WRITE <pid> <maj>:<min>:<inode> 0 EOF").
func ownsFlock(t *testing.T) bool {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(LockPath(), &st); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 && f[1] == "FLOCK" && f[4] == strconv.Itoa(os.Getpid()) && strings.HasSuffix(f[5], ":"+strconv.FormatUint(st.Ino, 10)) {
			return true
		}
	}
	return false
}

// Errors in the shapes the scraper gives them: entity prefix, wrapped
// twice, messages with "; " inside, a non-partial error.
func TestOwnErrorsShapes(t *testing.T) {
	own := strings.Repeat("a", 64)
	other := strings.Repeat("b", 64)
	var errs scrapererror.ScrapeErrors
	errs.AddPartial(1, fmt.Errorf("container %s: threads: %w", own, errors.New("read a; read b")))
	errs.AddPartial(1, fmt.Errorf("container %s: threads: %w", other, errors.New("read c; read d")))
	errs.AddPartial(1, fmt.Errorf("pod 0a1b2c3d-0000-0000-0000-000000000002: %w", errors.New("cgroup vanished")))
	got := OwnErrors(fmt.Errorf("scrape: %w", errs.Combine()), own)
	if len(got) != 1 || got[0].Error() != "container "+own+": threads: read a; read b" {
		t.Fatalf("got %q, want only the own container's error, whole", got)
	}
	whole := errors.New("discover cgroups: read /sys/fs/cgroup/cpu/kubepods/burstable: permission denied")
	if got := OwnErrors(whole, own); len(got) != 1 || !errors.Is(got[0], whole) {
		t.Fatalf("a non-partial error (the whole scrape failed) must be kept, got %v", got)
	}
	var plain scrapererror.ScrapeErrors
	plain.AddPartial(1, fmt.Errorf("container %s: %w", other, errors.New("cgroup vanished")))
	if got := OwnErrors(plain.Combine(), own); len(got) != 0 {
		t.Fatalf("another container's vanished cgroup is not this test's: %v", got)
	}
}

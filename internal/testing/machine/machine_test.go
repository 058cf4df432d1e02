// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package machine

import (
	"errors"
	"fmt"
	"os/exec"
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
// process cannot take it; after release it can.
func TestLockExcludesOtherProcesses(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock(1) not installed")
	}
	try := func() error {
		return exec.Command("flock", "-n", LockPath(), "true").Run()
	}
	t.Run("held", func(t *testing.T) {
		Lock(t)
		Lock(t) // reentrant within the process
		if err := try(); err == nil {
			t.Fatal("another process took the lock while it was held")
		}
	})
	// Released: another process may take it at once (checking that here
	// would race with real-machine tests of other packages), so check that
	// this process let go of it.
	mu.Lock()
	defer mu.Unlock()
	if holds != 0 || file != nil {
		t.Fatalf("after the holders' cleanup: holds=%d, file open=%v", holds, file != nil)
	}
}

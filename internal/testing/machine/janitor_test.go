// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package machine_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

func TestMain(m *testing.M) {
	cgrouptest.MaybeRunChild()
	os.Exit(m.Run())
}

const victimEnv = "MACHINE_JANITOR_VICTIM"

// TestJanitorVictim runs only as the child of
// TestJanitorSweepsAfterTestProcessDies: it takes the lock, makes a real
// container with three busy subshells in it (ModeSpin: orphans that no
// Pdeathsig reaches), reports them, then dies the way a test timeout kills
// a test binary: a panic in another goroutine, no cleanup run.
func TestJanitorVictim(t *testing.T) {
	out := os.Getenv(victimEnv)
	if out == "" {
		t.Skip("only run by TestJanitorSweepsAfterTestProcessDies")
	}
	c := cgrouptest.NewContainer(t, "burstable")
	c.Start(t, cgrouptest.ModeSpin, "threads=3")
	// Wait for the shell and its three subshells, and nothing else: until
	// the child has exec'd /bin/sh, its Go runtime's threads are there
	// too, so a bare count of 4 can be met before any subshell exists.
	var tids []int
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if tids = c.Threads(t); len(tids) == 4 && allShells(tids) {
			break
		}
	}
	var pids []string
	for _, tid := range tids {
		pids = append(pids, strconv.Itoa(tid))
	}
	if err := os.WriteFile(out, []byte(c.Rel+"\n"+strings.Join(pids, " ")+"\n"), 0o600); err != nil { //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
		t.Fatal(err)
	}
	go func() { panic("test timed out (simulated: the testing package's alarm panics like this)") }()
	select {}
}

// allShells reports whether every one of tids runs /bin/sh (its comm is
// "sh"); a thread that is gone already counts as not.
func allShells(tids []int) bool {
	for _, tid := range tids {
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", tid))
		if err != nil || strings.TrimSpace(string(comm)) != "sh" {
			return false
		}
	}
	return true
}

// TestJanitorSweepsAfterTestProcessDies: a test process that dies holding
// the machine lock (here a panic, as a test timeout is) leaves nothing: its
// janitor keeps the lock until it has killed the container's processes and
// removed its cgroups in every hierarchy, then lets the next test in.
func TestJanitorSweepsAfterTestProcessDies(t *testing.T) {
	machine.Need(t, cgrouptest.Available())
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(t.TempDir(), "victim")
	var out bytes.Buffer
	cmd := exec.Command(exe, "-test.run=^TestJanitorVictim$", "-test.v")
	cmd.Env = append(os.Environ(), victimEnv+"="+report)
	cmd.Stdout, cmd.Stderr = &out, &out
	// Wait returns once the victim and its janitor (which shares its
	// stderr) are gone.
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("victim: %v, want exit status 2 (a panic); output:\n%s", err, out.String())
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("victim never reported its container: %v; output:\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	rel, pids := lines[0], strings.Fields(lines[1])
	if len(pids) != 4 {
		t.Fatalf("victim's container had %d threads, want the shell and 3 subshells (and nothing else); output:\n%s", len(pids), out.String())
	}
	machine.Lock(t) // the janitor let go of it: its sweep is over
	want := fmt.Sprintf("machine janitor: test process %d died holding the machine lock", cmd.Process.Pid)
	if !strings.Contains(out.String(), want) {
		t.Errorf("no %q in the victim's output:\n%s", want, out.String())
	}
	for _, p := range pids {
		pid, _ := strconv.Atoi(p)
		// A zombie is dead (this machine's init may be slow to reap, or
		// not reap at all).
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !strings.Contains(string(st), ") Z ") {
			t.Errorf("victim's container process %d still alive: %s", pid, st)
		}
	}
	hs, _ := filepath.Glob(filepath.Join(cgrouptest.Base, "*"))
	for _, h := range hs {
		for _, d := range []string{rel, filepath.Dir(rel)} {
			if _, err := os.Stat(filepath.Join(h, d)); err == nil { //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
				t.Errorf("cgroup %s still there", filepath.Join(h, d))
			}
		}
	}
	t.Logf("victim output:\n%s", out.String())
}

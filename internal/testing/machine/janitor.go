// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package machine

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/containerstats/containerstatsreceiver/internal/testing/leftovers"
)

// janitorEnv marks the janitor: the test binary started again by Lock,
// with the test process's PID as the value (the janitor cannot ask
// getppid: a test process that dies before the janitor runs has already
// left it to init). A test binary's TestMain may be generated (the root
// package's is), so the janitor is entered from this package's init,
// before any test code runs: the one init of this test-only package, and
// it does nothing unless the variable is set.
const janitorEnv = "CONTAINERSTATS_MACHINE_JANITOR"

func init() {
	if v := os.Getenv(janitorEnv); v != "" {
		os.Exit(runJanitor(v))
	}
}

// startJanitor starts the janitor for this process if it has none: its
// stdin is a pipe only this process writes (EOF: this process is gone), fd
// 3 the lock file's open file description (so the flock stays held while
// the janitor lives, whoever else closes it). Under mu.
func startJanitor() error {
	if janitor != nil {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), janitorEnv+"="+strconv.Itoa(os.Getpid()))
	cmd.Stdin = r
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.ExtraFiles = []*os.File{file}
	// Its own process group: a Ctrl-C of `go test` reaches the test
	// process, not the janitor that cleans up after it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return err
	}
	// Never waited for: it exits when this process does (its stdin's EOF).
	_ = cmd.Process.Release()
	janitor = w
	return nil
}

// tellJanitor writes the lock's state: 'L' held, 'U' released. Under mu.
func tellJanitor(state byte) {
	if janitor != nil {
		if _, err := janitor.Write([]byte{state}); err != nil {
			janitor.Close()
			janitor = nil
		}
	}
}

// runJanitor waits for the test process to go away. If the last state it
// was told is 'L', the process died holding the lock with its cleanups not
// run: sweep, with the lock still held through fd 3.
func runJanitor(testPID string) int {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	lock := os.NewFile(3, "lock")
	defer lock.Close()
	parent, err := strconv.Atoi(testPID)
	if err != nil {
		parent = os.Getppid()
	}
	state := byte('U')
	buf := make([]byte, 64)
	for {
		n, readErr := os.Stdin.Read(buf)
		if n > 0 {
			state = buf[n-1] //nolint:gosec // G602: n <= len(buf) by io.Reader's contract
		}
		if readErr == io.EOF || readErr != nil && n == 0 {
			break
		}
	}
	if state != 'L' {
		return 0
	}
	o := leftovers.Default()
	ls, err := leftovers.Find(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "machine janitor: test process %d died holding the machine lock; finding its leftovers: %v\n", parent, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "machine janitor: test process %d died holding the machine lock; removing %d leftovers:\n%s", parent, len(ls), leftovers.Report(ls))
	for _, err := range leftovers.Clean(o, ls) {
		fmt.Fprintf(os.Stderr, "machine janitor: %v\n", err)
	}
	return 0
}

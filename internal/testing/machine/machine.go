// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

// Package machine is the one discipline of the tests that use this machine's
// shared real resources: the kubepods cgroup tree, a real containerd, a
// kubelet, Prometheus, or a scrape of the whole machine (root path "/").
//
// Such a test calls Lock(t) before it creates, destroys or scrapes anything
// real. Lock takes an exclusive flock on one well-known file, held until the
// test's cleanups have run (Lock registers its release first, so it runs
// last: after the test's processes, cgroups and mounts are gone). `go test
// ./...` runs packages as separate processes at once; with the lock, their
// real-machine tests run one after another and never see each other's pods.
// Within one test process the hold is shared (tests of one package, a test
// that builds two containers), so Lock never deadlocks on itself. The kernel
// drops the lock when the process dies, a test timeout's panic included.
//
// The lock is only half of it: a test asserts on its own containers and pods
// (by ID and UID), and fails on a scrape error that names one of them
// (see OwnErrors). CONTRIBUTING.md has the rules.
package machine // import "github.com/containerstats/containerstatsreceiver/internal/testing/machine"

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/scraper/scrapererror"
)

// LockPath is the file every real-machine test locks. It lives on /run
// (tmpfs, per boot) when the machine has one, else in /tmp.
func LockPath() string {
	if fi, err := os.Stat("/run"); err == nil && fi.IsDir() {
		return "/run/containerstats-tests.lock"
	}
	return "/tmp/containerstats-tests.lock"
}

// The process-wide hold: test-only state, shared by the tests of one binary.
var (
	mu    sync.Mutex
	holds int
	file  *os.File
)

// Lock takes the machine-wide test lock for t (blocking while another test
// process holds it) and releases it in t's cleanup, after every cleanup t
// registers later.
func Lock(t testing.TB) {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if holds == 0 {
		f, err := acquire(t)
		if err != nil {
			t.Fatalf("machine lock %s: %v", LockPath(), err)
		}
		file = f
	}
	holds++
	t.Cleanup(release)
}

func acquire(t testing.TB) (*os.File, error) {
	path := LockPath()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		holder, _ := os.ReadFile(path)
		t.Logf("machine lock %s is held (%s); waiting", path, strings.TrimSpace(string(holder)))
		start := time.Now()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, err
		}
		t.Logf("machine lock taken after %s", time.Since(start).Round(time.Millisecond))
	}
	// Who holds it, for the log of a test that waits.
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(fmt.Sprintf("pid %d, %s\n", os.Getpid(), strings.Join(os.Args, " "))), 0)
	return f, nil
}

func release() {
	mu.Lock()
	defer mu.Unlock()
	holds--
	if holds == 0 && file != nil {
		_ = file.Truncate(0)
		_ = syscall.Flock(int(file.Fd()), syscall.LOCK_UN)
		file.Close()
		file = nil
	}
}

// OwnErrors returns the parts of a scrape error (a multierr, e.g. a partial
// scrape error) that name one of the given IDs (container IDs, pod UIDs):
// the errors a test must fail on. Errors about other entities on the machine
// (which a real node has, and which may vanish mid-scrape) are left out.
// An error naming no entity at all is kept: it is not about somebody else's.
func OwnErrors(err error, own ...string) []error {
	var out []error
	for _, e := range flatten(err) {
		msg := e.Error()
		if !namesEntity(msg) {
			out = append(out, e)
			continue
		}
		for _, id := range own {
			if id != "" && strings.Contains(msg, id) {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// namesEntity reports whether msg names a container, pod or cgroup (the
// forms the scraper's partial errors take: "container <id>: ...",
// "pod <uid>: ...", a cgroup path under kubepods).
func namesEntity(msg string) bool {
	for _, p := range []string{"container ", "pod ", "kubepods"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// flatten lists the leaves of a joined error (errors.Join, multierr), each
// with its own message. A scrapererror.PartialScrapeError hides the joined
// error in an unexported embedded field and has no Unwrap, so its message is
// split where multierr joined it ("; ").
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if m, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range m.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	var partial scrapererror.PartialScrapeError
	if errors.As(err, &partial) {
		var out []error
		for _, msg := range strings.Split(partial.Error(), "; ") {
			out = append(out, errors.New(msg))
		}
		return out
	}
	return []error{err}
}

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
	"io/fs"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

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

// The process-wide hold: test-only state, shared by the tests of one
// binary. file stays open for the process's life (the janitor shares its
// open file description, so the flock on it is one for both).
var (
	mu      sync.Mutex
	holds   int
	file    *os.File
	janitor *os.File // write end of the janitor's control pipe; nil: none
)

// Lock takes the machine-wide test lock for t (blocking while another test
// process holds it) and releases it in t's cleanup, after every cleanup t
// registers later. Call it before anything else the test cleans up.
//
// The first Lock of a process also starts the process's janitor (the test
// binary again, see janitorEnv): if the test process dies while it holds
// the lock (a test timeout's panic, a SIGKILL), the janitor keeps the lock
// held, removes what the dead tests left (leftovers.Find, leftovers.Clean:
// containerd shims and containers, cgroups, mounts), says so on stderr and
// exits, releasing the lock.
func Lock(tb testing.TB) {
	tb.Helper()
	mu.Lock()
	defer mu.Unlock()
	if holds == 0 {
		if err := acquire(tb.Logf); err != nil {
			if os.Geteuid() != 0 {
				mu.Unlock()
				defer mu.Lock()
				Need(tb, fmt.Sprintf("not root: machine lock %s: %v", LockPath(), err))
			}
			tb.Fatalf("machine lock %s: %v", LockPath(), err)
		}
		if err := startJanitor(); err != nil { // once per process (or per lock file)
			tb.Logf("machine lock: no janitor (a crash of this test process would leave its leftovers to `make leftovers`): %v", err)
		}
		tellJanitor('L')
	}
	holds++
	tb.Cleanup(release)
}

// Acquire takes the lock outside a test (the leftovers check); release
// with the returned function.
func Acquire(logf func(string, ...any)) (func(), error) {
	mu.Lock()
	defer mu.Unlock()
	if holds == 0 {
		if err := acquire(logf); err != nil {
			return nil, err
		}
	}
	holds++
	return release, nil
}

// acquire flocks the lock file, reopening it when it was replaced on disk
// (a lock on an unlinked file excludes nobody). Under mu.
func acquire(logf func(string, ...any)) error {
	path := LockPath()
	for {
		if file == nil {
			f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC, 0o644)
			if errors.Is(err, fs.ErrPermission) {
				// flock needs no write access (another user made the file).
				f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_CLOEXEC, 0)
			}
			if err != nil {
				return err
			}
			file = f
		}
		fd := int(file.Fd())
		if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			if !errors.Is(err, syscall.EWOULDBLOCK) {
				return err
			}
			holder, _ := os.ReadFile(path)
			logf("machine lock %s is held (%s); waiting", path, strings.TrimSpace(string(holder)))
			start := time.Now()
			if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
				return err
			}
			logf("machine lock taken after %s", time.Since(start).Round(time.Millisecond))
		}
		var held, onDisk syscall.Stat_t
		if syscall.Fstat(fd, &held) == nil && syscall.Stat(path, &onDisk) == nil && held.Ino == onDisk.Ino && held.Dev == onDisk.Dev {
			break
		}
		_ = syscall.Flock(fd, syscall.LOCK_UN)
		if janitor != nil { // it shares the stale file: let it go
			_ = janitor.Close()
			janitor = nil
		}
		file.Close()
		file = nil
		time.Sleep(10 * time.Millisecond)
	}
	// Who holds it, for the log of a test that waits.
	_ = file.Truncate(0)
	_, _ = file.WriteAt([]byte(fmt.Sprintf("pid %d, %s\n", os.Getpid(), strings.Join(os.Args, " "))), 0)
	return nil
}

func release() {
	mu.Lock()
	defer mu.Unlock()
	holds--
	if holds == 0 && file != nil {
		tellJanitor('U')
		_ = file.Truncate(0)
		_ = syscall.Flock(int(file.Fd()), syscall.LOCK_UN)
	}
}

// OwnErrors returns the parts of a scrape error that a test must fail on:
// every leaf of a partial scrape error (scrapererror.ScrapeErrors joins one
// per entity) that names one of the given IDs (container IDs, pod UIDs) or
// names no container or pod at all (the node, discovery), and any error
// that is not a partial one (the whole scrape failed: never another
// entity's fault). Left out are the leaves about other containers and pods
// on the machine, which a real node has and which may vanish mid-scrape.
func OwnErrors(err error, own ...string) []error {
	if err == nil {
		return nil
	}
	if !scrapererror.IsPartialScrapeError(err) {
		return []error{err}
	}
	var out []error
	for _, e := range leaves(err) {
		msg := e.Error()
		if mine(msg, own) || !namesEntity(msg) {
			out = append(out, e)
		}
	}
	return out
}

// RequireNoOwnErrors fails t at once when OwnErrors(err, own...) is not
// empty, naming each error; errors about other entities are logged.
func RequireNoOwnErrors(tb testing.TB, err error, own ...string) {
	tb.Helper()
	if err == nil {
		return
	}
	mineErrs := OwnErrors(err, own...)
	if len(mineErrs) == 0 {
		tb.Logf("scrape errors about other entities on the machine (ignored): %v", err)
		return
	}
	for _, e := range mineErrs {
		tb.Errorf("scrape error about this test's own entities %v (or none): %v", own, e)
	}
	tb.FailNow()
}

func mine(msg string, own []string) bool {
	for _, id := range own {
		if id != "" && strings.Contains(msg, id) {
			return true
		}
	}
	return false
}

// entityRE matches what names a container or pod in the scraper's partial
// errors: its "container <id>" / "pod <uid>" prefix, a 64-hex container
// ID, a pod UID (with - or, systemd-escaped, _), a kubepods cgroup path.
var entityRE = regexp.MustCompile(`(^|: )(container|pod) \S|[0-9a-f]{64}|[0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12}|kubepods`)

func namesEntity(msg string) bool { return entityRE.MatchString(msg) }

// leaves lists the leaf errors of a joined error (errors.Join, multierr,
// ScrapeErrors.Combine), each with its own message. A
// scrapererror.PartialScrapeError keeps what it wraps in an unexported
// embedded field and has no Unwrap: it is read by reflection (test code
// only), so a leaf's message is never cut where it contains "; ".
func leaves(err error) []error {
	if err == nil {
		return nil
	}
	if p, ok := err.(scrapererror.PartialScrapeError); ok { //nolint:errorlint // this level only: a wrapped partial error is the case below
		if inner := partialInner(p); inner != nil {
			return leaves(inner)
		}
		return []error{err}
	}
	if m, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range m.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	// A partial error wrapped once more (fmt.Errorf("...: %w", partial)).
	// A leaf wrapping a plain error stays whole: its message names the
	// entity, what it wraps does not.
	var p scrapererror.PartialScrapeError
	if errors.As(err, &p) {
		return leaves(p)
	}
	return []error{err}
}

// partialInner is the error a PartialScrapeError wraps.
func partialInner(p scrapererror.PartialScrapeError) error {
	v := reflect.ValueOf(&p).Elem().FieldByName("error")
	if !v.IsValid() || v.Kind() != reflect.Interface || v.IsNil() {
		return nil
	}
	e, _ := reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem().Interface().(error)
	return e
}

// Need skips t with why when why is not empty, or fails it under CI (CI
// set): there every prerequisite of the real-machine tests is installed
// (.ci/run), so a missing one is a broken CI, never a silent skip.
func Need(tb testing.TB, why string) {
	tb.Helper()
	if why == "" {
		return
	}
	if os.Getenv("CI") != "" {
		tb.Fatalf("prerequisite missing in CI: %s", why)
		return // a real Fatalf does not return; a recording TB's does
	}
	tb.Skip(why)
}

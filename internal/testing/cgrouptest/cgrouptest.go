// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

// Package cgrouptest creates real cgroups on the test machine, shaped like a
// Kubernetes container (/kubepods/<qos>/pod<uid>/<64-hex id>, cgroupfs
// driver), and runs child processes inside them. Tests that use it need root
// and a writable /sys/fs/cgroup; everything they create is removed in
// t.Cleanup (processes by PID, cgroup directories deepest first in every
// hierarchy). NewContainer takes the machine lock (internal/testing/machine)
// first; pod UIDs carry the test mark (leftovers.TestPodUID).
//
// Children are the test binary itself: a package's TestMain calls
// MaybeRunChild first, which runs the child's work instead of the tests when
// the process was started by Container.Start.
package cgrouptest // import "github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/containerstats/containerstatsreceiver/internal/testing/leftovers"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// Base is where the machine's cgroup hierarchies are mounted.
const Base = "/sys/fs/cgroup"

// Container is a real cgroup shaped like a Kubernetes container.
type Container struct {
	PodUID  string
	ID      string
	QoS     string
	Rel     string   // /kubepods/<qos>/pod<uid>/<id>
	dirs    []string // the container's directory in each hierarchy
	cleanup []string // every directory created, deepest first
}

// Available reports why real cgroup tests cannot run here, or "" if they can.
func Available() string {
	if os.Geteuid() != 0 {
		return "needs root to create cgroups"
	}
	if _, err := os.Stat(filepath.Join(Base, "memory", "cgroup.procs")); err != nil {
		if _, err2 := os.Stat(filepath.Join(Base, "cgroup.controllers")); err2 != nil {
			return "no cgroup hierarchy at " + Base
		}
	}
	return ""
}

// hierarchies lists every hierarchy mount under Base: each v1 controller
// directory and the v2 tree (Base itself on v2, Base/unified on hybrid).
func hierarchies() ([]string, error) {
	if _, err := os.Stat(filepath.Join(Base, "cgroup.controllers")); err == nil {
		return []string{Base}, nil
	}
	entries, err := os.ReadDir(Base)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 || !e.IsDir() {
			continue // cpu -> cpu,cpuacct: the real mount is listed too
		}
		dir := filepath.Join(Base, e.Name())
		if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err == nil {
			out = append(out, dir)
		}
	}
	return out, nil
}

func randomHex(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// NewContainer creates the container's cgroup (and its pod and QoS parents)
// in every hierarchy. qos is "burstable" or "besteffort".
func NewContainer(tb testing.TB, qos string) *Container {
	tb.Helper()
	machine.Lock(tb) // before any cleanup: released after them
	machine.Need(tb, Available())
	c := &Container{
		PodUID: leftovers.TestPodUID(),
		ID:     randomHex(64),
		QoS:    qos,
	}
	c.Rel = fmt.Sprintf("/kubepods/%s/pod%s/%s", qos, c.PodUID, c.ID)
	c.create(tb, 2) // kubepods, the QoS level: shared
	return c
}

// NewStandaloneContainer creates a cgroup shaped like a container outside
// Kubernetes (/containerstats-test/<64-hex id>, which the receiver reports
// with standalone_containers), in every hierarchy. It has no pod: PodUID and
// QoS are empty. The top level, named leftovers.StandaloneTop, is shared and
// removed when empty.
func NewStandaloneContainer(tb testing.TB) *Container {
	tb.Helper()
	machine.Lock(tb) // before any cleanup: released after them
	machine.Need(tb, Available())
	c := &Container{ID: randomHex(64)}
	c.Rel = "/" + leftovers.StandaloneTop + "/" + c.ID
	c.create(tb, 1)
	return c
}

// create makes c.Rel in every hierarchy; the first shared levels are
// shared between containers of this process.
func (c *Container) create(tb testing.TB, shared int) {
	tb.Helper()
	hs, err := hierarchies()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.remove)
	// Under sharedMu, which removeShared holds too: a parallel subtest's
	// cleanup must not remove a shared level between this container's mkdir
	// of it (EEXIST) and of the level below (ENOENT, seen in a CI run's
	// TestRuntimeOutages). Once the container exists, its pod keeps the
	// shared levels from being removed.
	sharedMu.Lock()
	defer sharedMu.Unlock()
	for _, h := range hs {
		// Record each level we create so cleanup removes only ours.
		parts := strings.Split(strings.Trim(c.Rel, "/"), "/")
		p := h
		for i, part := range parts {
			p = filepath.Join(p, part)
			if err := os.Mkdir(p, 0o755); err == nil {
				c.cleanup = append([]string{p}, c.cleanup...)
				if i < shared {
					madeHere.Store(p, true)
				}
			} else if !errors.Is(err, fs.ErrExist) {
				tb.Fatalf("create cgroup %s: %v", p, err)
			}
			inheritCpuset(tb, p)
		}
		c.dirs = append(c.dirs, p)
	}
}

// inheritCpuset gives a v1 cpuset cgroup its parent's CPUs and memory nodes:
// a new one starts empty and refuses tasks (ENOSPC).
func inheritCpuset(tb testing.TB, dir string) {
	for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
		cur, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || len(strings.TrimSpace(string(cur))) > 0 {
			continue // not a cpuset hierarchy, or already set
		}
		parent, err := os.ReadFile(filepath.Join(filepath.Dir(dir), f))
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), parent, 0o600); err != nil { //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
			tb.Fatalf("inherit %s in %s: %v", f, dir, err)
		}
	}
}

// Dir returns the container's directory in the hierarchy named name
// ("memory", "cpu", "cpuacct", "unified", or "" on a v2 machine).
func (c *Container) Dir(name string) string {
	return filepath.Join(Base, name, c.Rel)
}

// Write writes value into a control file of the container (e.g. "memory",
// "memory.limit_in_bytes", "64M"). Only tests write to cgroupfs; the
// receiver never does.
func (c *Container) Write(tb testing.TB, hierarchy, file, value string) {
	tb.Helper()
	if err := os.WriteFile(filepath.Join(c.Dir(hierarchy), file), []byte(value), 0o600); err != nil {
		tb.Fatalf("write %s %s: %v", file, value, err)
	}
}

// Child is a process started in the container.
type Child struct {
	Cmd  *exec.Cmd
	gate *os.File
}

// Start runs the test binary as a child doing mode (see MaybeRunChild) with
// args, moves it into the container's cgroup in every hierarchy, then lets it
// begin, so everything it does is charged to the container.
func (c *Container) Start(tb testing.TB, mode string, args ...string) *Child {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"-test.run=^$"}, args...)...)
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	if mode == ModeFDs {
		// The runtime would open its cgroup's CPU limit files at a moment
		// of its own (GOMAXPROCS from the container's quota) and keep them
		// open: a descriptor count must not move but by the child's own.
		cmd.Env = append(cmd.Env, "GODEBUG=containermaxprocs=0,updatemaxprocs=0")
	}
	cmd.Stdin = r
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	// Its own process group (Kill ends its subshells too); killed with
	// this process if the test binary dies first (a test timeout).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	_ = r.Close()
	ch := &Child{Cmd: cmd, gate: w}
	tb.Cleanup(ch.Kill)
	for _, d := range c.dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600); err != nil {
			tb.Fatalf("move pid %d into %s: %v", cmd.Process.Pid, d, err)
		}
	}
	if _, err := w.Write([]byte{1}); err != nil {
		tb.Fatal(err)
	}
	return ch
}

// Poke lets a child that waits for a second signal (ModeFDs) go on.
func (ch *Child) Poke(tb testing.TB) {
	tb.Helper()
	if _, err := ch.gate.Write([]byte{2}); err != nil {
		tb.Fatal(err)
	}
}

// Kill ends the child and waits for it; safe to call twice.
func (ch *Child) Kill() {
	if ch.Cmd.ProcessState != nil {
		return
	}
	_ = syscall.Kill(-ch.Cmd.Process.Pid, syscall.SIGKILL)
	_ = ch.Cmd.Wait()
	_ = ch.gate.Close()
}

// Wait waits for the child to exit on its own.
func (ch *Child) Wait() error { return ch.Cmd.Wait() }

// WaitTimeout waits up to d for the child to exit on its own; it fails the
// test if it does not (the child is then killed by Kill in cleanup).
func (ch *Child) WaitTimeout(tb testing.TB, d time.Duration) error {
	tb.Helper()
	done := make(chan error, 1)
	go func() { done <- ch.Cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		_ = syscall.Kill(-ch.Cmd.Process.Pid, syscall.SIGKILL)
		<-done //nolint:errcheck // killed: its exit error says only that
		tb.Fatalf("child %d did not exit within %v", ch.Cmd.Process.Pid, d)
		return nil
	}
}

// madeHere holds the shared levels (kubepods, its QoS children) that this
// process created: containers of one process (parallel subtests) share
// them, so the one that created a level may not be the last to leave it.
// Each container's cleanup removes those that are empty by then; the last
// one removes them all. Test-only process state, like the machine lock's.
var madeHere sync.Map

// remove deletes the container's and its pod's cgroup directories deepest
// first, then the shared levels this process created that nothing uses
// any more. A cgroup with processes left cannot be removed: retry briefly
// while killed children are reaped.
func (c *Container) remove() {
	for _, d := range c.cleanup {
		if _, shared := madeHere.Load(d); shared {
			continue
		}
		for i := 0; i < 50; i++ {
			if err := syscall.Rmdir(d); err == nil || errors.Is(err, syscall.ENOENT) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	removeShared()
}

var sharedMu sync.Mutex

// removeShared removes, deepest first, the shared levels this process made
// that have no child cgroup left (another container's pod keeps one).
func removeShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	var dirs []string
	madeHere.Range(func(k, _ any) bool { dirs = append(dirs, k.(string)); return true })
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	for _, d := range dirs {
		if hasChildCgroup(d) {
			continue
		}
		for i := 0; i < 50; i++ {
			if err := syscall.Rmdir(d); err == nil || errors.Is(err, syscall.ENOENT) {
				madeHere.Delete(d)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func hasChildCgroup(d string) bool {
	entries, _ := os.ReadDir(d)
	for _, e := range entries {
		if e.IsDir() {
			return true
		}
	}
	return false
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

// Package podmantest runs rootful Podman containers for a real-machine
// test: Debian's podman with storage of its own (the vfs driver: no
// overlay mounts), its runtime state and temporary files under the test's
// temp directory, the cgroupfs manager (the container's cgroup is
// /libpod_parent/libpod-<id> in every hierarchy), runc (crun refuses a
// hybrid layout), no network (Podman's default network would leave a
// bridge whose subnet the cluster test uses), and a local busybox image
// (no registry). Everything it made is removed in t.Cleanup, even after a
// failure: its containers and image through podman, then the cgroups
// /libpod_parent/conmon and /libpod_parent and Podman's lock segment
// /dev/shm/libpod_lock where the test made them (not there before), and
// the temp directory, after checking nothing is mounted below it.
//
// The caller holds the machine lock (machine.Lock). A machine without
// podman, runc or a static busybox skips the test, and fails it under CI,
// which installs them (Debian packages podman, runc, busybox-static).
package podmantest // import "github.com/containerstats/containerstatsreceiver/internal/testing/podmantest"

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// Image is the local busybox image every container runs.
const Image = "localhost/containerstats-podmantest:1"

const (
	runc    = "/usr/sbin/runc"
	busybox = "/bin/busybox"
	shmLock = "/dev/shm/libpod_lock"
)

// Podman is one test's Podman: its flags and what to clean up.
type Podman struct {
	dir  string
	args []string
}

// Container is a running container.
type Container struct {
	ID        string // 64 hex
	PID       int    // its init process, in the host's PID namespace
	ConmonPID int
}

// Options are NewWith's.
type Options struct {
	// ImageFiles are more executables in Image: the path in the image
	// ("bin/workload") to the host file (machine.BusyboxTarWith).
	ImageFiles map[string]string
}

// New prepares Podman for t and imports the busybox image.
func New(tb testing.TB) *Podman {
	tb.Helper()
	return NewWith(tb, Options{})
}

// NewWith is New with o's image files.
func NewWith(tb testing.TB, o Options) *Podman {
	tb.Helper()
	if os.Geteuid() != 0 {
		machine.Need(tb, "podmantest needs root (rootful Podman)")
	}
	for _, bin := range []string{"podman", runc, busybox} {
		if _, err := exec.LookPath(bin); err != nil {
			machine.Need(tb, fmt.Sprintf("podmantest needs %s (Debian packages podman, runc, busybox-static)", bin))
		}
	}
	dir := tb.TempDir()
	p := &Podman{dir: dir, args: []string{
		"--root", filepath.Join(dir, "root"), "--runroot", filepath.Join(dir, "run"), "--tmpdir", filepath.Join(dir, "tmp"),
		"--storage-driver", "vfs", "--cgroup-manager", "cgroupfs", "--events-backend", "none", "--runtime", runc,
	}}
	made := machine.Absent(append(machine.CgroupDirs("libpod_parent/conmon"), append(machine.CgroupDirs("libpod_parent"), shmLock)...))
	tb.Cleanup(func() { p.cleanup(tb, made) })

	archive, err := machine.BusyboxTarWith(dir, o.ImageFiles, "sh", "sleep", "dd", "cat")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := p.run(tb, bytes.NewBuffer(archive), "import", "-", Image); err != nil {
		tb.Fatal(err)
	}
	return p
}

// Run starts a detached container named name running cmd, and returns it
// once its init process runs.
func (p *Podman) Run(tb testing.TB, name string, cmd ...string) Container {
	tb.Helper()
	return p.RunLabelled(tb, name, nil, cmd...)
}

// RunLabelled is Run with container labels.
func (p *Podman) RunLabelled(tb testing.TB, name string, labels map[string]string, cmd ...string) Container {
	tb.Helper()
	args := []string{"run", "-d", "--name", name, "--network", "none", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"}
	for k, v := range labels {
		args = append(args, "--label", k+"="+v)
	}
	out, err := p.run(tb, nil, append(append(args, Image), cmd...)...)
	if err != nil {
		tb.Fatal(err)
	}
	c := Container{ID: strings.TrimSpace(string(out))}
	out, err = p.run(tb, nil, "inspect", "--format", "{{.State.Pid}} {{.State.ConmonPid}}", c.ID)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := fmt.Sscan(string(out), &c.PID, &c.ConmonPID); err != nil || c.PID <= 0 {
		tb.Fatalf("podman inspect %s: %q: %v", c.ID, out, err)
	}
	return c
}

// Service starts Podman's Docker-compatible API (`podman system service`)
// on a socket in the temp directory, serving this harness' storage, and
// returns the socket once it answers. It is stopped in t.Cleanup (before
// the containers are removed) and dies with the test.
func (p *Podman) Service(tb testing.TB) string {
	tb.Helper()
	sock := filepath.Join(p.dir, "podman.sock")
	cmd := exec.Command("podman", append(append([]string{}, p.args...), "system", "service", "--time=0", "unix://"+sock)...) //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	logs, err := os.Create(filepath.Join(p.dir, "service.log"))
	if err != nil {
		tb.Fatal(err)
	}
	defer logs.Close()
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	logged := func() string { b, _ := os.ReadFile(logs.Name()); return string(b) }
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.Dial("unix", sock); err == nil {
			_ = c.Close()
			return sock
		}
		select {
		case <-exited:
			tb.Fatalf("podman system service exited: %s", logged())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("podman system service did not listen within 30 s: %s", logged())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// DockerArchive loads the OCI image archive archive (make image's) into
// this Podman and writes image, one of its names, as a docker-archive tar
// in the temp directory, whose path it returns: what `docker load` of
// Docker 20.10 takes (it refuses an OCI layout).
func (p *Podman) DockerArchive(tb testing.TB, archive, image string) string {
	tb.Helper()
	if _, err := p.run(tb, nil, "load", "-i", archive); err != nil {
		tb.Fatal(err)
	}
	out := filepath.Join(p.dir, "docker-archive.tar")
	if _, err := p.run(tb, nil, "save", "--format", "docker-archive", "-o", out, image); err != nil {
		tb.Fatal(err)
	}
	return out
}

// run runs podman with the harness' flags and args, stdin from in.
func (p *Podman) run(tb testing.TB, in io.Reader, args ...string) ([]byte, error) {
	tb.Helper()
	return machine.RunCLI(in, "podman "+strings.Join(args, " "), append(append([]string{"podman"}, p.args...), args...)...)
}

// cleanup removes the containers and the image, then what absent found
// missing before the test (made), and checks nothing stays mounted below
// the temp directory (which t.TempDir removes after).
func (p *Podman) cleanup(tb testing.TB, made []string) {
	if _, err := p.run(tb, nil, "rm", "--all", "--force", "--time", "0"); err != nil {
		tb.Error(err)
	}
	if _, err := p.run(tb, nil, "rmi", "--all", "--force"); err != nil {
		tb.Error(err)
	}
	// Made paths deepest first: the cgroups of conmon, then their parent.
	for _, path := range made {
		if err := machine.RemoveWhenEmpty(path); err != nil {
			tb.Error(err)
		}
	}
	if mounts, err := os.ReadFile("/proc/self/mountinfo"); err == nil && bytes.Contains(mounts, []byte(" "+p.dir+"/")) {
		tb.Errorf("podman left a mount below %s", p.dir)
	}
}

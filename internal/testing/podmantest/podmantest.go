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
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// New prepares Podman for t and imports the busybox image.
func New(t testing.TB) *Podman {
	t.Helper()
	if os.Geteuid() != 0 {
		machine.Need(t, "podmantest needs root (rootful Podman)")
	}
	for _, bin := range []string{"podman", runc, busybox} {
		if _, err := exec.LookPath(bin); err != nil {
			machine.Need(t, fmt.Sprintf("podmantest needs %s (Debian packages podman, runc, busybox-static)", bin))
		}
	}
	dir := t.TempDir()
	p := &Podman{dir: dir, args: []string{
		"--root", filepath.Join(dir, "root"), "--runroot", filepath.Join(dir, "run"), "--tmpdir", filepath.Join(dir, "tmp"),
		"--storage-driver", "vfs", "--cgroup-manager", "cgroupfs", "--events-backend", "none", "--runtime", runc,
	}}
	made := absent(append(cgroupDirs("libpod_parent/conmon"), append(cgroupDirs("libpod_parent"), shmLock)...))
	t.Cleanup(func() { p.cleanup(t, made) })

	rootfs := filepath.Join(dir, "rootfs")
	bin := filepath.Join(rootfs, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(busybox)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "busybox"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, applet := range []string{"sh", "sleep", "dd", "cat"} {
		if err := os.Symlink("busybox", filepath.Join(bin, applet)); err != nil {
			t.Fatal(err)
		}
	}
	archive, err := exec.Command("tar", "-C", rootfs, "-c", ".").Output()
	if err != nil {
		t.Fatalf("tar the busybox root: %v", err)
	}
	if _, err := p.run(t, bytes.NewBuffer(archive), "import", "-", Image); err != nil {
		t.Fatal(err)
	}
	return p
}

// Run starts a detached container named name running cmd, and returns it
// once its init process runs.
func (p *Podman) Run(t testing.TB, name string, cmd ...string) Container {
	t.Helper()
	out, err := p.run(t, nil, append([]string{"run", "-d", "--name", name, "--network", "none",
		"--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024", Image}, cmd...)...)
	if err != nil {
		t.Fatal(err)
	}
	c := Container{ID: strings.TrimSpace(string(out))}
	out, err = p.run(t, nil, "inspect", "--format", "{{.State.Pid}} {{.State.ConmonPid}}", c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscan(string(out), &c.PID, &c.ConmonPID); err != nil || c.PID <= 0 {
		t.Fatalf("podman inspect %s: %q: %v", c.ID, out, err)
	}
	return c
}

// run runs podman with the harness' flags and args, stdin from in.
func (p *Podman) run(t testing.TB, in *bytes.Buffer, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "podman", append(append([]string{}, p.args...), args...)...)
	if in != nil {
		cmd.Stdin = in
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("podman %s: %w: %s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}

// cleanup removes the containers and the image, then what absent found
// missing before the test (made), and checks nothing stays mounted below
// the temp directory (which t.TempDir removes after).
func (p *Podman) cleanup(t testing.TB, made []string) {
	if _, err := p.run(t, nil, "rm", "--all", "--force", "--time", "0"); err != nil {
		t.Error(err)
	}
	if _, err := p.run(t, nil, "rmi", "--all", "--force"); err != nil {
		t.Error(err)
	}
	// Made paths deepest first: the cgroups of conmon, then their parent.
	for _, path := range made {
		if err := removeWhenEmpty(path); err != nil {
			t.Error(err)
		}
	}
	if mounts, err := os.ReadFile("/proc/self/mountinfo"); err == nil && bytes.Contains(mounts, []byte(" "+p.dir+"/")) {
		t.Errorf("podman left a mount below %s", p.dir)
	}
}

// cgroupDirs is rel in every cgroup hierarchy of the machine (the unified
// tree and each v1 one).
func cgroupDirs(rel string) []string {
	dirs := []string{filepath.Join("/sys/fs/cgroup", rel)}
	hs, _ := filepath.Glob("/sys/fs/cgroup/*/cgroup.procs")
	for _, h := range hs {
		dirs = append(dirs, filepath.Join(filepath.Dir(h), rel))
	}
	return dirs
}

// absent returns, in order, the paths that do not exist now: what the test
// will have made.
func absent(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); os.IsNotExist(err) {
			out = append(out, p)
		}
	}
	return out
}

// removeWhenEmpty removes path (a cgroup directory, once the processes in
// it have gone, or a file), retrying for a few seconds; a path that is
// already gone is fine.
func removeWhenEmpty(path string) error {
	var err error
	for range 50 {
		err = os.Remove(path)
		if err == nil || os.IsNotExist(err) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("remove %s: %w", path, err)
}

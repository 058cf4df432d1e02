// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

// Package dockertest runs a private dockerd for a real-machine test:
// Debian's docker.io (20.10) with its own containerd, its data root, exec
// root, pidfile and API socket under the test's temp directory, no
// iptables, no bridge and no userland proxy (containers run with
// --network none), the cgroupfs driver (a container's cgroup is
// /docker/<id> in every hierarchy), and a local busybox image (no
// registry). Everything it made is removed in t.Cleanup, even after a
// failure: its containers and images through the API, dockerd (which stops
// its containerd) by its PID, then the cgroups /docker and the trust key
// /etc/docker/key.json where the test made them (not there before), after
// checking nothing stays mounted below the temp directory.
//
// The caller holds the machine lock (machine.Lock). A machine without
// dockerd, docker, docker-compose or a static busybox skips the test, and
// fails it under CI, which installs them (Debian packages docker.io,
// docker-compose, busybox-static).
package dockertest // import "github.com/containerstats/containerstatsreceiver/internal/testing/dockertest"

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// Image is the local busybox image every container runs.
const Image = "localhost/containerstats-dockertest:1"

// ShopCompose is a two-service compose project on Image, for
// Compose(t, "shop", ShopCompose): compose labels its containers
// com.docker.compose.project / .service itself; web adds a label of its
// own (com.example.team), worker holds 24 MiB in /dev/shm.
const ShopCompose = `version: "2.4"
services:
  web:
    image: ` + Image + `
    command: ["sleep", "600"]
    network_mode: none
    ulimits: {nproc: 1024}
    labels: {com.example.team: payments}
  worker:
    image: ` + Image + `
    command: ["sh", "-c", "dd if=/dev/zero of=/dev/shm/fill bs=1M count=24 && exec sleep 600"]
    network_mode: none
    ulimits: {nproc: 1024}
`

// Debian's binaries, by path: /usr/local/bin may hold another docker CLI.
const (
	dockerd = "/usr/sbin/dockerd"
	docker  = "/usr/bin/docker"
	compose = "/usr/bin/docker-compose"
	busybox = "/bin/busybox"
	trust   = "/etc/docker/key.json"
)

// Dockerd is one test's dockerd.
type Dockerd struct {
	// Socket is the Engine API's unix socket.
	Socket string
	dir    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// Container is a running container.
type Container struct {
	ID  string // 64 hex
	PID int    // its init process, in the host's PID namespace
}

// Options are StartWith's.
type Options struct {
	// ImageFiles are more executables in Image: the path in the image
	// ("bin/workload") to the host file (machine.BusyboxTarWith).
	ImageFiles map[string]string
}

// Start starts dockerd for t and imports the busybox image.
func Start(tb testing.TB) *Dockerd {
	tb.Helper()
	return StartWith(tb, Options{})
}

// StartWith is Start with o's image files.
func StartWith(tb testing.TB, o Options) *Dockerd {
	tb.Helper()
	if os.Geteuid() != 0 {
		machine.Need(tb, "dockertest needs root (dockerd)")
	}
	for _, bin := range []string{dockerd, docker, compose, busybox} {
		if _, err := os.Stat(bin); err != nil {
			machine.Need(tb, fmt.Sprintf("dockertest needs %s (Debian packages docker.io, docker-compose, busybox-static)", bin))
		}
	}
	dir := tb.TempDir()
	d := &Dockerd{Socket: filepath.Join(dir, "docker.sock"), dir: dir, exited: make(chan struct{})}
	made := machine.Absent(append(machine.CgroupDirs("docker"), trust, filepath.Dir(trust)))
	tb.Cleanup(func() { d.cleanup(tb, made) })

	log, err := os.Create(filepath.Join(dir, "dockerd.log"))
	if err != nil {
		tb.Fatal(err)
	}
	defer log.Close()
	d.cmd = exec.Command(dockerd, "--iptables=false", "--ip-forward=false", "--ip-masq=false", "--bridge=none", "--userland-proxy=false", //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
		"--data-root", filepath.Join(dir, "root"), "--exec-root", filepath.Join(dir, "exec"), "--pidfile", filepath.Join(dir, "dockerd.pid"),
		"-H", "unix://"+d.Socket, "--containerd-namespace", "cstest-docker", "--containerd-plugins-namespace", "cstest-docker-plugins",
		"--default-ulimit", "nofile=1024:1024", "--cgroup-parent", "/docker", "--log-level", "warn")
	d.cmd.Stdout, d.cmd.Stderr = log, log
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if startErr := d.cmd.Start(); startErr != nil {
		tb.Fatal(startErr)
	}
	go func() { _ = d.cmd.Wait(); close(d.exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, dockerErr := d.Docker(nil, "version", "--format", "{{.Server.Version}}"); dockerErr == nil {
			break
		}
		select {
		case <-d.exited:
			logged, _ := os.ReadFile(log.Name())
			tb.Fatalf("dockerd exited: %s", logged)
		default:
		}
		if time.Now().After(deadline) {
			logged, _ := os.ReadFile(log.Name())
			tb.Fatalf("dockerd did not answer within 60 s: %s", logged)
		}
		time.Sleep(200 * time.Millisecond)
	}

	archive, err := machine.BusyboxTarWith(dir, o.ImageFiles, "sh", "sleep", "dd", "cat")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := d.Docker(bytes.NewBuffer(archive), "import", "-", Image); err != nil {
		tb.Fatal(err)
	}
	return d
}

// Run starts a detached container named name with labels, running cmd,
// and returns it once its init process runs.
func (d *Dockerd) Run(tb testing.TB, name string, labels map[string]string, cmd ...string) Container {
	tb.Helper()
	args := []string{"run", "-d", "--name", name, "--network", "none", "--ulimit", "nproc=1024:1024"}
	for k, v := range labels {
		args = append(args, "--label", k+"="+v)
	}
	out, err := d.Docker(nil, append(append(args, Image), cmd...)...)
	if err != nil {
		tb.Fatal(err)
	}
	return d.Inspect(tb, strings.TrimSpace(string(out)))
}

// Inspect returns container id (an ID or a name) with its init process.
func (d *Dockerd) Inspect(tb testing.TB, id string) Container {
	tb.Helper()
	out, err := d.Docker(nil, "inspect", "--format", "{{.Id}} {{.State.Pid}}", id)
	if err != nil {
		tb.Fatal(err)
	}
	var c Container
	if _, err := fmt.Sscan(string(out), &c.ID, &c.PID); err != nil || c.PID <= 0 {
		tb.Fatalf("docker inspect %s: %q: %v", id, out, err)
	}
	return c
}

// Compose runs `docker-compose -p project up -d [services]` on the
// compose file given as its text (written to the temp directory), and
// returns the project's containers by service name. The project is taken
// down in t.Cleanup (its network too).
func (d *Dockerd) Compose(tb testing.TB, project, file string, services ...string) map[string]Container {
	tb.Helper()
	dir := filepath.Join(d.dir, "compose-"+project)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "docker-compose.yml"), []byte(file), 0o600); err != nil {
		tb.Fatal(err)
	}
	composeRun := func(args ...string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, compose, append([]string{"--no-ansi", "-p", project}, args...)...) //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "DOCKER_HOST=unix://"+d.Socket)
		return cmd.CombinedOutput()
	}
	tb.Cleanup(func() {
		if out, err := composeRun("down", "--timeout", "0"); err != nil {
			tb.Errorf("docker-compose -p %s down: %v: %s", project, err, out)
		}
	})
	if out, err := composeRun(append([]string{"up", "-d"}, services...)...); err != nil {
		tb.Fatalf("docker-compose -p %s up -d: %v: %s", project, err, out)
	}
	out, err := d.Docker(nil, "ps", "--filter", "label=com.docker.compose.project="+project,
		"--format", `{{.ID}} {{.Label "com.docker.compose.service"}}`)
	if err != nil {
		tb.Fatal(err)
	}
	cs := map[string]Container{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if id, svc, ok := strings.Cut(line, " "); ok {
			cs[svc] = d.Inspect(tb, id)
		}
	}
	return cs
}

// Docker runs Debian's docker CLI against this dockerd, stdin from in.
func (d *Dockerd) Docker(in io.Reader, args ...string) ([]byte, error) {
	return machine.RunCLI(in, "docker "+strings.Join(args, " "), append([]string{docker, "-H", "unix://" + d.Socket}, args...)...)
}

// cleanup removes the containers and images, stops dockerd (and so its
// containerd), then removes what absent found missing before the test
// (made) and checks nothing stays mounted below the temp directory (which
// t.TempDir removes after).
func (d *Dockerd) cleanup(tb testing.TB, made []string) {
	if d.cmd != nil && d.cmd.Process != nil {
		if out, err := d.Docker(nil, "ps", "-aq"); err == nil && len(bytes.TrimSpace(out)) > 0 {
			if _, err := d.Docker(nil, append([]string{"rm", "-f"}, strings.Fields(string(out))...)...); err != nil {
				tb.Error(err)
			}
		}
		if out, err := d.Docker(nil, "images", "-q"); err == nil && len(bytes.TrimSpace(out)) > 0 {
			if _, err := d.Docker(nil, append([]string{"rmi", "-f"}, strings.Fields(string(out))...)...); err != nil {
				tb.Error(err)
			}
		}
		// Networks a compose project made (their bridges outlive dockerd).
		if _, err := d.Docker(nil, "network", "prune", "-f"); err != nil {
			tb.Error(err)
		}
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.exited:
		case <-time.After(30 * time.Second):
			tb.Errorf("dockerd did not stop within 30 s of SIGTERM: killed")
			_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
			<-d.exited
		}
	}
	// Made paths deepest first: the trust key, then its directory; the
	// cgroups, once dockerd's containerd has gone.
	for _, path := range made {
		if err := machine.RemoveWhenEmpty(path); err != nil {
			tb.Error(err)
		}
	}
	if mounts, err := os.ReadFile("/proc/self/mountinfo"); err == nil && bytes.Contains(mounts, []byte(" "+d.dir+"/")) {
		tb.Errorf("dockerd left a mount below %s", d.dir)
	}
}

// EnginePIDs is the engine's processes now: dockerd, the containerd it
// started and the containerd shims of its containers, that is every process
// whose command line names this dockerd's exec root (a benchmark counts
// their CPU on the side of what makes the engine work).
func (d *Dockerd) EnginePIDs() ([]int, error) {
	execRoot := []byte(filepath.Join(d.dir, "exec"))
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // gone since the listing
		}
		if bytes.Contains(cmdline, execRoot) {
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		return nil, fmt.Errorf("no process names dockerd's exec root %s", execRoot)
	}
	return pids, nil
}

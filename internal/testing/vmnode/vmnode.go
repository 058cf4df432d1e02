// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

// Package vmnode runs a throw-away cgroup v2 node for a test: a QEMU guest
// with Debian's generic kernel, systemd as PID 1 on the unified cgroup
// hierarchy with every controller, and containerd + runc and Podman from
// Debian, so that what only exists on a v2 node (memory.current, io.stat,
// cpu.max, the systemd driver's kubepods.slice/…/cri-containerd-<id>.scope
// layout, Podman's machine.slice and user@<uid>.service scopes, PSI with
// real controllers) is real in tests on a machine that mounts cgroup v1.
//
// The guest is built from Debian packages at test time (Prepare: the kernel
// package unpacked, an initramfs of our own that loads its modules, a root
// filesystem from mmdebstrap as an ext4 image) and cached by package
// version, so a warm run builds nothing. Run boots it under QEMU's software
// emulation (TCG; KVM only where /proc/cpuinfo shows vmx or svm: a device
// file alone proves nothing), with no network device at all: nothing the
// guest does leaves this machine. The test hands the guest a directory
// (9p, read-only, mounted at /host in the guest) whose run.sh the guest
// runs as its one job, and gets a second directory back (9p, writable,
// /results) plus the serial console. QEMU is killed by PID when the guest
// says it is done, on timeout and in the test's cleanup, and dies with the
// test process (Pdeathsig). Run takes the machine lock: a guest is a
// real-machine test.
package vmnode // import "github.com/containerstats/containerstatsreceiver/internal/testing/vmnode"

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/containerstats/containerstatsreceiver/internal/testing/leftovers"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// QEMU is the emulator Run starts.
const QEMU = "qemu-system-x86_64"

// Name is the QEMU process's -name: the leftover check knows a guest by it.
const Name = leftovers.VMName

// Available reports why a guest cannot run here, or "" if it can.
func Available() string {
	if os.Geteuid() != 0 {
		return "needs root (mmdebstrap, QEMU's 9p shares)"
	}
	for _, b := range []struct{ bin, pkg string }{
		{QEMU, "qemu-system-x86"},
		{"mmdebstrap", "mmdebstrap"},
		{"mke2fs", "e2fsprogs"},
		{"xz", "xz-utils"},
		{"busybox", "busybox-static"},
		{"apt-get", "apt"},
		{"dpkg-deb", "dpkg"},
	} {
		if _, err := exec.LookPath(b.bin); err != nil {
			return fmt.Sprintf("%s not installed (Debian: apt-get install %s)", b.bin, b.pkg)
		}
	}
	return ""
}

// Disk is an extra virtio disk of the guest, a sparse raw file made by Run:
// /dev/vdb, /dev/vdc, … in the order given (vda is the root).
type Disk struct {
	SizeMiB int
}

// Config is one boot.
type Config struct {
	Assets  *Assets
	Share   string // host directory the guest sees at /host (read-only); must hold an executable run.sh
	Results string // host directory the guest sees at /results (writable)
	CPUs    int    // default 2
	MemMiB  int    // default 3072
	Disks   []Disk
	Timeout time.Duration // from start to the guest's done line; default 10 min
	// Console, when set, receives every line of the serial console as it
	// comes (the test's log, say).
	Console func(line string)
}

// Result is what a boot gave.
type Result struct {
	RC        int           // run.sh's exit status
	Console   string        // the whole serial console
	Boot      time.Duration // from QEMU's start to the guest's job starting
	Run       time.Duration // the guest's job
	Accel     string        // "tcg" or "kvm"
	GuestSecs float64       // the guest's uptime at done
}

var (
	startRE = regexp.MustCompile(`vmnode: start uptime=([0-9.]+)`)
	doneRE  = regexp.MustCompile(`vmnode: done rc=(\d+) uptime=([0-9.]+)`)
)

// Accel chooses the accelerator: KVM only when the CPU shows hardware
// virtualisation (vmx, svm) and /dev/kvm exists. A paravirtualised /dev/kvm
// (PVM) answers the KVM API but cannot run a stock guest kernel.
func Accel(cpuinfo string) (accel, cpu string) {
	if hasVirtFlag(cpuinfo) {
		if _, err := os.Stat("/dev/kvm"); err == nil {
			return "kvm", "host"
		}
	}
	return "tcg", "max"
}

func hasVirtFlag(cpuinfo string) bool {
	for _, line := range strings.Split(cpuinfo, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(k) != "flags" {
			continue
		}
		for _, f := range strings.Fields(v) {
			if f == "vmx" || f == "svm" {
				return true
			}
		}
	}
	return false
}

// Run boots the guest, waits for its job to end and returns what it said.
// It fails t when QEMU cannot start, the guest never starts its job, or the
// timeout passes; a non-zero status of run.sh is the caller's to judge.
func Run(tb testing.TB, c Config) *Result {
	tb.Helper()
	machine.Lock(tb)
	machine.Need(tb, Available())
	if c.CPUs == 0 {
		c.CPUs = 2
	}
	if c.MemMiB == 0 {
		c.MemMiB = 3072
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Minute
	}
	if fi, err := os.Stat(filepath.Join(c.Share, "run.sh")); err != nil || fi.Mode()&0o111 == 0 {
		tb.Fatalf("vmnode: %s/run.sh must exist and be executable", c.Share)
	}
	cpuinfo, _ := os.ReadFile("/proc/cpuinfo")
	accel, cpu := Accel(string(cpuinfo))
	scratch := tb.TempDir()
	args := []string{
		"-name", Name, "-nodefaults", "-no-user-config", "-nographic", "-no-reboot",
		"-machine", "pc", "-accel", accel, "-cpu", cpu,
		"-smp", strconv.Itoa(c.CPUs), "-m", strconv.Itoa(c.MemMiB),
		"-serial", "stdio", "-monitor", "none", "-nic", "none",
		"-kernel", c.Assets.Kernel, "-initrd", c.Assets.Initrd,
		"-append", "console=ttyS0 panic=-1 psi=1 loglevel=4 systemd.unified_cgroup_hierarchy=1 systemd.show_status=0",
		"-drive", "file=" + c.Assets.Rootfs + ",if=virtio,format=raw,snapshot=on",
		"-virtfs", "local,path=" + c.Share + ",mount_tag=host0,security_model=none,readonly=on",
		"-virtfs", "local,path=" + c.Results + ",mount_tag=results,security_model=none",
	}
	for i, d := range c.Disks {
		p := filepath.Join(scratch, fmt.Sprintf("disk%d.raw", i))
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			tb.Fatal(err)
		}
		if err := os.Truncate(p, int64(d.SizeMiB)<<20); err != nil {
			tb.Fatal(err)
		}
		args = append(args, "-drive", "file="+p+",if=virtio,format=raw,cache=none")
	}
	cmd := exec.Command(QEMU, args...)
	// QEMU's snapshot overlay of the root image goes to TMPDIR: the test's.
	cmd.Env = append(os.Environ(), "TMPDIR="+scratch)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatalf("vmnode: %s: %v", QEMU, err)
	}
	exited := make(chan struct{})
	var once sync.Once
	kill := func() {
		once.Do(func() {
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		})
	}
	tb.Cleanup(kill)

	r := &Result{Accel: accel, RC: -1}
	var console strings.Builder
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var startOnce, doneOnce sync.Once
		for sc.Scan() {
			line := strings.TrimRight(sc.Text(), "\r")
			mu.Lock()
			console.WriteString(line + "\n")
			mu.Unlock()
			if c.Console != nil {
				c.Console(line)
			}
			// A marker may share its line with firmware output: contains.
			if startRE.MatchString(line) {
				startOnce.Do(func() { r.Boot = time.Since(start) })
			}
			if m := doneRE.FindStringSubmatch(line); m != nil {
				doneOnce.Do(func() {
					r.RC, _ = strconv.Atoi(m[1])
					r.GuestSecs, _ = strconv.ParseFloat(m[2], 64)
					r.Run = time.Since(start) - r.Boot
					close(done)
				})
			}
		}
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
	}()
	snapshot := func() string {
		mu.Lock()
		defer mu.Unlock()
		return console.String()
	}
	fail := func(why string) {
		kill()
		tb.Fatalf("vmnode: %s; QEMU stderr: %s\nconsole (last 6000 bytes):\n%s", why, stderr.String(), tail(snapshot(), 6000))
	}
	timeout := time.After(c.Timeout)
	select {
	case <-done:
	case <-exited:
		select {
		case <-done:
		default:
			fail(fmt.Sprintf("QEMU exited before the guest's job ended (%v)", cmd.ProcessState))
		}
	case <-timeout:
		fail(fmt.Sprintf("the guest's job did not end within %s", c.Timeout))
	}
	// The guest powers off by itself; the harness does not wait for it.
	kill()
	r.Console = snapshot()
	return r
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

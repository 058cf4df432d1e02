// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package vmnode

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// recipe is bumped whenever the way the guest is made changes in a way the
// package versions do not show (a unit, a mask, the init script, a module).
const recipe = "vmnode-7"

// Packages are the Debian packages of the guest's root filesystem on top of
// mmdebstrap's minbase: systemd as PID 1 with D-Bus (runc's systemd cgroup
// driver talks to it), the CNI plugins (pods with their own network
// namespace on a bridge inside the guest), a static busybox (the test
// image), iproute2 and procps. No containerd or runc: the tests run the
// static ones of make containerd-bins, shared with the guest as our
// binaries are (test/v2node). And Podman as `apt-get install podman` makes
// it on Debian 12 (podman 4.3 with conmon, crun, containers-common's
// configuration, catatonit for a pod's infra container), plus what rootless
// Podman needs with a systemd user session: uidmap (newuidmap, newgidmap)
// and dbus-user-session (the user's bus, through which Podman asks the
// user's systemd for scopes). mmdebstrap installs no Recommends: each is
// named.
var Packages = []string{
	"systemd", "systemd-sysv", "dbus", "libseccomp2", "iproute2", "procps",
	"containernetworking-plugins", "busybox-static",
	"podman", "conmon", "crun", "golang-github-containers-common", "catatonit", "uidmap", "dbus-user-session",
}

// modules are loaded by the initramfs before systemd starts (the guest's
// root filesystem has no /lib/modules): the virtio disk and 9p shares, the
// root filesystem, overlayfs for containerd's snapshotter, bridge and veth
// for the CNI bridge. Their dependencies come from each module's .modinfo.
var modules = []string{
	"virtio_pci", "virtio_blk", "crc32c_generic", "ext4", "9pnet_virtio", "9p",
	"overlay", "bridge", "veth",
}

// Assets are a bootable guest: an uncompressed kernel, the initramfs that
// loads its modules, and the root filesystem image (booted read-only:
// QEMU's snapshot=on keeps every guest write in a temporary overlay).
type Assets struct {
	Dir           string // the cache entry holding the files
	Kernel        string
	Initrd        string
	Rootfs        string
	KernelVersion string // uname -r of the guest, e.g. 6.1.0-56-amd64
	Manifest      string // what the key was made of, one "package=version" a line
	Built         bool   // Prepare built them now (false: found in the cache)
	BuildTime     time.Duration
}

// CacheDir is where Prepare keeps guests: $VMNODE_CACHE, else
// containerstats-vmnode in the user's cache directory.
func CacheDir() string {
	if d := os.Getenv("VMNODE_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "containerstats-vmnode")
	}
	return filepath.Join(os.TempDir(), "containerstats-vmnode")
}

// Prepare returns the guest for this machine's Debian release, building it
// when the cache has none for the current package versions. The cache key
// is the recipe, the kernel package and version, every guest package's
// candidate version and the host busybox's version: a new Debian point
// release builds a new guest, a warm run builds nothing. logf reports
// progress.
func Prepare(cache string, logf func(string, ...any)) (*Assets, error) {
	manifest, err := versions()
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(recipe + "\n" + manifest))
	key := hex.EncodeToString(sum[:8])
	dir := filepath.Join(cache, key)
	a := &Assets{
		Dir: dir, Kernel: filepath.Join(dir, "vmlinux"), Initrd: filepath.Join(dir, "initrd.cpio"),
		Rootfs: filepath.Join(dir, "rootfs.ext4"), Manifest: manifest,
	}
	if mkdirAllErr := os.MkdirAll(cache, 0o755); mkdirAllErr != nil {
		return nil, mkdirAllErr
	}
	// One build at a time per cache (two test processes may ask at once).
	lf, err := os.OpenFile(filepath.Join(cache, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("lock %s: %w", lf.Name(), err)
	}
	if kv, err := os.ReadFile(filepath.Join(dir, "ok")); err == nil {
		a.KernelVersion = strings.TrimSpace(string(kv))
		return a, nil
	}
	start := time.Now()
	logf("vmnode: building guest %s in %s (%s)", key, dir, strings.ReplaceAll(strings.TrimSpace(manifest), "\n", ", "))
	if err := build(a, logf); err != nil {
		return nil, err
	}
	a.Built, a.BuildTime = true, time.Since(start)
	logf("vmnode: guest %s built in %s", key, a.BuildTime.Round(time.Second))
	return a, nil
}

// versions lists what the guest is made of, with the versions apt would
// install now.
func versions() (string, error) {
	kpkg, err := kernelPackage()
	if err != nil {
		return "", err
	}
	// The guest's packages and the kernel; busybox-static is among them
	// (the initramfs takes the machine's, of the same version).
	pkgs := append([]string{kpkg}, Packages...)
	sort.Strings(pkgs)
	var b strings.Builder
	fmt.Fprintf(&b, "suite=%s\n", suite())
	for _, p := range pkgs {
		v, err := candidate(p)
		if err != nil {
			return "", err
		}
		if p == kpkg {
			p = "kernel:" + p
		}
		fmt.Fprintf(&b, "%s=%s\n", p, v)
	}
	return b.String(), nil
}

// kernelPackage is the versioned package linux-image-amd64 depends on now
// (the generic flavor: the cloud flavor has no 9p).
func kernelPackage() (string, error) {
	out, err := exec.Command("apt-cache", "depends", "linux-image-amd64").Output()
	if err != nil {
		return "", fmt.Errorf("apt-cache depends linux-image-amd64: %w (apt lists missing? run apt-get update)", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Depends: "); ok && strings.HasPrefix(v, "linux-image-") {
			return v, nil
		}
	}
	return "", fmt.Errorf("apt-cache depends linux-image-amd64: no linux-image dependency in %q", out)
}

// candidate is the version apt would install of pkg.
func candidate(pkg string) (string, error) {
	out, err := exec.Command("apt-cache", "policy", pkg).Output()
	if err != nil {
		return "", fmt.Errorf("apt-cache policy %s: %w", pkg, err)
	}
	v := parseCandidate(string(out))
	if v == "" {
		return "", fmt.Errorf("apt-cache policy %s: no candidate version (apt lists missing? run apt-get update): %q", pkg, out)
	}
	return v, nil
}

func parseCandidate(policy string) string {
	for _, line := range strings.Split(policy, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Candidate:"); ok {
			if v = strings.TrimSpace(v); v != "(none)" {
				return v
			}
		}
	}
	return ""
}

// suite is this machine's Debian release (VERSION_CODENAME): the guest is
// the same release, so binaries built here (our collector, with cgo) run
// in it.
func suite() string {
	b, _ := os.ReadFile("/etc/os-release")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VERSION_CODENAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return "stable"
}

// aptSources are the machine's own apt sources, handed to mmdebstrap as
// they are: the guest comes from the same archive as the machine.
func aptSources() []string {
	var out []string
	if b, err := os.ReadFile("/etc/apt/sources.list"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				out = append(out, "/etc/apt/sources.list")
				break
			}
		}
	}
	for _, g := range []string{"/etc/apt/sources.list.d/*.list", "/etc/apt/sources.list.d/*.sources"} {
		m, _ := filepath.Glob(g)
		out = append(out, m...)
	}
	return out
}

// build makes the assets in a staging directory under the temp directory
// (where the leftover check looks for mounts mmdebstrap may leave if
// killed) and moves them into the cache entry, marked complete last.
func build(a *Assets, logf func(string, ...any)) error {
	stage, err := os.MkdirTemp("", "vmnode-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	kpkg, _ := kernelPackage()
	run := func(dir string, name string, args ...string) error {
		t0 := time.Now()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if runErr := cmd.Run(); runErr != nil {
			s := out.String()
			if len(s) > 3000 {
				s = s[len(s)-3000:]
			}
			return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), runErr, s)
		}
		logf("vmnode: %s took %s", name, time.Since(t0).Round(100*time.Millisecond))
		return nil
	}

	// The kernel: the package unpacked, the ELF kernel taken out of the
	// bzImage, the modules we need with their dependencies.
	if runErr := run(stage, "apt-get", "download", kpkg); runErr != nil {
		return runErr
	}
	debs, _ := filepath.Glob(filepath.Join(stage, kpkg+"_*.deb"))
	if len(debs) != 1 {
		return fmt.Errorf("apt-get download %s: found %v", kpkg, debs)
	}
	kdir := filepath.Join(stage, "kernel")
	if mkdirErr := os.Mkdir(kdir, 0o755); mkdirErr != nil {
		return mkdirErr
	}
	if runErr := run(stage, "sh", "-c", `dpkg-deb --fsys-tarfile "$1" | tar -x -C "$2"`, "sh", debs[0], kdir); runErr != nil {
		return runErr
	}
	kvs, _ := os.ReadDir(filepath.Join(kdir, "lib/modules"))
	if len(kvs) != 1 {
		return fmt.Errorf("%s: expected one lib/modules/<version>, found %d", kpkg, len(kvs))
	}
	kv := kvs[0].Name()
	bz, err := os.ReadFile(filepath.Join(kdir, "boot", "vmlinuz-"+kv))
	if err != nil {
		return err
	}
	payload, err := xzPayload(bz)
	if err != nil {
		return fmt.Errorf("%s: %w", kpkg, err)
	}
	vmlinux := filepath.Join(stage, "vmlinux")
	xz := exec.Command("sh", "-c", `xz -dc --single-stream > "$1" 2>/dev/null; test -s "$1"`, "sh", vmlinux)
	xz.Stdin = bytes.NewReader(payload)
	if out, combinedOutputErr := xz.CombinedOutput(); combinedOutputErr != nil {
		return fmt.Errorf("xz -d of the kernel: %w: %s", combinedOutputErr, out)
	}
	files, err := indexModules(filepath.Join(kdir, "lib/modules", kv))
	if err != nil {
		return err
	}
	order, err := loadOrder(modules, files, moduleDeps)
	if err != nil {
		return err
	}
	bb, err := exec.LookPath("busybox")
	if err != nil {
		return fmt.Errorf("busybox (Debian: busybox-static): %w", err)
	}
	if err := writeInitramfs(filepath.Join(stage, "initrd.cpio"), bb, order, files); err != nil {
		return err
	}

	// The root filesystem.
	root := filepath.Join(stage, "rootfs")
	args := []string{"--variant=minbase", "--include=" + strings.Join(Packages, ","), suite(), root}
	args = append(args, aptSources()...)
	if err := run(stage, "mmdebstrap", args...); err != nil {
		return err
	}
	if err := customize(root); err != nil {
		return err
	}
	img := filepath.Join(stage, "rootfs.ext4")
	if err := run(stage, "mke2fs", "-q", "-t", "ext4", "-L", "vmnode", "-d", root, img, "3G"); err != nil {
		return err
	}

	// Into the cache: the files, then the mark that the entry is complete.
	_ = os.RemoveAll(a.Dir)
	if err := os.MkdirAll(a.Dir, 0o755); err != nil {
		return err
	}
	for _, f := range []struct{ from, to string }{{vmlinux, a.Kernel}, {filepath.Join(stage, "initrd.cpio"), a.Initrd}, {img, a.Rootfs}} {
		if err := moveFile(f.from, f.to); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(a.Dir, "manifest"), []byte(recipe+"\n"+a.Manifest), 0o600); err != nil {
		return err
	}
	a.KernelVersion = kv
	return os.WriteFile(filepath.Join(a.Dir, "ok"), []byte(kv+"\n"), 0o600)
}

func moveFile(from, to string) error {
	if err := os.Rename(from, to); err == nil {
		return nil
	}
	if out, err := exec.Command("cp", "--sparse=always", from, to).CombinedOutput(); err != nil {
		return fmt.Errorf("cp %s %s: %w: %s", from, to, err, out)
	}
	return os.Remove(from)
}

// guestRunner is the guest's one job (vmnode-run.service): mount the two
// 9p shares, run the harness's script from the first, say when it ends and
// with what status on the serial console, power off.
const guestRunner = `#!/bin/sh
echo "vmnode: start uptime=$(cut -d' ' -f1 /proc/uptime)"
mkdir -p /host /results
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,ro host0 /host || echo "vmnode: cannot mount host0"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 results /results || echo "vmnode: cannot mount results"
rc=0
if [ -x /host/run.sh ]; then
  /host/run.sh || rc=$?
else
  echo "vmnode: /host/run.sh missing"
  rc=127
fi
sync
echo "vmnode: done rc=$rc uptime=$(cut -d' ' -f1 /proc/uptime)"
systemctl poweroff -ff
`

const guestUnit = `[Unit]
Description=containerstats vmnode run
After=basic.target dbus.service
Wants=dbus.service

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/vmnode-run
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
`

// masked are units the guest must not run: a packaged containerd (none is
// installed; each test starts its own), gettys on the console the harness
// reads, and timers and boot-time jobs that would spend emulated CPU during
// measurements (Podman's package enables its auto-update timer and a
// restart job at boot).
var masked = []string{
	"containerd.service", "serial-getty@ttyS0.service", "getty@tty1.service", "getty-static.service",
	"apt-daily.timer", "apt-daily-upgrade.timer", "dpkg-db-backup.timer", "fstrim.timer",
	"e2scrub_all.timer", "systemd-tmpfiles-clean.timer",
	"podman-auto-update.timer", "podman-auto-update.service", "podman-restart.service",
}

// unwanted are units a package enabled at boot that the guest starts only
// when asked: Podman's API service (WantedBy=default.target; a test
// starts it, or podman.socket, which stays enabled, activates it).
var unwanted = []string{"default.target.wants/podman.service", "multi-user.target.wants/podman.service"}

// customize writes the guest's own files into the root filesystem.
func customize(root string) error {
	write := func(p, s string, mode os.FileMode) error {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, []byte(s), mode)
	}
	for _, f := range []struct {
		p, s string
		mode os.FileMode
	}{
		{"etc/hostname", "vmnode\n", 0o644},
		{"etc/hosts", "127.0.0.1 localhost vmnode\n", 0o644},
		{"etc/fstab", "# the root is mounted by the initramfs\n", 0o644},
		{"usr/local/sbin/vmnode-run", guestRunner, 0o755},
		{"etc/systemd/system/vmnode-run.service", guestUnit, 0o644},
	} {
		if err := write(f.p, f.s, f.mode); err != nil {
			return err
		}
	}
	wants := filepath.Join(root, "etc/systemd/system/multi-user.target.wants")
	if err := os.MkdirAll(wants, 0o755); err != nil {
		return err
	}
	if err := os.Symlink("/etc/systemd/system/vmnode-run.service", filepath.Join(wants, "vmnode-run.service")); err != nil {
		return err
	}
	for _, u := range unwanted {
		if err := os.Remove(filepath.Join(root, "etc/systemd/system", u)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	for _, u := range masked {
		p := filepath.Join(root, "etc/systemd/system", u)
		_ = os.Remove(p)
		if err := os.Symlink("/dev/null", p); err != nil {
			return err
		}
	}
	return nil
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

// Package leftovers finds (and removes) what real-machine tests leave
// behind: processes they started (containerd and its shims, containers,
// cgrouptest children, collectors, Prometheus), kubepods cgroups, mounts
// under the temp directory, network namespaces, containerdtest's private
// directories. `make leftovers` (the last step of `make test`) reports
// them and fails; the machine lock's janitor (internal/testing/machine)
// sweeps them when a test process dies holding the lock.
//
// What counts as test-made. Real-machine tests hold the machine lock while
// anything of theirs exists, so whoever holds the lock and looks sees only
// leftovers, never a running test's pods. On a machine where no kubelet of
// its own runs (CI, a developer box) there is no other source of kubepods
// cgroups: everything under /kubepods (cgroupfs driver) or kubepods.slice
// (systemd driver), in any hierarchy, the unified one included, is a
// test's. On a real node (a kubelet that no test started runs) only pods
// whose UID carries the test marker (see TestPodUID) count. Processes count
// when they sit in such a cgroup, when they are a containerd, shim, runc,
// ctr, Prometheus or collector whose command line names a path under the
// temp directory or an e2e config, or when they are a test cluster's etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler or kubelet
// (internal/testing/kubetest) naming a path under the temp directory, or
// when they are a cgrouptest child
// (CGROUPTEST_CHILD in their environment). Network interfaces whose name
// starts with LinkPrefix (a test node's bridge) count too.
package leftovers // import "github.com/containerstats/containerstatsreceiver/internal/testing/leftovers"

import (
	"bytes"
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
	"syscall"
	"time"
)

// Options says where to look; Default is the real machine.
type Options struct {
	Proc      string // procfs mount, "/proc"
	Cgroup    string // cgroup mounts, "/sys/fs/cgroup"
	MountInfo string // mount table, "/proc/self/mountinfo"
	TempDir   string // where tests make their directories, os.TempDir()
	NetNS     string // named network namespaces, "/run/netns"
	SysNet    string // network interfaces, "/sys/class/net" ("": not looked at)
	Self      []int  // processes never to report (the caller)
}

// Default looks at the real machine, skipping the calling process.
func Default() Options {
	return Options{
		Proc: "/proc", Cgroup: "/sys/fs/cgroup", MountInfo: "/proc/self/mountinfo",
		TempDir: filepath.Clean(os.TempDir()), NetNS: "/run/netns", SysNet: "/sys/class/net", Self: []int{os.Getpid()},
	}
}

// Kind of leftover.
type Kind string

// Kinds of leftovers.
const (
	Process Kind = "process"
	Cgroup  Kind = "cgroup"
	Mount   Kind = "mount"
	NetNS   Kind = "netns"
	Dir     Kind = "dir"
	Link    Kind = "link"
)

// LinkPrefix starts the name of every network interface a test makes
// (internal/testing/kubetest's pod bridge).
const LinkPrefix = "cstest"

// VMName is the -name of every QEMU guest internal/testing/vmnode starts:
// a QEMU process with it is a test's, wherever its files are.
const VMName = "containerstats-vmnode"

// vmBuildPrefix names the directories under the temp directory where
// vmnode builds a guest (mmdebstrap's root, the kernel package).
const vmBuildPrefix = "vmnode-build-"

// Leftover is one thing a test left behind.
type Leftover struct {
	Kind Kind
	Path string // cgroup: the path relative to the hierarchies; mount, netns, dir: absolute
	PID  int    // process
	What string // why it counts: command line, hierarchies, ...
}

func (l Leftover) String() string {
	switch l.Kind {
	case Process:
		return fmt.Sprintf("process %d: %s", l.PID, l.What)
	default:
		return fmt.Sprintf("%s %s (%s)", l.Kind, l.Path, l.What)
	}
}

// testUIDMark ends the first group of every pod UID a test makes.
const testUIDMark = "7e57"

// TestPodUID returns a random pod UID marked as a test's: its first group
// ends in 7e57. A kubelet's UIDs are random (or hashes), so a real pod
// carries the mark with a chance of 1 in 65536; the mark only matters on a
// real node, where the finder needs it to tell test pods from real ones.
func TestPodUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	u := hex.EncodeToString(b)
	return fmt.Sprintf("%s%s-%s-%s-%s-%s", u[:4], testUIDMark, u[8:12], u[12:16], u[16:20], u[20:32])
}

// IsTestPodUID reports whether uid (or a systemd-escaped one, _ for -)
// carries the test mark.
func IsTestPodUID(uid string) bool {
	return len(uid) == 36 && uid[4:8] == testUIDMark && (uid[8] == '-' || uid[8] == '_')
}

// Find lists the leftovers on the machine o describes.
func Find(o Options) ([]Leftover, error) {
	procs, err := readProcs(o)
	if err != nil {
		return nil, err
	}
	realNode := false
	for _, p := range procs {
		if p.base() == "kubelet" && !p.mentionsTemp(o.TempDir) {
			realNode = true
		}
	}
	var out []Leftover
	out = append(out, findCgroups(o, realNode)...)
	self := map[int]bool{}
	for _, pid := range o.Self {
		self[pid] = true
	}
	for _, p := range procs {
		if self[p.pid] {
			continue
		}
		if why := p.leftover(o.TempDir, realNode); why != "" {
			out = append(out, Leftover{Kind: Process, PID: p.pid, What: why})
		}
	}
	ms, err := findMounts(o, realNode)
	if err != nil {
		return nil, err
	}
	out = append(out, ms...)
	if !realNode {
		entries, _ := os.ReadDir(o.NetNS)
		for _, e := range entries {
			out = append(out, Leftover{Kind: NetNS, Path: filepath.Join(o.NetNS, e.Name()), What: "named network namespace"})
		}
	}
	if o.SysNet != "" {
		links, _ := filepath.Glob(filepath.Join(o.SysNet, LinkPrefix+"*"))
		for _, l := range links {
			out = append(out, Leftover{Kind: Link, Path: filepath.Base(l), What: "a test node's network interface"})
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(o.TempDir, "ctrd-*", "config.toml"))
	for _, d := range dirs {
		out = append(out, Leftover{Kind: Dir, Path: filepath.Dir(d), What: "containerdtest's private directory"})
	}
	// criotest's: crio-*/conf.d/99-criotest.conf (criotest.DirPrefix,
	// criotest.ConfName; not imported: criotest imports this package).
	crio, _ := filepath.Glob(filepath.Join(o.TempDir, "crio-*", "conf.d", "99-criotest.conf"))
	for _, d := range crio {
		out = append(out, Leftover{Kind: Dir, Path: filepath.Dir(filepath.Dir(d)), What: "criotest's private directory"})
	}
	builds, _ := filepath.Glob(filepath.Join(o.TempDir, vmBuildPrefix+"*"))
	for _, d := range builds {
		out = append(out, Leftover{Kind: Dir, Path: d, What: "a vmnode guest's unfinished build"})
	}
	return out, nil
}

// proc is what Find reads of one process.
type proc struct {
	pid     int
	args    []string
	cgroups []string // paths, one per hierarchy line
	env     []byte
}

func (p proc) base() string {
	if len(p.args) == 0 {
		return ""
	}
	return filepath.Base(p.args[0])
}

func (p proc) cmdline() string {
	s := strings.Join(p.args, " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// mentionsTemp reports whether an argument names a path under dir
// ("/tmp/x", "--config=/tmp/x", "unix:///tmp/x").
func (p proc) mentionsTemp(dir string) bool {
	for _, a := range p.args[min(1, len(p.args)):] {
		if strings.Contains(a, dir+"/") {
			return true
		}
	}
	return false
}

// testBinaries are programs the harnesses start; one of them counts when
// its command line names a path under the temp directory (its private
// config, socket or state).
var testBinaries = map[string]bool{
	"containerd": true, "containerd-shim-runc-v2": true, "containerd-shim": true, "runc": true, "ctr": true,
	"prometheus": true, "otelcol-containerstats": true, "kubelet": true,
	// The test cluster of internal/testing/kubetest: our etcd (embed) and
	// the Kubernetes commands built by `make kube-bins` into bin/kube.
	"etcd": true, "kube-apiserver": true, "kube-controller-manager": true, "kube-scheduler": true,
	// internal/testing/vmnode: the guest's emulator, and the build of its
	// root filesystem.
	"qemu-system-x86_64": true, "mmdebstrap": true,
	// test/peer (make bench-peer): cAdvisor as the kubelet embeds it.
	"cadvisorpeer": true,
	// internal/testing/dockertest and podmantest: a private dockerd (it
	// stops its own containerd), Podman's API service and container
	// monitors.
	"dockerd": true, "podman": true, "conmon": true,
	// internal/testing/criotest: CRI-O, its namespace pinner and image
	// copier (conmon above).
	"crio": true, "pinns": true, "copyimg": true,
}

// leftover says why p is a test's leftover, or "".
func (p proc) leftover(tmp string, realNode bool) string {
	for _, cg := range p.cgroups {
		if testCgroup(cg, realNode) {
			return fmt.Sprintf("in test cgroup %s: %s", cg, p.cmdline())
		}
	}
	b := p.base()
	if strings.HasPrefix(b, "qemu-system-") {
		for i, a := range p.args {
			if a == "-name" && i+1 < len(p.args) && strings.SplitN(p.args[i+1], ",", 2)[0] == VMName {
				return "a vmnode guest: " + p.cmdline()
			}
		}
	}
	if testBinaries[b] && p.mentionsTemp(tmp) {
		return fmt.Sprintf("%s of a test (names %s): %s", b, tmp, p.cmdline())
	}
	if b == "otelcol-containerstats" {
		for _, a := range p.args {
			if strings.Contains(a, "config/e2e-") {
				return "collector with an e2e config: " + p.cmdline()
			}
		}
		if bytes.Contains(p.env, []byte("\x00E2E_")) || bytes.HasPrefix(p.env, []byte("E2E_")) {
			return "collector with an e2e environment: " + p.cmdline()
		}
	}
	if bytes.Contains(p.env, []byte("\x00CGROUPTEST_CHILD=")) || bytes.HasPrefix(p.env, []byte("CGROUPTEST_CHILD=")) {
		return "cgrouptest child: " + p.cmdline()
	}
	return ""
}

// testCgroup reports whether a cgroup path (relative to its hierarchy)
// belongs to a test: anything under kubepods when no kubelet of the
// machine's own runs, else a pod with a test-marked UID.
func testCgroup(rel string, realNode bool) bool {
	parts := strings.Split(strings.Trim(rel, "/"), "/")
	if len(parts) > 0 && (parts[0] == StandaloneTop || strings.HasPrefix(parts[0], SystemCgroupPrefix)) {
		return true // the name is the test mark
	}
	if len(parts) == 0 || !isKubepods(parts[0]) {
		return false
	}
	if !realNode {
		return true
	}
	for _, part := range parts[1:] {
		if uid, ok := podUID(part); ok {
			return IsTestPodUID(uid)
		}
	}
	return false
}

// StandaloneTop is the top-level cgroup under which tests make standalone
// (non-Kubernetes) containers (cgrouptest.NewStandaloneContainer):
// everything under it is a test's, on a real node too.
const StandaloneTop = "containerstats-test"

// SystemCgroupPrefix starts the name of the top-level cgroups a test node
// runs its kubelet and container runtime in (internal/testing/kubetest's
// system containers, /cstest-kubelet and /cstest-runtime): everything
// under them is a test's, on a real node too.
const SystemCgroupPrefix = LinkPrefix + "-"

func isKubepods(name string) bool { return name == "kubepods" || name == "kubepods.slice" }

// podUID extracts the UID of a pod cgroup name: pod<uid> (cgroupfs) or
// kubepods-<qos>-pod<uid_with_underscores>.slice (systemd).
func podUID(name string) (string, bool) {
	if u, ok := strings.CutPrefix(name, "pod"); ok {
		return u, true
	}
	if strings.HasSuffix(name, ".slice") {
		if i := strings.LastIndex(name, "-pod"); i >= 0 {
			return strings.TrimSuffix(name[i+4:], ".slice"), true
		}
	}
	return "", false
}

func readProcs(o Options) ([]proc, error) {
	entries, err := os.ReadDir(o.Proc)
	if err != nil {
		return nil, err
	}
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 1 {
			continue
		}
		dir := filepath.Join(o.Proc, e.Name())
		if st, readFileErr := os.ReadFile(filepath.Join(dir, "stat")); readFileErr == nil {
			// Zombies are not alive (their parent has yet to reap them);
			// kernel threads have no command line.
			if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
				continue
			}
		}
		cmd, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil || len(cmd) == 0 {
			continue // gone, or a kernel thread
		}
		p := proc{pid: pid, args: strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")}
		if cg, err := os.ReadFile(filepath.Join(dir, "cgroup")); err == nil {
			for _, line := range strings.Split(string(cg), "\n") {
				// hierarchy-ID:controllers:path
				if f := strings.SplitN(line, ":", 3); len(f) == 3 {
					p.cgroups = append(p.cgroups, f[2])
				}
			}
		}
		p.env, _ = os.ReadFile(filepath.Join(dir, "environ"))
		out = append(out, p)
	}
	return out, nil
}

// hierarchies lists the cgroup mounts under root: root itself on pure v2,
// else each v1 controller directory and the unified tree (symlinks such as
// cpu -> cpu,cpuacct skipped: the real directory is listed).
func hierarchies(root string) []string {
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err == nil {
		return []string{root}
	}
	entries, _ := os.ReadDir(root)
	var out []string
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 || !e.IsDir() {
			continue
		}
		d := filepath.Join(root, e.Name())
		if _, err := os.Stat(filepath.Join(d, "cgroup.procs")); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// findCgroups lists test cgroups, one leftover per relative path with the
// hierarchies it is in.
func findCgroups(o Options, realNode bool) []Leftover {
	in := map[string][]string{}
	for _, h := range hierarchies(o.Cgroup) {
		tops := []string{"kubepods", "kubepods.slice", StandaloneTop}
		if entries, err := os.ReadDir(h); err == nil {
			for _, e := range entries {
				if e.IsDir() && strings.HasPrefix(e.Name(), SystemCgroupPrefix) {
					tops = append(tops, e.Name())
				}
			}
		}
		for _, top := range tops {
			_ = filepath.WalkDir(filepath.Join(h, top), func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.IsDir() {
					return nil
				}
				rel := strings.TrimPrefix(p, h)
				if testCgroup(rel, realNode) {
					in[rel] = append(in[rel], filepath.Base(h))
				}
				return nil
			})
		}
	}
	var out []Leftover
	for rel, hs := range in {
		out = append(out, Leftover{Kind: Cgroup, Path: rel, What: "in " + strings.Join(hs, ", ")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// findMounts lists mounts below the temp directory (containerd's rootfs and
// sandbox mounts under its private state, the e2e host-root binds) and
// named network namespaces.
func findMounts(o Options, realNode bool) ([]Leftover, error) {
	b, err := os.ReadFile(o.MountInfo)
	if err != nil {
		return nil, err
	}
	var out []Leftover
	seen := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescape(f[4])
		if seen[mp] || (!strings.HasPrefix(mp, o.TempDir+"/") && (realNode || !strings.HasPrefix(mp, o.NetNS+"/"))) {
			continue
		}
		seen[mp] = true
		fstype := ""
		for i := 5; i < len(f); i++ {
			if f[i] == "-" && i+1 < len(f) {
				fstype = f[i+1]
			}
		}
		out = append(out, Leftover{Kind: Mount, Path: mp, What: fstype + " mount"})
	}
	return out, nil
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Clean removes leftovers: processes first (SIGKILL, then waits until they
// are gone), then mounts deepest first, network namespaces, cgroups deepest
// first in every hierarchy (killing anything still in them), directories.
// It returns what it could not remove.
func Clean(o Options, ls []Leftover) []error {
	var errs []error
	var pids []int
	for _, l := range ls {
		if l.Kind == Process {
			pids = append(pids, l.PID)
			_ = syscall.Kill(l.PID, syscall.SIGKILL)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for alive(o, pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(o, pid) {
			errs = append(errs, fmt.Errorf("process %d survived SIGKILL", pid))
		}
	}
	var mounts []string
	for _, l := range ls {
		if l.Kind == Mount {
			mounts = append(mounts, l.Path)
		}
	}
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i]) > len(mounts[j]) })
	for _, m := range mounts {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
		}
	}
	var rels []string
	for _, l := range ls {
		switch l.Kind {
		case NetNS:
			_ = syscall.Unmount(l.Path, syscall.MNT_DETACH)
			if err := os.Remove(l.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		case Cgroup:
			rels = append(rels, l.Path)
		case Link:
			if out, err := exec.Command("ip", "link", "del", l.Path).CombinedOutput(); err != nil { //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
				errs = append(errs, fmt.Errorf("ip link del %s: %w: %s", l.Path, err, out))
			}
		}
	}
	sort.Slice(rels, func(i, j int) bool { return len(rels[i]) > len(rels[j]) })
	for _, h := range hierarchies(o.Cgroup) {
		for _, rel := range rels {
			d := filepath.Join(h, rel)
			if _, err := os.Stat(d); err != nil {
				continue
			}
			if err := rmCgroup(d); err != nil {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
			}
		}
	}
	for _, l := range ls {
		if l.Kind == Dir {
			if err := os.RemoveAll(l.Path); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

func alive(o Options, pid int) bool {
	st, err := os.ReadFile(filepath.Join(o.Proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(st, ')')
	return i <= 0 || i+2 >= len(st) || st[i+2] != 'Z'
}

// rmCgroup kills what is left in a cgroup and removes it, retrying while
// the killed processes are reaped.
func rmCgroup(d string) error {
	var err error
	for i := 0; i < 250; i++ {
		b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if pid, e := strconv.Atoi(f); e == nil && pid > 1 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		err = syscall.Rmdir(d)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

// Report writes leftovers one per line, grouped by kind.
func Report(ls []Leftover) string {
	var b strings.Builder
	for _, k := range []Kind{Process, Mount, NetNS, Cgroup, Dir} {
		for _, l := range ls {
			if l.Kind == k {
				fmt.Fprintf(&b, "  %s\n", l)
			}
		}
	}
	return b.String()
}

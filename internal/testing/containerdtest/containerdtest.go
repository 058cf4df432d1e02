// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

// Package containerdtest runs a real containerd (with its CRI plugin and
// runc) for a test: private config, root, state and sockets under a temp
// directory, a locally built busybox image (no registry), and helpers to run
// host-network pods and containers through CRI with the cgroupfs driver.
// Everything it creates is removed in t.Cleanup: containers and sandboxes
// through CRI, then containerd, shims and container processes by PID,
// mounts under the temp directory, the pods' cgroups deepest first in every
// hierarchy under /sys/fs/cgroup (the unified tree included), our shims'
// sockets in /run/containerd/s (never another containerd's), and the temp
// directory. Several harnesses may run at once on one machine.
//
// Two runtimes: the one of make containerd-bins (containerd 2.4, runc 1.5,
// built from the module proxy; BinDirEnv names its directory, which make
// e2e, kube-test and race set), and the machine's from PATH (Debian's
// containerd 1.6.20 and runc 1.1.5), on which the identity tests run too
// (Stacks) and which the cgroup v2 guest runs. Config writes the
// configuration format of the containerd it runs (version 3 for
// containerd 2, 2 for 1.6). docs/runtimes.md.
//
// Tests skip (with the reason) only when not root or when containerd, runc,
// ctr or a static busybox are missing, and fail instead under CI (CI set),
// which installs and builds them (Debian packages containerd, runc,
// busybox-static; make containerd-bins).
// Start takes the machine lock (internal/testing/machine) first; pod UIDs
// carry the test mark (leftovers.TestPodUID). If the test process dies
// (a test timeout), containerd dies with it (Pdeathsig) and the lock's
// janitor removes the shims, containers, mounts and cgroups.
package containerdtest // import "github.com/containerstats/containerstatsreceiver/internal/testing/containerdtest"

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
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

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/containerstats/containerstatsreceiver/internal/testing/leftovers"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// Image is the reference of the locally imported busybox image, used as
// sandbox (pause) image and workload image.
const Image = "docker.io/containerstats/testbox:1.0"

// Namespace is the containerd namespace CRI uses.
const Namespace = "k8s.io"

const (
	cgroupBase = "/sys/fs/cgroup"
	shimSocks  = "/run/containerd/s"
)

// BinDirEnv names the variable that chooses the runtime Start runs: a
// directory holding containerd, containerd-shim-runc-v2, ctr and runc
// (make containerd-bins: containerd 2.4 and runc 1.5, which make e2e,
// make kube-test and make race set). Unset or empty: the machine's, found
// in PATH (Debian's packages: containerd 1.6.20, runc 1.1.5).
// docs/runtimes.md.
const BinDirEnv = "CONTAINERD_BIN_DIR"

// DefaultBinDir is the runtime Start runs: BinDirEnv's value, "" for the
// machine's.
func DefaultBinDir() string { return os.Getenv(BinDirEnv) }

// Binaries are what a runtime stack consists of: the files of a BinDir.
var Binaries = []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr"}

// Bin is the program name to run from binDir ("": the name, looked up in
// PATH).
func Bin(binDir, name string) string {
	if binDir == "" {
		return name
	}
	return filepath.Join(binDir, name)
}

// Available reports why a real containerd of DefaultBinDir cannot run
// here, or "" if it can.
func Available() string { return AvailableIn(DefaultBinDir()) }

// AvailableIn reports why a real containerd of binDir ("": the machine's)
// cannot run here, or "" if it can.
func AvailableIn(binDir string) string {
	if os.Geteuid() != 0 {
		return "needs root to run containerd"
	}
	for _, b := range Binaries {
		if binDir == "" {
			if _, err := exec.LookPath(b); err != nil {
				return b + " not installed (Debian: apt-get install containerd runc)"
			}
			continue
		}
		if fi, err := os.Stat(filepath.Join(binDir, b)); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			return fmt.Sprintf("%s not built in %s (make containerd-bins)", b, binDir)
		}
	}
	if busybox() == "" {
		return "static busybox not installed (Debian: apt-get install busybox-static)"
	}
	return ""
}

// Stack is a runtime to run a test on: the binaries' directory, "" for
// the machine's.
type Stack struct {
	Name   string // a subtest's name
	BinDir string
}

// Stacks are the two runtimes the identity tests run on: the one of make
// containerd-bins (BinDirEnv, or else the checkout's bin/containerd), the
// current containerd 2.4; and the machine's, Debian's containerd 1.6, so
// that the clients we ship keep working against the runtimes still
// deployed.
func Stacks() []Stack {
	built := DefaultBinDir()
	if built == "" {
		built = repoBinDir()
	}
	return []Stack{{Name: "containerd-bins", BinDir: built}, {Name: "debian-packages", BinDir: ""}}
}

// repoBinDir is the checkout's bin/containerd (make containerd-bins'
// default output), found from the working directory up; bin/containerd
// when no checkout is found.
func repoBinDir() string {
	dir, err := os.Getwd()
	for err == nil {
		if b, rerr := os.ReadFile(filepath.Join(dir, "go.mod")); rerr == nil &&
			strings.HasPrefix(string(b), "module github.com/containerstats/containerstatsreceiver\n") {
			return filepath.Join(dir, "bin", "containerd")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return filepath.Join("bin", "containerd")
}

// Version is what `containerd --version` of binDir ("": the machine's)
// prints as its version ("v2.4.2", "1.6.20~ds1"), and its major number,
// which decides the configuration's format (Config).
func Version(binDir string) (version string, major int, err error) {
	out, err := exec.Command(Bin(binDir, "containerd"), "--version").Output() //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
	if err != nil {
		return "", 0, fmt.Errorf("containerd --version: %w", err)
	}
	return parseVersion(string(out))
}

// parseVersion reads `containerd --version`: "containerd <package>
// <version> [<revision>]".
func parseVersion(out string) (string, int, error) {
	f := strings.Fields(out)
	if len(f) < 3 || f[0] != "containerd" {
		return "", 0, fmt.Errorf("containerd --version: unexpected %q", out)
	}
	v := f[2]
	major, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(v, "v"), ".", 2)[0])
	if err != nil {
		return "", 0, fmt.Errorf("containerd --version: version %q: %w", v, err)
	}
	return v, major, nil
}

func busybox() string {
	for _, p := range []string{"/bin/busybox", "/usr/bin/busybox"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// Containerd is one running (or stopped) containerd.
type Containerd struct {
	t      testing.TB
	base   string
	Socket string // containerd's gRPC socket: CRI and containerd API
	// BinDir is where its containerd, shim, ctr and runc are ("": the
	// machine's, from PATH); Version is what containerd says it is
	// ("v2.4.2", "1.6.20~ds1").
	BinDir, Version string
	// LogRoot, when set before RunPod, is a host root under which pods
	// log the way the kubelet lays them out:
	// <LogRoot>/var/log/pods/<namespace>_<pod>_<uid>/<container>/<attempt>.log
	// (the test owns LogRoot, e.g. a t.TempDir). Unset: under the private
	// temp directory.
	LogRoot string

	mu        sync.Mutex
	cmd       *exec.Cmd
	exited    chan struct{}
	conn      *grpc.ClientConn
	cri       runtimeapi.RuntimeServiceClient
	pods      []*Pod
	preCgroup map[string]bool // cgroup dirs that existed before (kubepods, QoS)
	systemd   bool            // runc's systemd cgroup driver
	bridge    string          // the CNI bridge (Options.Bridge), deleted in cleanup
}

// sharedLevels are the kubepods levels pods share, relative to a hierarchy,
// for both drivers.
var sharedLevels = []string{
	"kubepods", "kubepods/burstable", "kubepods/besteffort",
	"kubepods.slice", "kubepods.slice/kubepods-burstable.slice", "kubepods.slice/kubepods-besteffort.slice",
}

// Pod is a pod sandbox run through CRI.
type Pod struct {
	c         *Containerd
	ID        string // sandbox ID
	UID       string
	Name      string
	Namespace string
	QoS       string // "burstable", "besteffort" or "" (guaranteed)
	// Parent is the pod's cgroup, relative to a hierarchy:
	// /kubepods[/<qos>]/pod<uid> (cgroupfs driver), or
	// /kubepods.slice[/kubepods-<qos>.slice]/kubepods[-<qos>]-pod<uid_>.slice
	// (systemd driver, the UID's dashes as underscores).
	Parent string
	// CgroupParent is what CRI gets as the sandbox's cgroup parent, as the
	// kubelet passes it: Parent (cgroupfs), or the slice's name (systemd).
	CgroupParent string
	Network      bool // the pod has its own network namespace (RunPodNetwork)
}

// Options changes what Start runs.
type Options struct {
	// BinDir holds the containerd, containerd-shim-runc-v2, ctr and runc
	// to run (make containerd-bins); "": the machine's, from PATH
	// (Debian's packages). Start passes DefaultBinDir. The configuration
	// follows containerd's major version (Config).
	BinDir string
	// Systemd: runc's systemd cgroup driver (SystemdCgroup = true), pods
	// under kubepods.slice as a kubelet with cgroupDriver: systemd puts
	// them; needs systemd as PID 1 (a vmnode guest). Default: cgroupfs,
	// pods under /kubepods.
	Systemd bool
	// ImageFiles are more files in Image (WriteImageWith).
	ImageFiles map[string]string
	// Bridge, when set, is a network of pods run with RunPodNetwork: the
	// CNI bridge plugin (Debian's containernetworking-plugins) on a bridge
	// of that name (it must start with leftovers.LinkPrefix) with
	// host-local addresses in Subnet, gateway Gateway. The bridge is
	// deleted in cleanup.
	Bridge, Subnet, Gateway string
}

// Start starts containerd (DefaultBinDir's) with a private configuration
// and imports Image.
func Start(tb testing.TB) *Containerd {
	tb.Helper()
	return StartWith(tb, Options{BinDir: DefaultBinDir()})
}

// StartWith is Start with options.
func StartWith(tb testing.TB, o Options) *Containerd {
	tb.Helper()
	machine.Lock(tb) // before any cleanup: released after them
	machine.Need(tb, AvailableIn(o.BinDir))
	version, major, err := Version(o.BinDir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Logf("containerdtest: containerd %s (%s)", version, Bin(o.BinDir, "containerd"))
	base, err := os.MkdirTemp("", "ctrd-")
	if err != nil {
		tb.Fatal(err)
	}
	c := &Containerd{
		t: tb, base: base, Socket: filepath.Join(base, "c.sock"), BinDir: o.BinDir, Version: version,
		preCgroup: map[string]bool{}, systemd: o.Systemd,
	}
	for _, h := range hierarchies() {
		for _, rel := range sharedLevels {
			if _, statErr := os.Stat(filepath.Join(h, rel)); statErr == nil {
				c.preCgroup[filepath.Join(h, rel)] = true
			}
		}
	}
	tb.Cleanup(c.cleanup)
	for _, d := range []string{"root", "state", "opt", "runc", "cni/bin", "cni/conf", "ipam"} {
		if mkdirErr := os.MkdirAll(filepath.Join(base, d), 0o755); mkdirErr != nil {
			tb.Fatal(mkdirErr)
		}
	}
	cniBin := filepath.Join(base, "cni/bin")
	if o.Bridge != "" {
		cniBin = CNIBinDir
		if !strings.HasPrefix(o.Bridge, leftovers.LinkPrefix) {
			tb.Fatalf("containerdtest: bridge %q must start with %q (the leftover check's mark)", o.Bridge, leftovers.LinkPrefix)
		}
		c.bridge = o.Bridge
		conf := BridgeConflist("containerdtest", o.Bridge, filepath.Join(base, "ipam"), o.Subnet, o.Gateway)
		if writeErr := os.WriteFile(filepath.Join(base, "cni/conf", "10-containerdtest.conflist"), []byte(conf), 0o600); writeErr != nil {
			tb.Fatal(writeErr)
		}
	}
	cfg := Config(ConfigOptions{Major: major, BinDir: o.BinDir, Base: base, Socket: c.Socket, CNIBin: cniBin, Systemd: o.Systemd})
	if writeErr := os.WriteFile(filepath.Join(base, "config.toml"), []byte(cfg), 0o600); writeErr != nil {
		tb.Fatal(writeErr)
	}
	c.Restart(tb)
	img := filepath.Join(base, "image.tar")
	if imageErr := WriteImageWith(img, o.ImageFiles); imageErr != nil {
		tb.Fatal(imageErr)
	}
	if out, importErr := exec.Command(Bin(o.BinDir, "ctr"), "-a", c.Socket, "-n", Namespace, "images", "import", img).CombinedOutput(); importErr != nil { //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
		tb.Fatalf("ctr images import: %v: %s", importErr, out)
	}
	conn, err := grpc.NewClient("unix://"+c.Socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	c.conn, c.cri = conn, runtimeapi.NewRuntimeServiceClient(conn)
	c.waitImage(tb, 60*time.Second)
	return c
}

// waitImage waits up to d until the CRI plugin knows the imported Image.
// `ctr images import` returns once containerd's image store has it; the
// CRI plugin learns of it from containerd's events, asynchronously (on
// containerd 2.4 a RunPodSandbox 20 ms after the import still missed it
// and tried to pull the sandbox image from its registry, which a test
// machine cannot reach).
func (c *Containerd) waitImage(tb testing.TB, d time.Duration) {
	tb.Helper()
	images := runtimeapi.NewImageServiceClient(c.conn)
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: Image}})
		cancel()
		if err == nil && resp.GetImage() != nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("containerdtest: CRI does not know the imported image %s after %s (ImageStatus: %v, %v); log: %s", Image, d, resp, err, c.log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// CNIBinDir is where Debian's containernetworking-plugins installs the
// bridge, host-local and loopback plugins.
const CNIBinDir = "/usr/lib/cni"

// BridgeConflist is a CNI configuration named name: the bridge plugin on
// bridge (made by the plugin when missing), the pods' gateway gw, addresses
// from host-local in subnet with its state in ipamDir.
func BridgeConflist(name, bridge, ipamDir, subnet, gw string) string {
	return fmt.Sprintf(`{"cniVersion": "1.0.0", "name": %q, "plugins": [
  {"type": "bridge", "bridge": %q, "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": %q, "ranges": [[{"subnet": %q, "gateway": %q}]]}}]}
`, name, bridge, ipamDir, subnet, gw)
}

// ConfigOptions are what Config writes.
type ConfigOptions struct {
	// Major is containerd's major version (Version): 1 gets a
	// configuration of version 2 (the CRI plugin in one section,
	// io.containerd.grpc.v1.cri), 2 and later one of version 3 (the CRI
	// plugin's runtime and images parts in io.containerd.cri.v1.runtime
	// and io.containerd.cri.v1.images).
	Major int
	// BinDir, when set, holds the runc the shim runs (BinaryName); the
	// shim itself is found in PATH (Env).
	BinDir string
	// Base holds root, state, the ttrpc socket, the opt plugin path, runc's
	// root and the CNI configuration directory (Base/cni/conf); Socket is
	// the gRPC socket; CNIBin the CNI plugins' directory.
	Base, Socket, CNIBin string
	// Systemd: runc's systemd cgroup driver, else cgroupfs.
	Systemd bool
}

// Config is a containerd configuration for o, with Image as the sandbox
// image: what Start runs, and the test node of internal/testing/kubetest.
//
// [timeouts]: containerd 1.6 gives a running shim 5 s to answer when it
// reconnects after a restart (shim.load); one that does not is taken for
// dead and cleaned up (`shim delete`: runc delete --force), which kills
// its container or sandbox. On a loaded 2-core machine a shim once took
// longer, and a restart test lost a container that way. A test's
// containerd waits longer instead; a lost container is then a real
// failure (RequireRunning names it). TestRestartWaitsForSlowShims shows
// both: with 5 s a shim stopped for 7 s loses its container (EXITED,
// reason Unknown, exit code 255), with 60 s it survives.
//
// stats_collect_period = 1: the CRI plugin measures writable layers and
// the image filesystem every second (default 10 s), so a test waiting
// for a file written in a container to show in ListContainerStats
// waits seconds, not tens of seconds.
//
// The rest is what a private containerd on a shared machine needs
// (../shared/docs/real-components.md): restrict_oom_score_adj (the
// machine refuses a lower oom_score_adj), the netns mounts under the
// state directory, no AppArmor. containerd 2 also starts NRI, whose
// socket is the machine's /var/run/nri/nri.sock: off.
func Config(o ConfigOptions) string {
	runc := ""
	if o.BinDir != "" {
		runc = fmt.Sprintf("\n        BinaryName = %q", filepath.Join(o.BinDir, "runc"))
	}
	args := []any{
		filepath.Join(o.Base, "root"), filepath.Join(o.Base, "state"), o.Socket, filepath.Join(o.Base, "t.sock"),
		filepath.Join(o.Base, "opt"), Image, o.CNIBin, filepath.Join(o.Base, "cni/conf"), filepath.Join(o.Base, "runc"), o.Systemd, runc,
	}
	if o.Major < 2 {
		return fmt.Sprintf(`version = 2
`+configCommon+`[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  stats_collect_period = 1
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[7]q
    conf_dir = %[8]q
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = %[10]t
        Root = %[9]q%[11]s
`, args...)
	}
	return fmt.Sprintf(`version = 3
`+configCommon+`[plugins."io.containerd.nri.v1.nri"]
  disable = true
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  stats_collect_period = 1
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = %[6]q
[plugins."io.containerd.cri.v1.runtime"]
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = [%[7]q]
    conf_dir = %[8]q
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        SystemdCgroup = %[10]t
        Root = %[9]q%[11]s
`, args...)
}

// configCommon is what both config versions say alike: directories,
// timeouts, sockets (Config's arguments 1 to 5).
const configCommon = `root = %[1]q
state = %[2]q
[timeouts]
  "io.containerd.timeout.shim.load" = "60s"
  "io.containerd.timeout.shim.cleanup" = "30s"
  "io.containerd.timeout.task.state" = "30s"
[grpc]
  address = %[3]q
[ttrpc]
  address = %[4]q
[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q
`

// Env is the environment containerd of binDir runs in: this process's,
// with binDir first in PATH, where containerd looks for its shim (and the
// shim, without BinaryName, for runc). binDir "": this process's.
func Env(binDir string) []string {
	env := os.Environ()
	if binDir == "" {
		return env
	}
	for i, e := range env {
		if strings.HasPrefix(e, "PATH=") {
			env[i] = "PATH=" + binDir + ":" + strings.TrimPrefix(e, "PATH=")
			return env
		}
	}
	return append(env, "PATH="+binDir+":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
}

// CRI is a CRI client for setting up pods and containers (tests may call
// mutating RPCs; the receiver never does).
func (c *Containerd) CRI() runtimeapi.RuntimeServiceClient { return c.cri }

// Restart starts containerd again after Stop (Start calls it once),
// waiting up to 60 s for its socket: containerd 2.4 in the v2 guest's
// emulated CPUs, on a loaded host, once took more than 10 s to load its
// plugins (a healthy start there takes 1-3 s; here, well under one).
func (c *Containerd) Restart(tb testing.TB) {
	tb.Helper()
	c.restartWithin(tb, 60*time.Second)
}

// restartWithin is Restart, waiting up to d for containerd's socket (it
// opens once containerd has reconnected to its running shims).
func (c *Containerd) restartWithin(tb testing.TB, d time.Duration) {
	tb.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd != nil {
		tb.Fatal("containerd already running")
	}
	logf, err := os.OpenFile(filepath.Join(c.base, "containerd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(Bin(c.BinDir, "containerd"), "--config", filepath.Join(c.base, "config.toml")) //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
	cmd.Env = Env(c.BinDir)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Killed with the test process if it dies first (a test timeout); its
	// shims and containers, which outlive it by design, are then swept by
	// the machine lock's janitor.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		tb.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	c.cmd, c.exited = cmd, exited
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if conn, err := net.Dial("unix", c.Socket); err == nil {
			conn.Close()
			return
		}
		select {
		case <-exited:
			tb.Fatalf("containerd exited at start; log: %s", c.log())
		case <-time.After(20 * time.Millisecond):
		}
	}
	tb.Fatalf("containerd socket not ready after %s; log: %s", d, c.log())
}

// Stop stops containerd (SIGTERM, then SIGKILL after 5 s). Shims and
// containers keep running, as on a node whose runtime restarts.
func (c *Containerd) Stop(tb testing.TB) {
	tb.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopLocked()
}

func (c *Containerd) stopLocked() {
	if c.cmd == nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.exited:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
	c.cmd, c.exited = nil, nil
}

func (c *Containerd) log() string {
	b, _ := os.ReadFile(filepath.Join(c.base, "containerd.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// RunPod runs a host-network pod sandbox named name in namespace ns with
// the given QoS class ("burstable", "besteffort", or "guaranteed") and
// labels.
func (c *Containerd) RunPod(tb testing.TB, name, ns, qos string, labels map[string]string) *Pod {
	tb.Helper()
	return c.runPod(tb, name, ns, qos, labels, false)
}

// RunPodNetwork is RunPod for a pod with a network namespace of its own on
// the CNI bridge of Options.Bridge.
func (c *Containerd) RunPodNetwork(tb testing.TB, name, ns, qos string, labels map[string]string) *Pod {
	tb.Helper()
	if c.bridge == "" {
		tb.Fatal("containerdtest: RunPodNetwork needs Options.Bridge")
	}
	return c.runPod(tb, name, ns, qos, labels, true)
}

func (c *Containerd) runPod(tb testing.TB, name, ns, qos string, labels map[string]string, network bool) *Pod {
	tb.Helper()
	p := &Pod{c: c, UID: leftovers.TestPodUID(), Name: name, Namespace: ns, Network: network}
	if qos != "guaranteed" {
		p.QoS = qos
	}
	p.Parent, p.CgroupParent = podCgroup(p.UID, p.QoS, c.systemd)
	l := map[string]string{"io.kubernetes.pod.name": name, "io.kubernetes.pod.namespace": ns, "io.kubernetes.pod.uid": p.UID}
	for k, v := range labels {
		l[k] = v
	}
	c.mu.Lock()
	c.pods = append(c.pods, p)
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := c.cri.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: p.config(l)})
	if err != nil {
		tb.Fatalf("RunPodSandbox %s/%s: %v; log: %s", ns, name, err, c.log())
	}
	p.ID = resp.GetPodSandboxId()
	return p
}

// PodCgroup is podCgroup, for the other runtimes' harnesses (criotest).
func PodCgroup(uid, qos string, systemd bool) (path, parent string) {
	return podCgroup(uid, qos, systemd)
}

// SharedLevels are the kubepods levels pods share, relative to a
// hierarchy, for both drivers.
func SharedLevels() []string { return append([]string(nil), sharedLevels...) }

// UnmountUnder detaches every mount below dir, deepest first.
func UnmountUnder(dir string) { unmountUnder(dir) }

// RemoveSharedLevels removes the shared levels (QoS, kubepods) that were
// not in pre (the directories that existed before the test) and are empty
// now, deepest first: stopped through systemd with its driver (slices are
// its units), removed in every hierarchy.
func RemoveSharedLevels(pre map[string]bool, systemd bool) {
	if systemd {
		for i := len(sharedLevels) - 1; i >= 0; i-- {
			if d := filepath.Join(cgroupBase, sharedLevels[i]); strings.HasSuffix(d, ".slice") && !pre[d] {
				_ = exec.Command("systemctl", "stop", filepath.Base(d)).Run() //nolint:gosec // G204: our own slices
			}
		}
	}
	for _, h := range hierarchies() {
		for i := len(sharedLevels) - 1; i >= 0; i-- { // deepest first
			d := filepath.Join(h, sharedLevels[i])
			if _, err := os.Stat(d); err == nil && !pre[d] && !hasChildDir(d) {
				_ = rmdirRetry(d)
			}
		}
	}
}

// podCgroup is a pod's cgroup path and the cgroup parent CRI gets for it,
// the way the kubelet names them for each driver (qos "" is guaranteed).
func podCgroup(uid, qos string, systemd bool) (path, parent string) {
	if !systemd {
		if qos == "" {
			return "/kubepods/pod" + uid, "/kubepods/pod" + uid
		}
		return "/kubepods/" + qos + "/pod" + uid, "/kubepods/" + qos + "/pod" + uid
	}
	escaped := strings.ReplaceAll(uid, "-", "_")
	if qos == "" {
		slice := "kubepods-pod" + escaped + ".slice"
		return "/kubepods.slice/" + slice, slice
	}
	slice := "kubepods-" + qos + "-pod" + escaped + ".slice"
	return "/kubepods.slice/kubepods-" + qos + ".slice/" + slice, slice
}

func (p *Pod) config(labels map[string]string) *runtimeapi.PodSandboxConfig {
	mode := runtimeapi.NamespaceMode_NODE
	if p.Network {
		mode = runtimeapi.NamespaceMode_POD
	}
	return &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: p.Name, Namespace: p.Namespace, Uid: p.UID},
		Labels:       labels,
		LogDirectory: p.logDir(),
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: p.CgroupParent,
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{Network: mode},
			},
		},
	}
}

func (p *Pod) logDir() string {
	if p.c.LogRoot != "" {
		return filepath.Join(p.c.LogRoot, "var/log/pods", p.Namespace+"_"+p.Name+"_"+p.UID)
	}
	return filepath.Join(p.c.base, "logs", p.UID)
}

// StartContainer creates and starts a container named name (restart
// attempt attempt) running `sleep`, and returns its ID.
func (p *Pod) StartContainer(tb testing.TB, name string, attempt uint32) string {
	tb.Helper()
	return p.StartContainerCmd(tb, name, attempt, []string{"/bin/sleep", "3600"})
}

// StartContainerCmd is StartContainer running cmd (busybox applets) with
// its stdout and stderr going to the pod's log directory as the kubelet
// would have it (the container's log directory is created first, as the
// kubelet does).
func (p *Pod) StartContainerCmd(tb testing.TB, name string, attempt uint32, cmd []string) string {
	tb.Helper()
	return p.StartContainerSpec(tb, ContainerSpec{Name: name, Attempt: attempt, Command: cmd})
}

// ContainerSpec is a container as StartContainerSpec runs it.
type ContainerSpec struct {
	Name    string
	Attempt uint32
	Command []string // busybox applets, or /bin/workload (Options.ImageFiles)
	// Resources are the container's limits as the kubelet hands them to
	// CRI (CPU quota and period, shares, memory and swap limits, huge
	// page limits); nil: none.
	Resources *runtimeapi.LinuxContainerResources
	// Devices of this machine the container gets (a scratch disk, say).
	Devices []*runtimeapi.Device
}

// StartContainerSpec creates and starts the container s describes (see
// StartContainerCmd) and returns its ID.
func (p *Pod) StartContainerSpec(tb testing.TB, s ContainerSpec) string {
	tb.Helper()
	name, attempt := s.Name, s.Attempt
	if err := os.MkdirAll(filepath.Join(p.logDir(), name), 0o755); err != nil {
		tb.Fatalf("log directory: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt},
		Image:    &runtimeapi.ImageSpec{Image: Image},
		Command:  s.Command,
		Labels: map[string]string{
			"io.kubernetes.container.name": name, "io.kubernetes.pod.name": p.Name,
			"io.kubernetes.pod.namespace": p.Namespace, "io.kubernetes.pod.uid": p.UID,
		},
		LogPath: fmt.Sprintf("%s/%d.log", name, attempt),
		Devices: s.Devices,
	}
	if s.Resources != nil {
		cfg.Linux = &runtimeapi.LinuxContainerConfig{Resources: s.Resources}
	}
	cr, err := p.c.cri.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: p.ID, Config: cfg, SandboxConfig: p.config(nil)})
	if err != nil {
		tb.Fatalf("CreateContainer %s: %v; log: %s", name, err, p.c.log())
	}
	if _, err := p.c.cri.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: cr.GetContainerId()}); err != nil {
		tb.Fatalf("StartContainer %s: %v; log: %s", name, err, p.c.log())
	}
	return cr.GetContainerId()
}

// RequireRunning fails t unless CRI reports every container in ids as
// running, naming the ones that are not with containerd's log lines about
// dead shims (after a restart containerd may clean up a shim it could not
// reach, killing its container).
func (c *Containerd) RequireRunning(tb testing.TB, ids ...string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var bad []string
	for _, id := range ids {
		st, err := c.cri.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
		// Just after a restart the CRI plugin answers only once it has
		// reloaded its containers.
		for err != nil && strings.Contains(err.Error(), "not initialized") && ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
			st, err = c.cri.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
		}
		switch {
		case err != nil:
			bad = append(bad, fmt.Sprintf("%s: %v", id, err))
		case st.GetStatus().GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING:
			bad = append(bad, fmt.Sprintf("%s: %s (reason %q, exit code %d)", id, st.GetStatus().GetState(), st.GetStatus().GetReason(), st.GetStatus().GetExitCode()))
		}
	}
	if len(bad) > 0 {
		var shimLines []string
		for _, line := range strings.Split(c.log(), "\n") {
			if strings.Contains(line, "shim") && (strings.Contains(line, "level=error") || strings.Contains(line, "level=warn") || strings.Contains(line, "cleaning")) {
				shimLines = append(shimLines, line)
			}
		}
		tb.Fatalf("containers not running according to CRI: %s; containerd's shim errors: %s", strings.Join(bad, "; "), strings.Join(shimLines, "\n"))
	}
}

// StopContainer stops a container (it exits; its cgroup goes away).
func (p *Pod) StopContainer(tb testing.TB, id string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := p.c.cri.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 0}); err != nil {
		tb.Fatalf("StopContainer %s: %v", id, err)
	}
}

// cleanup removes everything: see the package documentation.
func (c *Containerd) cleanup() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd != nil && c.cri != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		for _, p := range c.pods {
			if p.ID != "" {
				_, _ = c.cri.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: p.ID})
				_, _ = c.cri.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: p.ID})
			}
		}
		cancel()
	}
	if c.conn != nil {
		_ = c.conn.Close()
	}
	c.stopLocked()
	// Shims serving our containerd, by PID (their -address is our socket),
	// and their sockets in /run/containerd/s, named by containerd (1.6 and 2.x alike) as
	// sha256(<containerd address>/<namespace>/<shim id>). Only ours are
	// removed: other tests may run their own containerd concurrently.
	shimIDs := map[string]bool{}
	for _, p := range c.pods {
		if p.ID != "" {
			shimIDs[p.ID] = true
		}
	}
	for _, sh := range shimsOf(c.Socket) {
		_ = syscall.Kill(sh.pid, syscall.SIGKILL)
		shimIDs[sh.id] = true
	}
	// Container processes still in our pods' cgroups.
	for _, p := range c.pods {
		for _, h := range hierarchies() {
			killCgroupTree(filepath.Join(h, p.Parent))
		}
	}
	unmountUnder(c.base)
	// With the systemd driver the slices are systemd's units: stopped
	// through systemd, which removes their directories (an rmdir behind its
	// back would leave units systemd believes active, whose directories a
	// later kubelet could not get back).
	if c.systemd {
		for _, p := range c.pods {
			_ = exec.Command("systemctl", "stop", filepath.Base(p.Parent)).Run() //nolint:gosec // G204: our pods' slices
		}
	}
	// Every pod's tree first, then the shared levels (QoS, kubepods) that
	// did not exist before and are empty now, deepest first.
	for _, p := range c.pods {
		for _, h := range hierarchies() {
			removeTree(filepath.Join(h, p.Parent))
		}
	}
	RemoveSharedLevels(c.preCgroup, c.systemd)
	if c.bridge != "" {
		_ = exec.Command("ip", "link", "del", c.bridge).Run() //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
	}
	for id := range shimIDs {
		sum := sha256.Sum256([]byte(filepath.Join(c.Socket, Namespace, id)))
		_ = os.Remove(filepath.Join(shimSocks, hex.EncodeToString(sum[:])))
	}
	_ = os.RemoveAll(c.base)
}

// Hierarchies lists the cgroup hierarchies: every v1 controller mount and
// the v2 tree (the base itself on pure v2, unified on hybrid).
func Hierarchies() []string { return hierarchies() }

func hierarchies() []string {
	if _, err := os.Stat(filepath.Join(cgroupBase, "cgroup.controllers")); err == nil {
		return []string{cgroupBase}
	}
	entries, _ := os.ReadDir(cgroupBase)
	var out []string
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 || !e.IsDir() {
			continue
		}
		d := filepath.Join(cgroupBase, e.Name())
		if _, err := os.Stat(filepath.Join(d, "cgroup.procs")); err == nil {
			out = append(out, d)
		}
	}
	return out
}

type shim struct {
	pid int
	id  string
}

// shimsOf lists the shim processes serving the containerd at address:
// command lines "containerd-shim-runc-v2 -namespace <ns> -id <id> -address
// <address>".
func shimsOf(address string) []shim {
	var out []shim
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		ours, id := false, ""
		for i := 0; i+1 < len(args); i++ {
			switch args[i] {
			case "-address":
				ours = args[i+1] == address || args[i+1] == "unix://"+address
			case "-id":
				id = args[i+1]
			}
		}
		if ours && strings.Contains(filepath.Base(args[0]), "shim") {
			out = append(out, shim{pid: pid, id: id})
		}
	}
	return out
}

// RemoveCgroupTree kills every process in the cgroup dir and its
// descendants, then removes them deepest first (retrying while the killed
// are reaped).
func RemoveCgroupTree(dir string) {
	killCgroupTree(dir)
	removeTree(dir)
}

func killCgroupTree(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		return nil
	})
}

// removeTree removes a cgroup directory and its children, deepest first.
func removeTree(dir string) {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	for _, d := range dirs {
		_ = rmdirRetry(d)
	}
}

// hasChildDir reports whether d has a subdirectory (a child cgroup: then
// it is busy for good, no retry will remove it).
func hasChildDir(d string) bool {
	entries, _ := os.ReadDir(d)
	for _, e := range entries {
		if e.IsDir() {
			return true
		}
	}
	return false
}

// rmdirRetry retries while killed processes are reaped.
func rmdirRetry(d string) error {
	var err error
	for i := 0; i < 100; i++ {
		err = syscall.Rmdir(d)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if errors.Is(err, syscall.ENOTEMPTY) {
			return err // children not ours (or not removable): leave it
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

// unmountUnder detaches every mount below dir, deepest first.
func unmountUnder(dir string) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	var mps []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			mps = append(mps, f[4])
		}
	}
	sort.Slice(mps, func(i, j int) bool { return len(mps[i]) > len(mps[j]) })
	for _, m := range mps {
		_ = syscall.Unmount(m, syscall.MNT_DETACH)
	}
}

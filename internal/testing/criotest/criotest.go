// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

// Package criotest runs a real CRI-O (make crio-bins: crio 1.34 and
// pinns; Debian's conmon; make containerd-bins' runc) for a test, as
// containerdtest runs containerd: every path of its own under a temp
// directory (configuration, storage root and run root, socket, exit and
// attach directories, namespaces, logs, version files, hooks, signature
// policy), NRI off (its socket would be the machine's), the test image
// (containerdtest's busybox) copied into its storage by copyimg (CRI-O's
// own test tool, from the same module) with no registry, and pods run
// through CRI as the kubelet runs them.
//
// Everything it creates is removed in t.Cleanup: sandboxes through CRI,
// then crio, its conmons and the containers' processes by PID, mounts
// under the temp directory, the pods' cgroups deepest first in every
// hierarchy, the temp directory. Start takes the machine lock first; pod
// UIDs carry the test mark (leftovers.TestPodUID), so a test that dies
// leaves only what the lock's janitor recognizes (crio and conmon naming
// the temp directory, processes in test pods' cgroups, the directory
// itself).
//
// Tests skip (with the reason) only when not root or when crio, pinns,
// copyimg, runc, conmon or a static busybox are missing, and fail instead
// under CI (CI set), which installs and builds them. docs/runtimes.md.
package criotest // import "github.com/containerstats/containerstatsreceiver/internal/testing/criotest"

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/containerstats/containerstatsreceiver/internal/testing/containerdtest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/leftovers"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// BinDirEnv names the directory of crio, pinns and copyimg (make
// crio-bins sets it to bin/crio).
const BinDirEnv = "CRIO_BIN_DIR"

// Conmon is the container monitor CRI-O runs (Debian's conmon).
const Conmon = "/usr/bin/conmon"

// ConfName is the name of the drop-in configuration file in a CRI-O's
// private directory (the leftover check's mark of one).
const ConfName = "99-criotest.conf"

// DirPrefix starts the name of every CRI-O's private temp directory.
const DirPrefix = "crio-"

// Binaries are the files of a BinDir.
var Binaries = []string{"crio", "pinns", "copyimg"}

// DefaultBinDir is BinDirEnv's value, or the checkout's bin/crio.
func DefaultBinDir() string {
	if d := os.Getenv(BinDirEnv); d != "" {
		return d
	}
	return filepath.Join(filepath.Dir(containerdtest.Stacks()[0].BinDir), "crio")
}

// Available reports why CRI-O of binDir, with runc of runcDir, cannot run
// here, or "" if it can.
func Available(binDir, runcDir string) string {
	if os.Geteuid() != 0 {
		return "needs root to run CRI-O"
	}
	for _, b := range Binaries {
		if fi, err := os.Stat(filepath.Join(binDir, b)); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			return fmt.Sprintf("%s not built in %s (make crio-bins)", b, binDir)
		}
	}
	if fi, err := os.Stat(filepath.Join(runcDir, "runc")); err != nil || !fi.Mode().IsRegular() {
		return fmt.Sprintf("runc not built in %s (make containerd-bins)", runcDir)
	}
	if _, err := os.Stat(Conmon); err != nil {
		return "conmon not installed (Debian: apt-get install conmon)"
	}
	return ""
}

// Options changes what Start runs.
type Options struct {
	// BinDir holds crio, pinns and copyimg; "": DefaultBinDir.
	BinDir string
	// RuncDir holds the runc CRI-O runs; "": containerdtest.Stacks' first
	// (make containerd-bins').
	RuncDir string
	// Systemd: CRI-O's systemd cgroup manager (containers in
	// crio-<id>.scope units under the pod's slice); needs systemd as PID
	// 1. Default: cgroupfs (crio-<id> directories under the pod's).
	Systemd bool
	// DropInfra is CRI-O's drop_infra_ctr: a pod without a shared PID
	// namespace has no infra (pause) container, no process and no cgroup
	// of its own. Off: every pod has one, running the test image.
	DropInfra bool
	// ConmonCgroup is conmon_cgroup: "pod" (conmon in the pod's cgroup)
	// or, with the systemd manager, a slice (conmon in
	// <slice>/crio-conmon-<id>.scope). "": "pod".
	ConmonCgroup string
	// ImageFiles are more files in the test image (containerdtest.WriteImageWith).
	ImageFiles map[string]string
	// Bridge, when set, is the pods' network (containerdtest.Options'):
	// the CNI bridge plugin on a bridge of that name (starting with
	// leftovers.LinkPrefix), host-local addresses in Subnet, gateway
	// Gateway; deleted in cleanup. Unset: host-network pods only.
	Bridge, Subnet, Gateway string
}

// CRIO is one running CRI-O.
type CRIO struct {
	tb      testing.TB
	base    string
	Socket  string // CRI-O's gRPC socket (CRI)
	Version string // what crio --version says ("1.34.0")
	Opts    Options
	// LogRoot, when set before RunPod, is a host root under which pods
	// log the way the kubelet lays them out (containerdtest.Containerd's).
	LogRoot string

	mu        sync.Mutex
	cmd       *exec.Cmd
	exited    chan struct{}
	conn      *grpc.ClientConn
	cri       runtimeapi.RuntimeServiceClient
	pods      []*Pod
	preCgroup map[string]bool
}

// Start starts CRI-O with a private configuration and the test image.
func Start(tb testing.TB, o Options) *CRIO {
	tb.Helper()
	machine.Lock(tb)
	if o.BinDir == "" {
		o.BinDir = DefaultBinDir()
	}
	if o.RuncDir == "" {
		o.RuncDir = containerdtest.Stacks()[0].BinDir
	}
	if o.ConmonCgroup == "" {
		o.ConmonCgroup = "pod"
	}
	machine.Need(tb, Available(o.BinDir, o.RuncDir))
	out, err := exec.Command(filepath.Join(o.BinDir, "crio"), "--version").Output() //nolint:gosec // G204: the test's own binary
	if err != nil {
		tb.Fatalf("crio --version: %v", err)
	}
	version := ""
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "crio version "); ok {
			version = strings.TrimSpace(v)
		}
	}
	tb.Logf("criotest: CRI-O %s (%s), cgroup manager %s, drop_infra_ctr %t, conmon_cgroup %q", version, filepath.Join(o.BinDir, "crio"), map[bool]string{true: "systemd", false: "cgroupfs"}[o.Systemd], o.DropInfra, o.ConmonCgroup)
	base, err := os.MkdirTemp("", DirPrefix)
	if err != nil {
		tb.Fatal(err)
	}
	c := &CRIO{tb: tb, base: base, Socket: filepath.Join(base, "crio.sock"), Version: version, Opts: o, preCgroup: map[string]bool{}}
	for _, h := range containerdtest.Hierarchies() {
		for _, rel := range containerdtest.SharedLevels() {
			if _, statErr := os.Stat(filepath.Join(h, rel)); statErr == nil {
				c.preCgroup[filepath.Join(h, rel)] = true
			}
		}
	}
	tb.Cleanup(c.cleanup)
	for _, d := range []string{"conf.d", "root", "runroot", "exits", "attach", "ns", "logs", "cni", "ipam", "hooks", "lib", "run", "runc-root", "cdi", "tmp"} {
		if mkErr := os.MkdirAll(filepath.Join(base, d), 0o755); mkErr != nil {
			tb.Fatal(mkErr)
		}
	}
	if o.Bridge != "" {
		if !strings.HasPrefix(o.Bridge, leftovers.LinkPrefix) {
			tb.Fatalf("criotest: bridge %q must start with %q (the leftover check's mark)", o.Bridge, leftovers.LinkPrefix)
		}
		conf := containerdtest.BridgeConflist("criotest", o.Bridge, filepath.Join(base, "ipam"), o.Subnet, o.Gateway)
		if wErr := os.WriteFile(filepath.Join(base, "cni", "10-criotest.conflist"), []byte(conf), 0o600); wErr != nil {
			tb.Fatal(wErr)
		}
	}
	if wErr := os.WriteFile(filepath.Join(base, "conf.d", ConfName), []byte(c.config()), 0o600); wErr != nil {
		tb.Fatal(wErr)
	}
	if wErr := os.WriteFile(filepath.Join(base, "runc"), []byte(runcWrapper(filepath.Join(o.RuncDir, "runc"))), 0o755); wErr != nil { //nolint:gosec // G306: a program
		tb.Fatal(wErr)
	}
	if wErr := os.WriteFile(filepath.Join(base, "policy.json"), []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o600); wErr != nil {
		tb.Fatal(wErr)
	}
	// The image: containerdtest's OCI archive, copied into CRI-O's
	// storage before CRI-O starts (the storage is locked while it runs).
	img := filepath.Join(base, "image.tar")
	if imgErr := containerdtest.WriteImageWith(img, o.ImageFiles); imgErr != nil {
		tb.Fatal(imgErr)
	}
	cp := exec.Command(filepath.Join(o.BinDir, "copyimg"), //nolint:gosec // G204: the test's own binary and paths
		"--root", filepath.Join(base, "root"), "--runroot", filepath.Join(base, "runroot"), "--storage-driver", "overlay",
		"--signature-policy", filepath.Join(base, "policy.json"),
		"--import-from", "oci-archive:"+img, "--image-name", containerdtest.Image)
	if cpOut, cpErr := cp.CombinedOutput(); cpErr != nil {
		tb.Fatalf("copyimg: %v: %s", cpErr, cpOut)
	}
	c.start(tb)
	conn, err := grpc.NewClient("unix://"+c.Socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	c.conn, c.cri = conn, runtimeapi.NewRuntimeServiceClient(conn)
	return c
}

// config is the drop-in that makes every path CRI-O writes its own and
// names the runtime, the monitor and the infra container.
func (c *CRIO) config() string {
	b, o := c.base, c.Opts
	manager := "cgroupfs"
	if o.Systemd {
		manager = "systemd"
	}
	return fmt.Sprintf(`[crio]
root = %[1]q
runroot = %[2]q
storage_driver = "overlay"
log_dir = %[3]q
version_file = %[4]q
version_file_persist = %[5]q
clean_shutdown_file = %[6]q
internal_wipe = true

[crio.api]
listen = %[7]q
stream_address = "127.0.0.1"
stream_port = "0"

[crio.runtime]
default_runtime = "runc"
cgroup_manager = %[8]q
pinns_path = %[9]q
container_exits_dir = %[10]q
container_attach_socket_dir = %[11]q
namespaces_dir = %[12]q
drop_infra_ctr = %[13]t
hooks_dir = [%[14]q]
default_mounts_file = ""
cdi_spec_dirs = [%[15]q]
irqbalance_config_file = %[16]q
big_files_temporary_dir = %[17]q
blockio_config_file = ""
rdt_config_file = ""
seccomp_profile = ""
apparmor_profile = "unconfined"
selinux = false
disable_hostport_mapping = true

[crio.runtime.runtimes.runc]
runtime_path = %[18]q
runtime_root = %[19]q
runtime_type = "oci"
monitor_path = %[20]q
monitor_cgroup = %[21]q

[crio.image]
pause_image = %[22]q
pause_command = ""
signature_policy = %[23]q
global_auth_file = ""

[crio.network]
network_dir = %[24]q
plugin_dirs = [%[25]q]

[crio.metrics]
enable_metrics = false

[crio.nri]
enable_nri = false
`,
		filepath.Join(b, "root"), filepath.Join(b, "runroot"), filepath.Join(b, "logs"),
		filepath.Join(b, "run/version"), filepath.Join(b, "lib/version"), filepath.Join(b, "lib/clean.shutdown"),
		c.Socket, manager, filepath.Join(o.BinDir, "pinns"),
		filepath.Join(b, "exits"), filepath.Join(b, "attach"), filepath.Join(b, "ns"), o.DropInfra,
		filepath.Join(b, "hooks"), filepath.Join(b, "cdi"), filepath.Join(b, "run/irqbalance"), filepath.Join(b, "tmp"),
		filepath.Join(b, "runc"), filepath.Join(b, "runc-root"), Conmon, o.ConmonCgroup,
		containerdtest.Image, filepath.Join(b, "policy.json"), filepath.Join(b, "cni"), containerdtest.CNIBinDir)
}

// runcWrapper is the OCI runtime CRI-O runs: runc, after the bundle's
// config.json has no oom_score_adj below this process's. CRI-O gives
// every infra container -998 (PodInfraOOMAdj) and has no setting to
// restrict it, as containerd's restrict_oom_score_adj does; a machine
// whose root lacks CAP_SYS_RESOURCE (this project's test machines)
// refuses the lower value and runc init fails ("failed to update
// /proc/self/oom_score_adj: Permission denied"). The rest of the spec is
// CRI-O's.
func runcWrapper(runc string) string {
	own, err := os.ReadFile("/proc/self/oom_score_adj")
	floor := strings.TrimSpace(string(own))
	if err != nil || floor == "" {
		floor = "0"
	}
	return fmt.Sprintf(`#!/bin/sh
bundle= prev=
for a in "$@"; do
  case $prev in --bundle|-b) bundle=$a ;; esac
  prev=$a
done
if [ -n "$bundle" ] && [ -f "$bundle/config.json" ]; then
  sed -i 's/"oomScoreAdj": *-[0-9]*/"oomScoreAdj": %[1]s/' "$bundle/config.json"
fi
exec %[2]q "$@"
`, floor, runc)
}

// start runs crio and waits up to 60 s for its socket.
func (c *CRIO) start(tb testing.TB) {
	tb.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	logf, err := os.OpenFile(filepath.Join(c.base, "crio.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	// --config /dev/null: none of the machine's /etc/crio/crio.conf;
	// the drop-in directory is ours.
	cmd := exec.Command(filepath.Join(c.Opts.BinDir, "crio"), "--config", "/dev/null", "--config-dir", filepath.Join(c.base, "conf.d"), "--log-level", "info") //nolint:gosec // G204: the test's own binary and paths
	cmd.Env = append(os.Environ(), "TMPDIR="+filepath.Join(c.base, "tmp"))
	cmd.Stdout, cmd.Stderr = logf, logf
	// Killed with the test process if it dies first; its conmons and
	// containers are then swept by the machine lock's janitor.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		tb.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	c.cmd, c.exited = cmd, exited
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if conn, err := net.Dial("unix", c.Socket); err == nil {
			conn.Close()
			return
		}
		select {
		case <-exited:
			tb.Fatalf("crio exited at start; log: %s", c.Log())
		case <-time.After(20 * time.Millisecond):
		}
	}
	tb.Fatalf("crio socket not ready after 60 s; log: %s", c.Log())
}

// CRI is the runtime service client.
func (c *CRIO) CRI() runtimeapi.RuntimeServiceClient { return c.cri }

// Base is the private directory.
func (c *CRIO) Base() string { return c.base }

// Log is the end of crio's log.
func (c *CRIO) Log() string {
	b, _ := os.ReadFile(filepath.Join(c.base, "crio.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// Pod is a pod sandbox run through CRI.
type Pod struct {
	c         *CRIO
	ID        string // sandbox ID
	UID       string
	Name      string
	Namespace string
	QoS       string // "burstable", "besteffort" or "" (guaranteed)
	// Parent is the pod's cgroup relative to a hierarchy; CgroupParent
	// what CRI got (containerdtest.PodCgroup).
	Parent, CgroupParent string
}

// RunPod runs a host-network pod sandbox (qos "burstable",
// "besteffort" or "guaranteed") with labels.
func (c *CRIO) RunPod(tb testing.TB, name, ns, qos string, labels map[string]string) *Pod {
	tb.Helper()
	p := &Pod{c: c, UID: leftovers.TestPodUID(), Name: name, Namespace: ns}
	if qos != "guaranteed" {
		p.QoS = qos
	}
	p.Parent, p.CgroupParent = containerdtest.PodCgroup(p.UID, p.QoS, c.Opts.Systemd)
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
		tb.Fatalf("RunPodSandbox %s/%s: %v; log: %s", ns, name, err, c.Log())
	}
	p.ID = resp.GetPodSandboxId()
	return p
}

func (p *Pod) config(labels map[string]string) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: p.Name, Namespace: p.Namespace, Uid: p.UID},
		Labels:       labels,
		LogDirectory: p.LogDir(),
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: p.CgroupParent,
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				// Host network; PID namespace per container, the
				// kubelet's default: the pod CRI-O runs without an
				// infra container under drop_infra_ctr.
				NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE, Pid: runtimeapi.NamespaceMode_CONTAINER},
			},
		},
	}
}

// LogDir is the pod's log directory.
func (p *Pod) LogDir() string {
	if p.c.LogRoot != "" {
		return filepath.Join(p.c.LogRoot, "var/log/pods", p.Namespace+"_"+p.Name+"_"+p.UID)
	}
	return filepath.Join(p.c.base, "podlogs", p.UID)
}

// StartContainer creates and starts the container s describes
// (containerdtest.ContainerSpec) and returns its ID.
func (p *Pod) StartContainer(tb testing.TB, s containerdtest.ContainerSpec) string {
	tb.Helper()
	if err := os.MkdirAll(filepath.Join(p.LogDir(), s.Name), 0o755); err != nil {
		tb.Fatalf("log directory: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := s.Command
	if len(cmd) == 0 {
		cmd = []string{"/bin/sleep", "3600"}
	}
	cfg := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: s.Name, Attempt: s.Attempt},
		// UserSpecifiedImage, as the kubelet sends it: CRI-O verifies
		// the image's signature policy against it.
		Image:   &runtimeapi.ImageSpec{Image: containerdtest.Image, UserSpecifiedImage: containerdtest.Image},
		Command: cmd,
		Labels: map[string]string{
			"io.kubernetes.container.name": s.Name, "io.kubernetes.pod.name": p.Name,
			"io.kubernetes.pod.namespace": p.Namespace, "io.kubernetes.pod.uid": p.UID,
		},
		LogPath: fmt.Sprintf("%s/%d.log", s.Name, s.Attempt),
		Devices: s.Devices,
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources: s.Resources,
			SecurityContext: &runtimeapi.LinuxContainerSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE, Pid: runtimeapi.NamespaceMode_CONTAINER},
			},
		},
	}
	cr, err := p.c.cri.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: p.ID, Config: cfg, SandboxConfig: p.config(nil)})
	if err != nil {
		tb.Fatalf("CreateContainer %s: %v; log: %s", s.Name, err, p.c.Log())
	}
	if _, err := p.c.cri.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: cr.GetContainerId()}); err != nil {
		tb.Fatalf("StartContainer %s: %v; log: %s", s.Name, err, p.c.Log())
	}
	return cr.GetContainerId()
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

// Conmons are the PIDs of the conmon processes serving this CRI-O (their
// command line names its exits directory).
func (c *CRIO) Conmons() []int {
	return procsNaming(Conmon, filepath.Join(c.base, "exits"))
}

// procsNaming lists the processes of program prog whose command line has
// an argument containing s.
func procsNaming(prog, s string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if filepath.Base(args[0]) != filepath.Base(prog) {
			continue
		}
		for _, a := range args[1:] {
			if strings.Contains(a, s) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// cleanup removes everything (see the package documentation).
func (c *CRIO) cleanup() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tb.Failed() {
		exited := ""
		if c.exited != nil {
			select {
			case <-c.exited:
				exited = " (crio had exited: " + c.cmd.ProcessState.String() + ")"
			default:
			}
		}
		c.tb.Logf("crio's log (end)%s:\n%s", exited, c.Log())
	}
	if c.cmd != nil && c.cri != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		// Every container and sandbox this CRI-O runs (it is the test's:
		// a kubelet's pods too), containers first and at once:
		// StopPodSandbox would give each CRI-O's stop timeout (30 s) to
		// exit on SIGTERM.
		if list, err := c.cri.ListContainers(ctx, &runtimeapi.ListContainersRequest{}); err == nil {
			for _, ctr := range list.GetContainers() {
				_, _ = c.cri.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: ctr.GetId(), Timeout: 0})
			}
		}
		if list, err := c.cri.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{}); err == nil {
			for _, sb := range list.GetItems() {
				_, _ = c.cri.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.GetId()})
				_, _ = c.cri.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.GetId()})
			}
		}
		cancel()
	}
	if c.conn != nil {
		_ = c.conn.Close()
	}
	if c.cmd != nil {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.exited:
		case <-time.After(10 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.exited
		}
		c.cmd = nil
	}
	for _, pid := range c.Conmons() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	// With the systemd manager the slices are systemd's units: stopped
	// through systemd (it kills what is left in them and removes them).
	if c.Opts.Systemd {
		for _, p := range c.pods {
			_ = exec.Command("systemctl", "stop", filepath.Base(p.Parent)).Run() //nolint:gosec // G204: our pods' slices
		}
	}
	for _, p := range c.pods {
		for _, h := range containerdtest.Hierarchies() {
			containerdtest.RemoveCgroupTree(filepath.Join(h, p.Parent))
		}
	}
	// CRI-O's storage mounts its layers' overlays under root, the
	// namespaces it pins under ns.
	containerdtest.UnmountUnder(c.base)
	containerdtest.RemoveSharedLevels(c.preCgroup, c.Opts.Systemd)
	if c.Opts.Bridge != "" {
		_ = exec.Command("ip", "link", "del", c.Opts.Bridge).Run() //nolint:gosec // G204: our own bridge
	}
	_ = os.RemoveAll(c.base)
}

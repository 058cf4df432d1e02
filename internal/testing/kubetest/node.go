// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package kubetest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/containerstats/containerstatsreceiver/internal/testing/containerdtest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/leftovers"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// The test node: its name, and its pod network (a bridge of our own with
// host-local addresses; the bridge's name starts with the test mark
// leftovers.LinkPrefix).
const (
	NodeName  = "kubetest-node"
	Bridge    = leftovers.LinkPrefix + "0"
	PodSubnet = "10.88.217.0/24"
	BridgeIP  = "10.88.217.1" // the node's IP and the pods' gateway

	// KubeletCgroup and RuntimeCgroup are the node's system containers:
	// the kubelet runs in the first, containerd in the second (the node
	// moves them there, as systemd runs them in kubelet.service and
	// containerd.service; --kubelet-cgroups and --runtime-cgroups name
	// them to the kubelet), so that the Summary API reports both.
	// leftovers knows them (leftovers.SystemCgroups).
	KubeletCgroup = "/" + leftovers.SystemCgroupPrefix + "kubelet"
	RuntimeCgroup = "/" + leftovers.SystemCgroupPrefix + "runtime"
)

// CNIBinDir is where Debian's containernetworking-plugins installs the
// bridge, host-local and loopback plugins.
const CNIBinDir = containerdtest.CNIBinDir

// Node is the cluster's one node: containerd (CRI, runc, the CNI bridge)
// and a kubelet registered with the API server, both in a mount namespace
// of their own (see StartNode).
type Node struct {
	Name string
	// ReadOnlyURL is the kubelet's read-only port on loopback
	// (http://127.0.0.1:<port>): /metrics/resource, /metrics/cadvisor,
	// /stats/summary, /pods.
	ReadOnlyURL string

	c          *Cluster
	dir        string
	socket     string // containerd's gRPC socket (under dir)
	ctrdBin    string // the directory of containerd, its shim, ctr and runc ("": PATH's)
	holder     *exec.Cmd
	holderIn   io.WriteCloser
	holderDone chan struct{}
	mntNS      string // the node's mount namespace, "mnt:[<inode>]"
	procs      []*proc
	preCgroup  map[string]bool // kubepods levels that existed before
}

// Path returns where the test process finds the node's path p (absolute,
// as the node's processes and pods see it): through /proc/<pid>/root of
// a process in the node's mount namespace.
func (n *Node) Path(p string) string {
	return fmt.Sprintf("/proc/%d/root%s", n.holder.Process.Pid, p)
}

// NodeAvailable reports why a node cannot run here, or "" if it can.
func NodeAvailable(binDir string) string {
	if why := containerdtest.Available(); why != "" {
		return why
	}
	for _, b := range []string{"unshare", "nsenter", "mount", "ip"} {
		if _, err := exec.LookPath(b); err != nil {
			return b + " not installed (Debian: util-linux, mount, iproute2)"
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join(CNIBinDir, p)); err != nil {
			return fmt.Sprintf("CNI plugin %s missing (Debian: apt-get install containernetworking-plugins): %v", p, err)
		}
	}
	return notBuilt(binDir, "kubelet")
}

// StartNode starts the node and returns once the API server has its Node
// object Ready. images are OCI archives (make image) imported into
// containerd's k8s.io namespace beside the busybox test image
// (containerdtest.Image), which is also the sandbox image: nothing is
// pulled, there is no registry.
//
// The node's processes run in a mount namespace of their own, made from
// the machine's: there the root is a shared mount (the manifest's
// HostToContainer mount of / needs that; on this machine / is private and
// the test must not change the machine's own mounts), /run is a tmpfs
// where /run/containerd/containerd.sock links to the node's containerd,
// and /var/lib and /var/log are directories under the test's temp
// directory (so the kubelet's root /var/lib/kubelet, its pod-resources
// socket and /var/log/pods are where deploy/daemonset.yaml expects them,
// and nothing of the machine's is touched). Network, PID and cgroup
// namespaces are the machine's: pods' cgroups are under /kubepods of the
// real hierarchies, and the pod network is the bridge Bridge on
// PodSubnet, the only addresses the node adds.
//
// Everything is undone in t.Cleanup: the kubelet stopped, every sandbox
// stopped and removed through CRI (CNI gives back its address), containerd
// stopped, every process left in the node's mount namespace or in a pod
// cgroup killed, the kubepods cgroups the node made removed in every
// hierarchy, the namespace's last process ended (its mounts go with it),
// the bridge deleted.
func (c *Cluster) StartNode(tb testing.TB, binDir string, images ...string) *Node {
	tb.Helper()
	return c.StartNodeWith(tb, binDir, nil, images...)
}

// StartNodeWith is StartNode with more files in the busybox test image
// (containerdtest.WriteImageWith's extra: path in the image to the file
// on this machine), e.g. bin/workload.
func (c *Cluster) StartNodeWith(tb testing.TB, binDir string, imageFiles map[string]string, images ...string) *Node {
	tb.Helper()
	machine.Need(tb, NodeAvailable(binDir))
	if _, err := os.Stat(filepath.Join("/sys/class/net", Bridge)); err == nil {
		tb.Fatalf("network interface %s exists: left over by a test (go run ./internal/testing/cmd/leftovers -clean)", Bridge)
	}
	if err := subnetFree(PodSubnet); err != nil {
		tb.Fatal(err)
	}
	n := &Node{Name: NodeName, c: c, dir: filepath.Join(c.Dir, "node"), ctrdBin: containerdtest.DefaultBinDir(), preCgroup: map[string]bool{}}
	n.socket = filepath.Join(n.dir, "ctrd", "c.sock")
	for _, d := range []string{"var-lib", "var-log", "ipam", "ctrd/root", "ctrd/state", "ctrd/opt", "ctrd/runc", "ctrd/cni/conf"} {
		if err := os.MkdirAll(filepath.Join(n.dir, d), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	for _, h := range containerdtest.Hierarchies() {
		for _, rel := range []string{"kubepods", "kubepods/burstable", "kubepods/besteffort"} {
			if _, err := os.Stat(filepath.Join(h, rel)); err == nil {
				n.preCgroup[filepath.Join(h, rel)] = true
			}
		}
	}
	tb.Cleanup(n.stop)
	tb.Cleanup(func() { // runs before stop: the logs of a failed test
		if tb.Failed() {
			for _, p := range n.procs {
				tb.Logf("kubetest: end of %s's log:\n%s", p.name, tail(p.log))
			}
		}
	})

	for _, args := range [][]string{
		{"link", "add", Bridge, "type", "bridge"},
		{"addr", "add", BridgeIP + "/24", "dev", Bridge}, // PodSubnet's length
		{"link", "set", Bridge, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			tb.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	n.startHolder(tb)

	// containerd, CNI: the bridge plugin on our bridge, addresses from
	// host-local (its state under the temp directory).
	cni := containerdtest.BridgeConflist("kubetest", Bridge, filepath.Join(n.dir, "ipam"), PodSubnet, BridgeIP)
	ctrd := filepath.Join(n.dir, "ctrd")
	if err := os.WriteFile(filepath.Join(ctrd, "cni", "conf", "10-kubetest.conflist"), []byte(cni), 0o600); err != nil {
		tb.Fatal(err)
	}
	version, major, err := containerdtest.Version(n.ctrdBin)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Logf("kubetest: the node's containerd is %s", version)
	ctrdCfg := containerdtest.Config(containerdtest.ConfigOptions{Major: major, BinDir: n.ctrdBin, Base: ctrd, Socket: n.socket, CNIBin: CNIBinDir})
	if err := os.WriteFile(filepath.Join(ctrd, "config.toml"), []byte(ctrdCfg), 0o600); err != nil {
		tb.Fatal(err)
	}
	n.start(tb, "containerd", containerdtest.Bin(n.ctrdBin, "containerd"), "--config", filepath.Join(ctrd, "config.toml"))
	n.moveToCgroup(tb, n.procs[len(n.procs)-1].cmd.Process.Pid, RuntimeCgroup)
	n.waitSocket(tb, 20*time.Second)
	testbox := filepath.Join(n.dir, "testbox.tar")
	if err := containerdtest.WriteImageWith(testbox, imageFiles); err != nil {
		tb.Fatal(err)
	}
	for _, img := range append([]string{testbox}, images...) {
		if out, err := exec.Command(containerdtest.Bin(n.ctrdBin, "ctr"), "-a", n.socket, "-n", containerdtest.Namespace, "images", "import", img).CombinedOutput(); err != nil { //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
			tb.Fatalf("ctr images import %s: %v: %s", img, err, out)
		}
	}

	// The kubelet. failCgroupV1: false because this machine is cgroup v1
	// (hybrid: v1 controllers, an empty unified tree): since 1.35 the
	// kubelet refuses to start on cgroup v1 unless told so (KEP-5573,
	// cgroup v1 in maintenance mode; the setting defaults to true). A v2
	// node (the vmnode guest) needs no such line. docs/kube.md.
	port, roPort, healthz := freePort(tb), freePort(tb), freePort(tb)
	cfg := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: %d
readOnlyPort: %d
healthzBindAddress: 127.0.0.1
healthzPort: %d
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: unix://%s
cgroupDriver: cgroupfs
cgroupRoot: /
cgroupsPerQOS: true
failSwapOn: false
failCgroupV1: false
enforceNodeAllocatable: []
makeIPTablesUtilChains: false
resolvConf: ""
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "1Mi"
  nodefs.available: "1%%"
  nodefs.inodesFree: "1%%"
  imagefs.available: "1%%"
nodeStatusUpdateFrequency: 5s
volumeStatsAggPeriod: 10s
maxPods: 50
`, port, roPort, healthz, n.socket)
	kcfg := filepath.Join(n.dir, "kubelet.yaml")
	if err := os.WriteFile(kcfg, []byte(cfg), 0o600); err != nil {
		tb.Fatal(err)
	}
	n.ReadOnlyURL = fmt.Sprintf("http://127.0.0.1:%d", roPort)
	// The kubelet's cgroup is made first, so that the kubelet's cAdvisor,
	// which only follows cgroups that exist when it starts, has it (else
	// /stats/summary has no kubelet system container: "unknown
	// container"). The kubelet does not move itself there: it leaves a
	// process of another mount namespace than PID 1's alone
	// (ensureProcessInContainerWithOOMScore), and ours runs in the
	// node's; the node moves it, as systemd runs a kubelet in
	// kubelet.service.
	n.makeCgroup(tb, KubeletCgroup)
	n.start(tb, "kubelet", filepath.Join(binDir, "kubelet"),
		"--config="+kcfg,
		"--kubeconfig="+c.kubeconfig(tb),
		"--hostname-override="+NodeName,
		"--node-ip="+BridgeIP,
		"--kubelet-cgroups="+KubeletCgroup,
		"--runtime-cgroups="+RuntimeCgroup,
		"--v=1")
	n.moveToCgroup(tb, n.procs[len(n.procs)-1].cmd.Process.Pid, KubeletCgroup)
	n.waitNodeReady(tb, 3*time.Minute)
	c.requireLoopbackOnly(tb, n.procs[len(n.procs)-1])
	return n
}

// startHolder starts the process that makes and holds the node's mount
// namespace (see StartNode) until its stdin closes: at the end of the
// test, or when the test process dies.
func (n *Node) startHolder(tb testing.TB) {
	tb.Helper()
	const script = `set -e
mount -t tmpfs -o mode=0755,size=64m kubetest-run /run
mkdir -p /run/containerd
ln -s "$1/ctrd/c.sock" /run/containerd/containerd.sock
mount --bind "$1/var-lib" /var/lib
mount --bind "$1/var-log" /var/log
mount --make-rshared /
echo ready
read -r _ || true
`
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, "kubetest-node", n.dir) //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if startErr := cmd.Start(); startErr != nil {
		tb.Fatalf("unshare: %v", startErr)
	}
	n.holder, n.holderIn, n.holderDone = cmd, in, make(chan struct{})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
		close(n.holderDone)
	}()
	select {
	case s := <-line:
		if strings.TrimSpace(s) != "ready" {
			<-n.holderDone
			tb.Fatalf("node mount namespace: %q: %s", s, stderr.String())
		}
	case <-time.After(20 * time.Second):
		tb.Fatalf("node mount namespace not ready after 20 s: %s", stderr.String())
	}
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", cmd.Process.Pid))
	if err != nil {
		tb.Fatal(err)
	}
	if self, _ := os.Readlink("/proc/self/ns/mnt"); self == ns {
		tb.Fatalf("the node's mount namespace is the test's (%s)", ns)
	}
	n.mntNS = ns
}

// moveToCgroup puts pid (before it has children) into the cgroup rel of
// every hierarchy, creating it (makeCgroup); stop removes it.
func (n *Node) moveToCgroup(tb testing.TB, pid int, rel string) {
	tb.Helper()
	for _, d := range n.makeCgroup(tb, rel) {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o600); err != nil {
			tb.Fatalf("moving pid %d into %s: %v", pid, d, err)
		}
	}
}

// makeCgroup creates the cgroup rel in every hierarchy and returns its
// directories; stop removes them.
func (n *Node) makeCgroup(tb testing.TB, rel string) []string {
	tb.Helper()
	var out []string
	for _, h := range containerdtest.Hierarchies() {
		d := filepath.Join(h, rel)
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
		// A v1 cpuset cgroup takes no process before it has CPUs and
		// memory nodes: its parent's.
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if b, err := os.ReadFile(filepath.Join(h, f)); err == nil {
				if err := os.WriteFile(filepath.Join(d, f), b, 0o600); err != nil { //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
					tb.Fatal(err)
				}
			}
		}
		out = append(out, d)
	}
	return out
}

// Command returns a command that runs name with args on the node, as a
// shell on a node runs it: in the node's mount namespace (its /run, where
// ctr's and crictl's default socket is the node's containerd; its
// /var/lib), with the machine's binaries and files. The mount namespace
// starts at its root: a relative path in args is the caller's business
// (cd first).
func (n *Node) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command("nsenter", append([]string{fmt.Sprintf("--mount=/proc/%d/ns/mnt", n.holder.Process.Pid), "--", name}, args...)...) //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
	cmd.Env = containerdtest.Env(n.ctrdBin)                                                                                                // ctr is the node's runtime's
	return cmd
}

// start runs bin in the node's mount namespace (nsenter execs it: the
// process is bin itself), output into <Dir>/<name>.log.
func (n *Node) start(tb testing.TB, name, bin string, args ...string) {
	tb.Helper()
	n.c.startEnv(tb, name, containerdtest.Env(n.ctrdBin), "nsenter", append([]string{fmt.Sprintf("--mount=/proc/%d/ns/mnt", n.holder.Process.Pid), "--", bin}, args...)...)
	n.procs = append(n.procs, n.c.procs[len(n.c.procs)-1])
}

func (n *Node) waitSocket(tb testing.TB, d time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if conn, err := net.Dial("unix", n.socket); err == nil {
			conn.Close()
			return
		}
		n.requireRunning(tb)
		time.Sleep(20 * time.Millisecond)
	}
	tb.Fatalf("containerd socket not ready after %s; log:\n%s", d, tail(n.procs[0].log))
}

// requireRunning fails t when a process of the node has exited.
func (n *Node) requireRunning(tb testing.TB) {
	tb.Helper()
	for _, p := range n.procs {
		select {
		case <-p.exited:
			tb.Fatalf("%s exited (%v); log:\n%s", p.name, p.exitErr(), tail(p.log))
		default:
		}
	}
}

func (n *Node) waitNodeReady(tb testing.TB, d time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(d)
	last := "not registered"
	for time.Now().Before(deadline) {
		n.requireRunning(tb)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		node, err := n.c.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		cancel()
		if err == nil {
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady {
					if cond.Status == corev1.ConditionTrue {
						return
					}
					last = fmt.Sprintf("Ready=%s: %s %s", cond.Status, cond.Reason, cond.Message)
				}
			}
		} else {
			last = err.Error()
		}
		time.Sleep(500 * time.Millisecond)
	}
	tb.Fatalf("node %s not Ready after %s: %s", n.Name, d, last)
}

// stop undoes StartNode: see there.
func (n *Node) stop() {
	var kubelet, ctrd *proc
	for _, p := range n.procs {
		switch p.name {
		case "kubelet":
			kubelet = p
		case "containerd":
			ctrd = p
		}
	}
	if kubelet != nil {
		stopProc(kubelet)
	}
	if ctrd != nil {
		select {
		case <-ctrd.exited:
		default:
			n.removeSandboxes()
		}
		stopProc(ctrd)
	}
	n.c.procs = without(n.c.procs, n.procs)
	if n.mntNS != "" {
		killMountNamespace(n.mntNS, n.holder.Process.Pid)
	}
	hs := containerdtest.Hierarchies()
	for _, h := range hs {
		entries, _ := os.ReadDir(filepath.Join(h, "kubepods"))
		for _, e := range entries {
			d := filepath.Join(h, "kubepods", e.Name())
			if e.IsDir() && !n.preCgroup[d] {
				containerdtest.RemoveCgroupTree(d)
			}
		}
		for _, q := range []string{"burstable", "besteffort"} {
			entries, _ := os.ReadDir(filepath.Join(h, "kubepods", q))
			for _, e := range entries {
				if e.IsDir() {
					containerdtest.RemoveCgroupTree(filepath.Join(h, "kubepods", q, e.Name()))
				}
			}
		}
	}
	for _, h := range hs {
		for _, rel := range []string{KubeletCgroup, RuntimeCgroup} {
			containerdtest.RemoveCgroupTree(filepath.Join(h, rel))
		}
		for _, rel := range []string{"kubepods/burstable", "kubepods/besteffort", "kubepods"} {
			d := filepath.Join(h, rel)
			if !n.preCgroup[d] {
				_ = syscall.Rmdir(d)
			}
		}
	}
	if n.holder != nil {
		n.holderIn.Close()
		select {
		case <-n.holderDone:
		case <-time.After(10 * time.Second):
			_ = n.holder.Process.Kill()
			<-n.holderDone
		}
	}
	_ = exec.Command("ip", "link", "del", Bridge).Run()
}

// SandboxCreated is each pod sandbox's creation time as the node's
// runtime reports it (CRI ListPodSandbox, read-only), by pod UID: what
// the receiver's k8s.pod.uptime counts from.
func (n *Node) SandboxCreated(tb testing.TB) map[types.UID]time.Time {
	tb.Helper()
	conn, err := grpc.NewClient("unix://"+n.socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatalf("CRI client: %v", err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := runtimeapi.NewRuntimeServiceClient(conn).ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{
		Filter: &runtimeapi.PodSandboxFilter{State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}},
	})
	if err != nil {
		tb.Fatalf("CRI ListPodSandbox: %v", err)
	}
	out := map[types.UID]time.Time{}
	for _, sb := range resp.GetItems() {
		out[types.UID(sb.GetMetadata().GetUid())] = time.Unix(0, sb.GetCreatedAt())
	}
	return out
}

// removeSandboxes stops and removes every pod sandbox through CRI (the
// CNI plugins give back addresses and veths).
func (n *Node) removeSandboxes() {
	conn, err := grpc.NewClient("unix://"+n.socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return
	}
	defer conn.Close()
	cri := runtimeapi.NewRuntimeServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := cri.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return
	}
	for _, sb := range resp.GetItems() {
		_, _ = cri.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.GetId()})
		_, _ = cri.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.GetId()})
	}
}

// killMountNamespace kills every process whose mount namespace is ns
// (the node's shims, what containerd and the kubelet left) but holder,
// which ends when its stdin closes.
func killMountNamespace(ns string, holder int) {
	for i := 0; i < 50; i++ {
		found := false
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() || pid == holder {
				continue
			}
			if l, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid)); err == nil && l == ns {
				found = true
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if !found {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stopProc stops one process: SIGTERM to its process group, SIGKILL
// after 10 s.
func stopProc(p *proc) {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
}

func without(all, drop []*proc) []*proc {
	var out []*proc
	for _, p := range all {
		keep := true
		for _, d := range drop {
			keep = keep && p != d
		}
		if keep {
			out = append(out, p)
		}
	}
	return out
}

// subnetFree fails when an address of this machine is in cidr.
func subnetFree(cidr string) error {
	_, want, err := net.ParseCIDR(cidr)
	if err != nil {
		return err
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && (want.Contains(ipn.IP) || ipn.Contains(want.IP)) {
			return fmt.Errorf("pod subnet %s overlaps this machine's address %s", cidr, ipn)
		}
	}
	return nil
}

func freePort(tb testing.TB) int {
	tb.Helper()
	_, p, _ := net.SplitHostPort(freeAddr(tb))
	port, err := strconv.Atoi(p)
	if err != nil {
		tb.Fatal(err)
	}
	return port
}

// WaitReadyPod waits (at most d) for a pod of namespace ns matching the
// label selector sel, not being deleted and with a UID other than notUID,
// that runs with every container ready, and returns it.
func WaitReadyPod(tb testing.TB, cs kubernetes.Interface, ns, sel string, notUID types.UID, d time.Duration) *corev1.Pod {
	tb.Helper()
	return WaitPod(tb, cs, ns, sel, d, func(p *corev1.Pod) bool { return p.UID != notUID })
}

// WaitPod waits (at most d) for a pod of namespace ns matching the label
// selector sel, not being deleted, for which ok holds, that runs with
// every container ready (PodReady), and returns it.
func WaitPod(tb testing.TB, cs kubernetes.Interface, ns, sel string, d time.Duration, ok func(*corev1.Pod) bool) *corev1.Pod {
	tb.Helper()
	deadline := time.Now().Add(d)
	last := "no answer yet"
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		cancel()
		if err != nil {
			last = err.Error()
		} else {
			for i := range pods.Items {
				if p := &pods.Items[i]; p.DeletionTimestamp == nil && ok(p) && PodReady(p) {
					return p
				}
			}
			last = PodsSummary(pods.Items)
		}
		time.Sleep(250 * time.Millisecond)
	}
	tb.Fatalf("no Ready pod %s/%s as wanted after %s: %s", ns, sel, d, last)
	return nil
}

// PodReady reports whether p runs with every container ready.
func PodReady(p *corev1.Pod) bool {
	ready := p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) > 0
	for _, st := range p.Status.ContainerStatuses {
		ready = ready && st.Ready
	}
	return ready
}

// PodsSummary is one line per pod: phase, and per container readiness,
// restarts and state (a failure's context).
func PodsSummary(pods []corev1.Pod) string {
	var b strings.Builder
	for _, p := range pods {
		fmt.Fprintf(&b, "%s %s;", p.Name, p.Status.Phase)
		for _, cs := range p.Status.ContainerStatuses {
			fmt.Fprintf(&b, " %s ready=%v restarts=%d state=%+v", cs.Name, cs.Ready, cs.RestartCount, cs.State)
		}
		b.WriteString("\n")
	}
	return b.String()
}

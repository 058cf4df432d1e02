// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package leftovers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeMachine lays out a /proc, a hybrid cgroup tree, a mount table, a temp
// directory and /run/netns under one directory.
type fakeMachine struct {
	t    *testing.T
	root string
	o    Options
}

func newFakeMachine(t *testing.T) *fakeMachine {
	root := t.TempDir()
	m := &fakeMachine{t: t, root: root, o: Options{
		Proc: filepath.Join(root, "proc"), Cgroup: filepath.Join(root, "cgroup"),
		MountInfo: filepath.Join(root, "mountinfo"), TempDir: filepath.Join(root, "tmp"),
		NetNS: filepath.Join(root, "netns"), SysNet: filepath.Join(root, "net"), Self: []int{4242},
	}}
	for _, h := range []string{"memory", "cpu,cpuacct", "unified"} {
		m.file(filepath.Join("cgroup", h, "cgroup.procs"), "")
	}
	if err := os.Symlink("cpu,cpuacct", filepath.Join(m.o.Cgroup, "cpu")); err != nil {
		t.Fatal(err)
	}
	m.file("mountinfo", "22 1 0:21 / / rw shared:1 - ext4 /dev/vda rw\n")
	m.mkdir("tmp")
	m.mkdir("proc")
	return m
}

func (m *fakeMachine) file(rel, data string) {
	p := filepath.Join(m.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		m.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		m.t.Fatal(err)
	}
}

func (m *fakeMachine) mkdir(rel string) {
	if err := os.MkdirAll(filepath.Join(m.root, rel), 0o755); err != nil {
		m.t.Fatal(err)
	}
}

// proc adds process pid with its command line, cgroup lines and environment.
func (m *fakeMachine) proc(pid, state string, args []string, cgroup string, env ...string) {
	dir := filepath.Join("proc", pid)
	m.file(filepath.Join(dir, "cmdline"), strings.Join(args, "\x00")+"\x00")
	m.file(filepath.Join(dir, "stat"), pid+" ("+filepath.Base(args[0])+") "+state+" 1 1 1")
	m.file(filepath.Join(dir, "cgroup"), cgroup)
	m.file(filepath.Join(dir, "environ"), strings.Join(env, "\x00"))
}

func find(t *testing.T, o Options) map[string]bool {
	t.Helper()
	ls, err := Find(o)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, l := range ls {
		got[l.String()] = true
	}
	return got
}

func hostCgroup(path string) string {
	return "12:memory:" + path + "\n4:cpu,cpuacct:" + path + "\n0::" + path + "\n"
}

func TestFindOnAMachineWithoutKubelet(t *testing.T) {
	m := newFakeMachine(t)
	tmp := m.o.TempDir
	pod := "/kubepods/burstable/podaaaa7e57-0000-0000-0000-000000000001"
	ctr := pod + "/" + strings.Repeat("c", 64)
	for _, h := range []string{"memory", "cpu,cpuacct", "unified"} {
		m.mkdir(filepath.Join("cgroup", h, ctr))
	}
	m.mkdir(filepath.Join("cgroup", "memory", "system.slice", "sshd.service"))
	// A test node's system containers (kubetest) and a process left in one.
	for _, h := range []string{"memory", "cpu,cpuacct"} {
		m.mkdir(filepath.Join("cgroup", h, SystemCgroupPrefix+"runtime"))
	}
	m.proc("111", "S", []string{"/usr/bin/containerd-shim-runc-v2", "-namespace", "k8s.io", "-id", "def"}, hostCgroup("/"+SystemCgroupPrefix+"runtime"))
	// Leftovers: a container process, a shim and a containerd of a test
	// socket, a Prometheus of a test directory, an e2e collector, a
	// cgrouptest child that never made it into its cgroup.
	m.proc("100", "S", []string{"/bin/sleep", "3600"}, hostCgroup(ctr))
	m.proc("101", "S", []string{"/usr/bin/containerd-shim-runc-v2", "-namespace", "k8s.io", "-id", "abc", "-address", tmp + "/ctrd-1/c.sock"}, hostCgroup("/"))
	m.proc("102", "S", []string{"containerd", "--config", tmp + "/ctrd-1/config.toml"}, hostCgroup("/"))
	m.proc("103", "S", []string{"/usr/bin/prometheus", "--storage.tsdb.path=" + tmp + "/TestX/001/data"}, hostCgroup("/"))
	m.proc("104", "S", []string{"/work/bin/otelcol-containerstats", "--config", "/work/config/e2e-agent.yaml"}, hostCgroup("/"))
	m.proc("105", "S", []string{"/tmp/go-build1/b001/scrape.test", "-test.run=^$"}, hostCgroup("/"), "PATH=/bin", "CGROUPTEST_CHILD=sleep")
	// A test cluster's etcd and kube-apiserver (internal/testing/kubetest).
	m.proc("106", "S", []string{"/work/bin/kube/etcd", "-data-dir", tmp + "/TestKube/001/etcd", "-listen-client-url", "http://127.0.0.1:40001"}, hostCgroup("/"))
	m.proc("107", "S", []string{"/work/bin/kube/kube-apiserver", "--etcd-servers=http://127.0.0.1:40001", "--tls-cert-file=" + tmp + "/TestKube/001/pki/apiserver.crt"}, hostCgroup("/"))
	// A vmnode guest (by its -name, its files anywhere) and the build of
	// one (mmdebstrap into the temp directory).
	m.proc("108", "S", []string{"qemu-system-x86_64", "-name", VMName, "-kernel", "/root/.cache/x/vmlinux"}, hostCgroup("/"))
	m.proc("109", "S", []string{"mmdebstrap", "--variant=minbase", "bookworm", tmp + "/vmnode-build-1/rootfs"}, hostCgroup("/"))
	// bench-peer's cAdvisor (its address file in the test's directory).
	m.proc("110", "S", []string{"/work/bin/cadvisorpeer", "-hk-interval", "10s", "-addr-file", tmp + "/TestPeerquietN=2001/001/cadvisor.addr"}, hostCgroup("/"))
	// make containerd-bins' runtime (containerd 2.4, its shim and runc from
	// bin/containerd; docs/runtimes.md), named by its full path.
	m.proc("112", "S", []string{"/work/bin/containerd/containerd", "--config", tmp + "/ctrd-2/config.toml"}, hostCgroup("/"))
	m.proc("113", "S", []string{"/work/bin/containerd/containerd-shim-runc-v2", "-namespace", "k8s.io", "-id", "ghi", "-address", tmp + "/ctrd-2/c.sock"}, hostCgroup("/"))
	m.proc("114", "S", []string{"/work/bin/containerd/runc", "--root", tmp + "/ctrd-2/runc/k8s.io", "delete", "ghi"}, hostCgroup("/"))
	// dockertest's dockerd, podmantest's API service and a conmon (their
	// data and state under the test's directory).
	m.proc("115", "S", []string{"/usr/sbin/dockerd", "--data-root", tmp + "/TestRealDocker/001/root", "-H", "unix://" + tmp + "/TestRealDocker/001/docker.sock"}, hostCgroup("/"))
	m.proc("116", "S", []string{"podman", "--root", tmp + "/TestRealPodmanAPI/001/root", "system", "service", "--time=0"}, hostCgroup("/"))
	m.proc("117", "S", []string{"/usr/bin/conmon", "--api-version", "1", "-b", tmp + "/TestRealPodman/001/root/vfs-containers/abc/userdata"}, hostCgroup("/libpod_parent/conmon"))
	// criotest's CRI-O and a conmon of it (the conmon's cgroup is its
	// pod's crio-conmon-<id>, under kubepods: caught by the cgroup too),
	// both naming the private directory.
	m.proc("118", "S", []string{"/work/bin/crio/crio", "--config", "/dev/null", "--config-dir", tmp + "/crio-1/conf.d"}, hostCgroup("/"))
	m.proc("119", "S", []string{"/work/bin/crio/pinns", "-d", tmp + "/crio-1/ns", "-f", "abc", "-n"}, hostCgroup("/"))
	// Not leftovers: the machine's own processes, a zombie in a test
	// cgroup (not alive), the caller itself, a containerd of the machine,
	// an etcd and a kube-apiserver of a real control plane.
	m.proc("200", "S", []string{"/usr/sbin/sshd", "-D"}, hostCgroup("/system.slice/sshd.service"))
	m.proc("201", "Z", []string{"sh"}, hostCgroup(ctr))
	m.proc("4242", "S", []string{"leftovers"}, hostCgroup(ctr))
	m.proc("202", "S", []string{"/usr/bin/containerd"}, hostCgroup("/system.slice/containerd.service"))
	m.proc("203", "S", []string{"/usr/bin/otelcol-containerstats", "--config", "/etc/otelcol/config.yaml"}, hostCgroup("/"))
	m.proc("204", "S", []string{"/usr/local/bin/etcd", "--data-dir=/var/lib/etcd"}, hostCgroup("/system.slice/etcd.service"))
	m.proc("205", "S", []string{"kube-apiserver", "--tls-cert-file=/etc/kubernetes/pki/apiserver.crt"}, hostCgroup("/"))
	m.proc("206", "S", []string{"qemu-system-x86_64", "-name", "someones-vm", "-hda", "/var/lib/vm.img"}, hostCgroup("/"))
	m.proc("207", "S", []string{"/usr/sbin/dockerd", "-H", "fd://", "--containerd=/run/containerd/containerd.sock"}, hostCgroup("/system.slice/docker.service"))
	m.file("mountinfo", "22 1 0:21 / / rw shared:1 - ext4 /dev/vda rw\n"+
		"90 22 0:50 / "+tmp+"/ctrd-1/state/io.containerd.runtime.v2.task/k8s.io/abc/rootfs rw - overlay overlay rw\n"+
		"91 22 0:51 / "+tmp+"/TestY/hostroot\\040x rw - ext4 /dev/vda rw\n"+
		"92 22 0:52 / /mnt/data rw - ext4 /dev/vdb rw\n")
	m.file(filepath.Join("netns", "cni-1234"), "")
	m.file(filepath.Join("tmp", "ctrd-1", "config.toml"), "version = 2\n")
	m.file(filepath.Join("tmp", "crio-1", "conf.d", "99-criotest.conf"), "[crio]\n")
	m.mkdir(filepath.Join("tmp", "crio-unrelated", "conf.d"))
	m.mkdir(filepath.Join("tmp", "ctrd-unrelated"))
	m.mkdir(filepath.Join("tmp", "vmnode-build-1", "rootfs"))
	// A test node's bridge (kubetest) is one; the machine's interfaces not.
	for _, l := range []string{"cstest0", "eth0", "lo", "cni0"} {
		m.mkdir(filepath.Join("net", l))
	}

	got := find(t, m.o)
	for _, want := range []string{
		"process 100: in test cgroup " + ctr + ": /bin/sleep 3600",
		"process 101: containerd-shim-runc-v2 of a test (names " + tmp + "): /usr/bin/containerd-shim-runc-v2 -namespace k8s.io -id abc -address " + tmp + "/ctrd-1/c.sock",
		"process 102: containerd of a test (names " + tmp + "): containerd --config " + tmp + "/ctrd-1/config.toml",
		"process 103: prometheus of a test (names " + tmp + "): /usr/bin/prometheus --storage.tsdb.path=" + tmp + "/TestX/001/data",
		"process 104: collector with an e2e config: /work/bin/otelcol-containerstats --config /work/config/e2e-agent.yaml",
		"process 105: cgrouptest child: /tmp/go-build1/b001/scrape.test -test.run=^$",
		"process 106: etcd of a test (names " + tmp + "): /work/bin/kube/etcd -data-dir " + tmp + "/TestKube/001/etcd -listen-client-url http://127.0.0.1:40001",
		"process 107: kube-apiserver of a test (names " + tmp + "): /work/bin/kube/kube-apiserver --etcd-servers=http://127.0.0.1:40001 --tls-cert-file=" + tmp + "/TestKube/001/pki/apiserver.crt",
		"cgroup /kubepods (in cpu,cpuacct, memory, unified)",
		"cgroup /kubepods/burstable (in cpu,cpuacct, memory, unified)",
		"cgroup " + pod + " (in cpu,cpuacct, memory, unified)",
		"cgroup " + ctr + " (in cpu,cpuacct, memory, unified)",
		"cgroup /" + SystemCgroupPrefix + "runtime (in cpu,cpuacct, memory)",
		"process 111: in test cgroup /" + SystemCgroupPrefix + "runtime: /usr/bin/containerd-shim-runc-v2 -namespace k8s.io -id def",
		"mount " + tmp + "/ctrd-1/state/io.containerd.runtime.v2.task/k8s.io/abc/rootfs (overlay mount)",
		"mount " + tmp + "/TestY/hostroot x (ext4 mount)",
		"netns " + m.o.NetNS + "/cni-1234 (named network namespace)",
		"dir " + tmp + "/ctrd-1 (containerdtest's private directory)",
		"link cstest0 (a test node's network interface)",
		"process 108: a vmnode guest: qemu-system-x86_64 -name " + VMName + " -kernel /root/.cache/x/vmlinux",
		"process 109: mmdebstrap of a test (names " + tmp + "): mmdebstrap --variant=minbase bookworm " + tmp + "/vmnode-build-1/rootfs",
		"process 110: cadvisorpeer of a test (names " + tmp + "): /work/bin/cadvisorpeer -hk-interval 10s -addr-file " + tmp + "/TestPeerquietN=2001/001/cadvisor.addr",
		"dir " + tmp + "/vmnode-build-1 (a vmnode guest's unfinished build)",
		"process 112: containerd of a test (names " + tmp + "): /work/bin/containerd/containerd --config " + tmp + "/ctrd-2/config.toml",
		"process 113: containerd-shim-runc-v2 of a test (names " + tmp + "): /work/bin/containerd/containerd-shim-runc-v2 -namespace k8s.io -id ghi -address " + tmp + "/ctrd-2/c.sock",
		"process 114: runc of a test (names " + tmp + "): /work/bin/containerd/runc --root " + tmp + "/ctrd-2/runc/k8s.io delete ghi",
		"process 115: dockerd of a test (names " + tmp + "): /usr/sbin/dockerd --data-root " + tmp + "/TestRealDocker/001/root -H unix://" + tmp + "/TestRealDocker/001/docker.sock",
		"process 116: podman of a test (names " + tmp + "): podman --root " + tmp + "/TestRealPodmanAPI/001/root system service --time=0",
		"process 117: conmon of a test (names " + tmp + "): /usr/bin/conmon --api-version 1 -b " + tmp + "/TestRealPodman/001/root/vfs-containers/abc/userdata",
		"process 118: crio of a test (names " + tmp + "): /work/bin/crio/crio --config /dev/null --config-dir " + tmp + "/crio-1/conf.d",
		"process 119: pinns of a test (names " + tmp + "): /work/bin/crio/pinns -d " + tmp + "/crio-1/ns -f abc -n",
		"dir " + tmp + "/crio-1 (criotest's private directory)",
	} {
		if !got[want] {
			t.Errorf("missing leftover %q", want)
		}
		delete(got, want)
	}
	for extra := range got {
		t.Errorf("not a leftover, reported: %q", extra)
	}
}

// On a real node (a kubelet no test started runs) only pods with the test
// mark in their UID count, and named network namespaces are the node's.
func TestFindOnARealNode(t *testing.T) {
	m := newFakeMachine(t)
	testPod := "/kubepods/besteffort/pod" + TestPodUID()
	realPod := "/kubepods/besteffort/pod0a1b2c3d-0000-0000-0000-000000000002"
	sysdTest := "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + strings.ReplaceAll(TestPodUID(), "-", "_") + ".slice"
	standalone := "/" + StandaloneTop + "/" + strings.Repeat("d", 64)
	for _, p := range []string{testPod + "/" + strings.Repeat("a", 64), realPod + "/" + strings.Repeat("b", 64), sysdTest, standalone} {
		m.mkdir(filepath.Join("cgroup", "memory", p))
	}
	m.proc("300", "S", []string{"/usr/bin/kubelet", "--config", "/var/lib/kubelet/config.yaml"}, hostCgroup("/"))
	m.proc("301", "S", []string{"/pause"}, hostCgroup(realPod+"/"+strings.Repeat("b", 64)))
	m.proc("302", "S", []string{"/bin/sleep", "1"}, hostCgroup(testPod+"/"+strings.Repeat("a", 64)))
	m.file(filepath.Join("netns", "cni-9"), "")

	got := find(t, m.o)
	want := map[string]bool{
		"process 302: in test cgroup " + testPod + "/" + strings.Repeat("a", 64) + ": /bin/sleep 1": true,
		"cgroup " + testPod + " (in memory)":                                 true,
		"cgroup " + testPod + "/" + strings.Repeat("a", 64) + " (in memory)": true,
		"cgroup " + sysdTest + " (in memory)":                                true,
		"cgroup /" + StandaloneTop + " (in memory)":                          true,
		"cgroup " + standalone + " (in memory)":                              true,
	}
	for w := range want {
		if !got[w] {
			t.Errorf("missing leftover %q", w)
		}
	}
	for g := range got {
		if !want[g] {
			t.Errorf("not a leftover on a real node, reported: %q", g)
		}
	}
}

func TestTestPodUID(t *testing.T) {
	u := TestPodUID()
	if len(u) != 36 || strings.Count(u, "-") != 4 || !IsTestPodUID(u) {
		t.Fatalf("TestPodUID() = %q", u)
	}
	if IsTestPodUID("0a1b2c3d-0000-0000-0000-000000000002") {
		t.Error("an unmarked UID counts as a test's")
	}
	if !IsTestPodUID(strings.ReplaceAll(u, "-", "_")) {
		t.Error("the systemd-escaped form is not recognized")
	}
}

// Clean on the fake machine removes the cgroup directories deepest first
// and the containerdtest directory (no real process or mount involved).
func TestCleanRemovesCgroupsAndDirs(t *testing.T) {
	m := newFakeMachine(t)
	pod := "/kubepods/burstable/pod" + TestPodUID()
	for _, h := range []string{"memory", "unified"} {
		m.mkdir(filepath.Join("cgroup", h, pod, strings.Repeat("c", 64)))
	}
	m.file(filepath.Join("tmp", "ctrd-9", "config.toml"), "")
	ls, err := Find(m.o)
	if err != nil {
		t.Fatal(err)
	}
	if errs := Clean(m.o, ls); len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, h := range []string{"memory", "unified"} {
		if _, err := os.Stat(filepath.Join(m.o.Cgroup, h, "kubepods")); !os.IsNotExist(err) {
			t.Errorf("%s/kubepods still there: %v", h, err)
		}
	}
	if _, err := os.Stat(filepath.Join(m.o.TempDir, "ctrd-9")); !os.IsNotExist(err) {
		t.Errorf("containerdtest directory still there: %v", err)
	}
	if ls, _ := Find(m.o); len(ls) != 0 {
		t.Errorf("after Clean: %v", ls)
	}
}

//go:build realmachine

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// run runs a command for the test's setup, failing the test on error.
func run(t *testing.T, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	require.NoError(t, err, "%s %v: %s", name, args, out)
}

// netPod gives a real kubepods-shaped pod its own network namespace: a
// namespace made by the test, a veth pair (eth0 inside, 10.250.X.2/30;
// the host end 10.250.X.1/30), IPv6 off on both ends so only the test's
// traffic flows, and a process in that namespace moved into the pod's
// container cgroup in every hierarchy. Everything is removed in cleanup.
func netPod(t *testing.T) (c *cgrouptest.Container, ns, hostIP string) {
	t.Helper()
	needNetTools(t)
	c = cgrouptest.NewContainer(t, "burstable")
	ns, hostIP = netnsProcess(t, c, 250)
	return c, ns, hostIP
}

// needNetTools: ip and busybox, or a skip (a failure under CI).
func needNetTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"ip", "busybox"} {
		if _, err := exec.LookPath(tool); err != nil {
			machine.Need(t, fmt.Sprintf("%s not installed: %v", tool, err))
		}
	}
}

// netnsProcess makes a network namespace and a veth pair (host end
// 10.<net>.<r>.1/30, eth0 10.<net>.<r>.2/30 inside, IPv6 off), starts a
// sleeping process in the namespace and moves it into c's cgroups in every
// hierarchy. Everything is removed in the test's cleanups.
func netnsProcess(t *testing.T, c *cgrouptest.Container, net byte) (ns, hostIP string) {
	t.Helper()
	var b [3]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	ns, hostEnd := "cst-"+id, "cst"+id+"h"
	hostIP = fmt.Sprintf("10.%d.%d.1", net, b[0])
	run(t, "ip", "netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	run(t, "ip", "link", "add", hostEnd, "type", "veth", "peer", "name", "eth0", "netns", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", hostEnd).Run() })
	run(t, "sysctl", "-q", "-w", "net.ipv6.conf."+hostEnd+".disable_ipv6=1")
	run(t, "ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1")
	run(t, "ip", "addr", "add", hostIP+"/30", "dev", hostEnd)
	run(t, "ip", "link", "set", hostEnd, "up")
	run(t, "ip", "netns", "exec", ns, "ip", "addr", "add", fmt.Sprintf("10.%d.%d.2/30", net, b[0]), "dev", "eth0")
	run(t, "ip", "netns", "exec", ns, "ip", "link", "set", "eth0", "up")

	cmd := exec.Command("ip", "netns", "exec", ns, "busybox", "sleep", "600")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	// `ip netns exec` enters the namespace after it started: until then
	// the process's /proc/<pid>/net/dev is the host's, and a scrape in
	// that moment sees a container in the host's namespace (no network
	// points; a cold CI run caught it). Move it into the cgroups only
	// once it is in the namespace.
	waitInNetns(t, cmd.Process.Pid, ns)
	dirs, _ := filepath.Glob(filepath.Join(cgrouptest.Base, "*", c.Rel))
	if cgrouptest.V2() {
		dirs = []string{c.Dir("")}
	}
	require.NotEmpty(t, dirs)
	for _, d := range dirs {
		require.NoError(t, os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600), d)
	}
	return ns, hostIP
}

// waitInNetns waits (10 s at most) until process pid is in the named
// network namespace: /proc/<pid>/ns/net is the same nsfs inode as the
// namespace's mount under /run/netns.
func waitInNetns(t *testing.T, pid int, ns string) {
	t.Helper()
	var want syscall.Stat_t
	require.NoError(t, syscall.Stat(filepath.Join("/run/netns", ns), &want))
	self := fmt.Sprintf("/proc/%d/ns/net", pid)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got syscall.Stat_t
		err := syscall.Stat(self, &got)
		if err == nil && got.Dev == want.Dev && got.Ino == want.Ino {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d never entered network namespace %s (last error %v)", pid, ns, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRealPodNetwork: a pod whose process lives in a network namespace the
// test made pings the host end of its veth pair 10 times with 1000-byte
// payloads. Its k8s.pod.network.io on eth0 grows, in each direction, by at
// least 10 x (1000 + 8 ICMP + 20 IP) bytes and at most 10 x (that + 14
// Ethernet) + 1024 bytes of overhead (ARP); packets grow by 10 to 12; lo
// is never reported.
func TestRealPodNetwork(t *testing.T) {
	const n, size = 10, 1000
	c, ns, hostIP := netPod(t)
	s := realScraper(t, defaultMBC(), &fakeClock{now: time.Now()})
	pod := func() map[string]float64 {
		p := points(mustScrape(t, s, c), "k8s.pod.uid", c.PodUID)
		_, lo := p["k8s.pod.network.io/lo/receive"]
		assert.False(t, lo, "lo is left out")
		return p
	}
	before := pod()
	require.Contains(t, before, "k8s.pod.network.io/eth0/receive", "the pod's eth0 was not reported: %v", before)

	run(t, "ip", "netns", "exec", ns, "busybox", "ping", "-c", strconv.Itoa(n), "-i", "0.05", "-s", strconv.Itoa(size), hostIP)
	after := pod()
	lo, hi := float64(n*(size+28)), float64(n*(size+28+14)+1024)
	for _, dir := range []string{"receive", "transmit"} {
		d := after["k8s.pod.network.io/eth0/"+dir] - before["k8s.pod.network.io/eth0/"+dir]
		assert.True(t, d >= lo && d <= hi, "%s bytes grew by %.0f, want [%.0f, %.0f]", dir, d, lo, hi)
		pk := after["k8s.pod.network.packet.count/eth0/"+dir] - before["k8s.pod.network.packet.count/eth0/"+dir]
		assert.True(t, pk >= n && pk <= n+2, "%s packets grew by %.0f, want [%d, %d]", dir, pk, n, n+2)
		assert.Equal(t, 0.0, after["k8s.pod.network.errors/eth0/"+dir])
		t.Logf("%s: +%.0f bytes, +%.0f packets", dir, d, pk)
	}
	// The node's view is the host namespace: the host end of the veth is
	// left out (veth*), as cAdvisor does; the pod's eth0 is not the host's.
	m := mustScrape(t, s, c)
	node := points(m, "k8s.node.name", "real")
	for k := range node {
		assert.NotContains(t, k, "/lo/")
	}
}

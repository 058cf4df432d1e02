//go:build realmachine

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// meminfoKB returns a /proc/meminfo field (kB, or a bare count).
func meminfoKB(t *testing.T, key string) uint64 {
	t.Helper()
	f, err := os.Open("/proc/meminfo")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && k == key {
			n, err := strconv.ParseUint(strings.Fields(v)[0], 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("/proc/meminfo has no %s", key)
	return 0
}

func readTrim(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	return strings.TrimSpace(string(data))
}

// hugetlbHierarchy is where this machine's hugetlb controller lives: the v1
// "hugetlb" hierarchy, else the unified tree ("" on v2, "unified" on
// hybrid) when its cgroup.controllers lists hugetlb; ok false when neither.
func hugetlbHierarchy() (name string, v1, ok bool) {
	if _, err := os.Stat(filepath.Join(cgrouptest.Base, "hugetlb", "cgroup.procs")); err == nil {
		return "hugetlb", true, true
	}
	for _, n := range []string{"", "unified"} {
		data, err := os.ReadFile(filepath.Join(cgrouptest.Base, n, "cgroup.controllers"))
		if err == nil && strings.Contains(" "+strings.TrimSpace(string(data))+" ", " hugetlb ") {
			return n, false, true
		}
	}
	return "", false, false
}

// enableHugetlbV2 turns the hugetlb controller on in cgroup.subtree_control
// of every ancestor of c in the unified tree (root, kubepods, QoS, pod),
// as a node's operator (or systemd) does, and turns it off again, deepest
// first, in cleanup where this test turned it on.
func enableHugetlbV2(t *testing.T, hier string, c *cgrouptest.Container) {
	t.Helper()
	dir := filepath.Join(cgrouptest.Base, hier)
	parts := strings.Split(strings.Trim(c.Rel, "/"), "/")
	var enabled []string
	t.Cleanup(func() {
		for i := len(enabled) - 1; i >= 0; i-- {
			if err := os.WriteFile(filepath.Join(enabled[i], "cgroup.subtree_control"), []byte("-hugetlb"), 0o600); err != nil {
				t.Errorf("restore %s/cgroup.subtree_control: %v", enabled[i], err)
			}
		}
	})
	for _, part := range parts { // root, kubepods, QoS, pod: every ancestor of the container
		ctl := filepath.Join(dir, "cgroup.subtree_control")
		if !strings.Contains(" "+readTrim(t, ctl)+" ", " hugetlb ") {
			require.NoError(t, os.WriteFile(ctl, []byte("+hugetlb"), 0o600), "enable hugetlb in %s", ctl)
			enabled = append(enabled, dir)
		}
		dir = filepath.Join(dir, part)
	}
}

// reserveHugePages makes sure n default-size huge pages are free, raising
// vm.nr_hugepages as the node's operator would, and restores the old value
// in cleanup. It skips when the kernel cannot allocate them.
func reserveHugePages(t *testing.T, n uint64) {
	t.Helper()
	const ctl = "/proc/sys/vm/nr_hugepages"
	old := readTrim(t, ctl)
	free := meminfoKB(t, "HugePages_Free")
	if free >= n {
		return
	}
	total := meminfoKB(t, "HugePages_Total")
	t.Cleanup(func() {
		if err := os.WriteFile(ctl, []byte(old), 0o600); err != nil {
			t.Errorf("restore %s to %s: %v", ctl, old, err)
		}
	})
	require.NoError(t, os.WriteFile(ctl, []byte(strconv.FormatUint(total+n-free, 10)), 0o600))
	if got := meminfoKB(t, "HugePages_Free"); got < n {
		t.Skipf("the kernel could allocate only %d free huge pages of %d asked (memory fragmented)", got, n)
	}
}

// TestRealHugetlb: a child in a real kubepods-shaped cgroup maps N huge
// pages of the default size (MAP_HUGETLB) and touches each: the container's
// and the pod's hugetlb usage for that size equal N x the page size, as the
// kernel's file says; no limit point while unlimited; after the test (as the
// operator) sets a limit of 2N pages, the limit reads exactly that. The test
// enables the hugetlb controller where the unified tree needs it and
// reserves the huge pages (vm.nr_hugepages), restoring both.
func TestRealHugetlb(t *testing.T) {
	machine.Lock(t)
	const n = 4
	if _, err := os.Stat("/proc/sys/vm/nr_hugepages"); err != nil {
		t.Skipf("kernel without hugetlbfs (no /proc/sys/vm/nr_hugepages): %v", err)
	}
	hier, v1, ok := hugetlbHierarchy()
	if !ok {
		t.Skip("kernel lacks the hugetlb cgroup controller (no v1 hugetlb hierarchy, not in the unified tree's cgroup.controllers)")
	}
	pageSize := meminfoKB(t, "Hugepagesize") << 10
	sizes, err := cgroupfs.HugePageSizes("/")
	require.NoError(t, err)
	name := ""
	for _, s := range sizes {
		if s.Bytes == pageSize {
			name = s.Name
		}
	}
	require.NotEmpty(t, name, "the default huge page size %d is not among %v", pageSize, sizes)

	c := cgrouptest.NewContainer(t, "burstable")
	if !v1 {
		enableHugetlbV2(t, hier, c)
	}
	usageFile, limitFile := "hugetlb."+name+".current", "hugetlb."+name+".max"
	if v1 {
		usageFile, limitFile = "hugetlb."+name+".usage_in_bytes", "hugetlb."+name+".limit_in_bytes"
	}
	kernelUsage := func() uint64 {
		v, err := strconv.ParseUint(readTrim(t, filepath.Join(c.Dir(hier), usageFile)), 10, 64)
		require.NoError(t, err)
		return v
	}
	require.Zero(t, kernelUsage())
	reserveHugePages(t, n)

	ch := c.Start(t, cgrouptest.ModeHugetlb, fmt.Sprintf("pages=%d", n), fmt.Sprintf("pagesize=%d", pageSize))
	require.Eventually(t, func() bool { return kernelUsage() == n*pageSize }, 20*time.Second, 20*time.Millisecond,
		"the child (pid %d) never charged %d huge pages to its cgroup (its stderr says why)", ch.Cmd.Process.Pid, n)

	mbc := defaultMBC()
	m := &mbc.Metrics
	m.ContainerMemoryHugetlbUsage.Enabled, m.ContainerMemoryHugetlbLimit.Enabled = true, true
	m.K8sPodMemoryHugetlbUsage.Enabled, m.K8sPodMemoryHugetlbLimit.Enabled = true, true
	s := realScraper(t, mbc, &fakeClock{now: time.Now()})
	metrics := mustScrape(t, s, c)
	p := points(metrics, "container.id", c.ID)
	key := "container.memory.hugetlb.usage/" + name
	assert.Equal(t, float64(n*pageSize), p[key], "%d pages of %s", n, name)
	assert.Equal(t, float64(kernelUsage()), p[key], "= the kernel's %s", usageFile)
	assert.NotContains(t, p, "container.memory.hugetlb.limit/"+name, "unlimited: no limit point")
	pod := points(metrics, "k8s.pod.uid", c.PodUID)
	assert.Equal(t, float64(n*pageSize), pod["k8s.pod.memory.hugetlb.usage/"+name], "the pod holds only this container")
	t.Logf("%s: container %.0f B, pod %.0f B (%d pages of %d B)", name, p[key], pod["k8s.pod.memory.hugetlb.usage/"+name], n, pageSize)

	c.Write(t, hier, limitFile, strconv.FormatUint(2*n*pageSize, 10))
	p = scrapeContainer(t, s, c)
	assert.Equal(t, float64(2*n*pageSize), p["container.memory.hugetlb.limit/"+name])
}

// fdCount lists /proc/<pid>/fd as the test sees it.
func fdCount(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	require.NoError(t, err)
	return len(ents)
}

// fdTargets lists what process pid's descriptors point to, for messages.
func fdTargets(pid int) []string {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, _ := os.ReadDir(dir)
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		l, _ := os.Readlink(filepath.Join(dir, e.Name()))
		out = append(out, e.Name()+"->"+l)
	}
	return out
}

// TestRealFileDescriptors: a child in a real kubepods-shaped cgroup:
// container.file_descriptor.count equals the entries of its
// /proc/<pid>/fd read by the test just before and just after the scrape
// (which agree); after the child opens K more, the count grows by exactly K.
func TestRealFileDescriptors(t *testing.T) {
	machine.Lock(t)
	const k = 7
	c := cgrouptest.NewContainer(t, "burstable")
	ready := filepath.Join(t.TempDir(), "fds")
	ch := c.Start(t, cgrouptest.ModeFDs, fmt.Sprintf("fds=%d", k), "file="+ready)
	pid := ch.Cmd.Process.Pid
	// A race-enabled child takes a while to start: count only once it
	// waits for the poke.
	require.Eventually(t, func() bool { _, err := os.Stat(ready + ".ready"); return err == nil }, 30*time.Second, 10*time.Millisecond,
		"the child never got ready")
	// The Go child settles (its runtime's descriptors) before the count.
	var stable int
	require.Eventually(t, func() bool {
		a := fdCount(t, pid)
		time.Sleep(50 * time.Millisecond)
		stable = fdCount(t, pid)
		return a == stable
	}, 10*time.Second, 10*time.Millisecond)

	mbc := defaultMBC()
	mbc.Metrics.ContainerFileDescriptorCount.Enabled = true
	s := realScraper(t, mbc, &fakeClock{now: time.Now()})
	scrape := func() float64 {
		before := fdCount(t, pid)
		p := scrapeContainer(t, s, c)
		after := fdCount(t, pid)
		require.Equal(t, before, after, "the child's descriptors changed during the scrape")
		require.Contains(t, p, "container.file_descriptor.count")
		assert.Equal(t, float64(before), p["container.file_descriptor.count"], "= the entries of /proc/%d/fd", pid)
		return p["container.file_descriptor.count"]
	}
	n0 := scrape()
	at0 := fdTargets(pid)
	ch.Poke(t)
	last := at0
	for deadline := time.Now().Add(10 * time.Second); len(last) != int(n0)+k; time.Sleep(10 * time.Millisecond) {
		require.False(t, time.Now().After(deadline),
			"the child never had exactly %d more descriptors: %v at the first scrape, %v at the end", k, at0, last)
		last = fdTargets(pid)
	}
	n1 := scrape()
	assert.Equal(t, float64(k), n1-n0, "grows by exactly K")
	t.Logf("file descriptors: %.0f -> %.0f (K=%d)", n0, n1, k)
}

// standaloneNet gives a real standalone container cgroup
// (/containerstats-test/<id>, no pod) its own network namespace, as
// netPod does for a pod: a namespace made by the test, a veth pair (eth0
// inside, 10.251.X.2/30; the host end 10.251.X.1/30), IPv6 off on both
// ends, and a process in that namespace moved into the container's cgroup
// in every hierarchy. Everything is removed in cleanup.
func standaloneNet(t *testing.T) (c *cgrouptest.Container, ns, hostIP string) {
	t.Helper()
	needNetTools(t)
	c = cgrouptest.NewStandaloneContainer(t)
	ns, hostIP = netnsProcess(t, c, 251)
	return c, ns, hostIP
}

// TestRealContainerNetwork: a standalone container (no pod) whose process
// lives in a network namespace the test made pings the host end of its
// veth pair 10 times with 1000-byte payloads: its container.network.io on
// eth0 grows, in each direction, by at least 10 x (1000 + 8 ICMP + 20 IP)
// bytes and at most 10 x (that + 14 Ethernet) + 1024 bytes of overhead
// (ARP); packets by 10 to 12; lo is never reported. A second standalone
// container whose process shares the host's namespace has no container
// network points.
func TestRealContainerNetwork(t *testing.T) {
	machine.Lock(t)
	const n, size = 10, 1000
	c, ns, hostIP := standaloneNet(t)
	hostNet := cgrouptest.NewStandaloneContainer(t)
	hostNet.Start(t, cgrouptest.ModeSleep)

	s := New(newSettings(), Options{
		Host: testHost("/"), NodeName: "real", MetricsBuilderConfig: defaultMBC(),
		Now: (&fakeClock{now: time.Now()}).Now, StandaloneContainers: true,
	})
	require.NoError(t, s.Start(context.Background(), nil))
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	scrape := func() map[string]float64 {
		m, err := s.Scrape(context.Background())
		machine.RequireNoOwnErrors(t, err, c.ID, hostNet.ID)
		p := points(m, "container.id", c.ID)
		require.NotEmpty(t, p, "the standalone container was not scraped")
		assert.NotContains(t, p, "container.network.io/lo/receive", "lo is left out")
		h := points(m, "container.id", hostNet.ID)
		require.NotEmpty(t, h, "the host-network standalone container was not scraped")
		assert.Empty(t, onlyNetwork(h), "a container in the host's namespace has no container network points")
		return p
	}
	before := scrape()
	require.Contains(t, before, "container.network.io/eth0/receive", "the container's eth0 was not reported: %v", before)

	run(t, "ip", "netns", "exec", ns, "busybox", "ping", "-c", strconv.Itoa(n), "-i", "0.05", "-s", strconv.Itoa(size), hostIP)
	after := scrape()
	lo, hi := float64(n*(size+28)), float64(n*(size+28+14)+1024)
	for _, dir := range []string{"receive", "transmit"} {
		d := after["container.network.io/eth0/"+dir] - before["container.network.io/eth0/"+dir]
		assert.True(t, d >= lo && d <= hi, "%s bytes grew by %.0f, want [%.0f, %.0f]", dir, d, lo, hi)
		pk := after["container.network.packet.count/eth0/"+dir] - before["container.network.packet.count/eth0/"+dir]
		assert.True(t, pk >= n && pk <= n+2, "%s packets grew by %.0f, want [%d, %d]", dir, pk, n, n+2)
		assert.Equal(t, 0.0, after["container.network.errors/eth0/"+dir])
		t.Logf("%s: +%.0f bytes, +%.0f packets", dir, d, pk)
	}
}

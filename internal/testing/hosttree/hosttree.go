// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package hosttree generates synthetic host trees (sys/fs/cgroup and proc)
// for benchmarks and churn tests: cgroup v1 or v2, systemd or cgroupfs
// driver, N containers in pods across QoS classes, T threads per container
// with /proc/<tid>/stat files. File contents copy the shape of real kernels'
// files (every memory.stat and cpu.stat key a 6.x kernel prints).
package hosttree // import "github.com/containerstats/containerstatsreceiver/internal/testing/hosttree"

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Spec describes a tree to generate.
type Spec struct {
	V2                  bool // unified hierarchy (else v1 controllers, cpu,cpuacct combined)
	Systemd             bool // systemd driver naming (else cgroupfs)
	Containers          int  // workload containers, two per pod
	ThreadsPerContainer int  // threads listed per container, each with a /proc/<tid>/stat
	PSI                 bool // write cpu/memory/io.pressure files
	FDsPerProcess       int  // entries of /proc/<tid>/fd per listed thread (0: no fd directories)
}

// Name is a short label for tables: "v2-systemd".
func (s Spec) Name() string {
	v, d := "v1", "cgroupfs"
	if s.V2 {
		v = "v2"
	}
	if s.Systemd {
		d = "systemd"
	}
	return v + "-" + d
}

// Container is one generated container.
type Container struct {
	ID, PodUID, QoS, Rel string
	PodRel               string
}

// Tree is a generated host tree.
type Tree struct {
	Root       string
	Spec       Spec
	Containers []Container
	nextTID    int
	gen        int
}

var qosClasses = []string{"guaranteed", "burstable", "besteffort"}

// Generate writes a host tree under root.
func Generate(root string, spec Spec) (*Tree, error) {
	t := &Tree{Root: root, Spec: spec, nextTID: 1000}
	if err := t.base(); err != nil {
		return nil, err
	}
	for i := 0; i < spec.Containers; i += 2 {
		if err := t.AddPod(min(2, spec.Containers-i)); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func (t *Tree) cgroupDirs(rel string) []string {
	base := filepath.Join(t.Root, "sys/fs/cgroup")
	if t.Spec.V2 {
		return []string{filepath.Join(base, rel)}
	}
	return []string{filepath.Join(base, "cpu,cpuacct", rel), filepath.Join(base, "memory", rel), filepath.Join(base, "pids", rel), filepath.Join(base, "blkio", rel)}
}

func (t *Tree) base() error {
	base := filepath.Join(t.Root, "sys/fs/cgroup")
	if t.Spec.V2 {
		if err := write(base, "cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n"); err != nil {
			return err
		}
	} else {
		for _, d := range []string{"cpu,cpuacct", "memory", "pids", "blkio"} {
			if err := write(filepath.Join(base, d), "cgroup.procs", ""); err != nil {
				return err
			}
		}
		for _, l := range []string{"cpu", "cpuacct"} {
			if err := os.Symlink("cpu,cpuacct", filepath.Join(base, l)); err != nil {
				return err
			}
		}
	}
	if err := write(filepath.Join(t.Root, "proc", "1", "net"), "dev", netDev(1)); err != nil {
		return err
	}
	if err := write(filepath.Join(t.Root, "proc"), "diskstats", "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n 254       0 vda 25914 10521 2183362 14352 98764 91231 5391576 107616 0 171432 131736 0 0 0 0 3645 9767\n 254       1 vda1 25800 10500 2180000 14300 98700 91200 5390000 107600 0 171400 131700 0 0 0 0 0 0\n"); err != nil {
		return err
	}
	for dev, ue := range map[string]string{"7:0": "loop0\nDEVTYPE=disk", "254:0": "vda\nDEVTYPE=disk", "254:1": "vda1\nDEVTYPE=partition"} {
		if err := write(filepath.Join(t.Root, "sys", "dev", "block", dev), "uevent", "DEVNAME="+ue+"\n"); err != nil {
			return err
		}
	}
	if err := write(filepath.Join(t.Root, "proc"), "stat", "cpu  1 2 3 4 5 6 7 0 0 0\nbtime 1700000000\n"); err != nil {
		return err
	}
	if err := write(filepath.Join(t.Root, "proc"), "meminfo", "MemTotal: 16374584 kB\nMemFree: 9505980 kB\nActive(anon): 2568 kB\nInactive(anon): 791340 kB\nActive(file): 869852 kB\nInactive(file): 4608000 kB\n"); err != nil {
		return err
	}
	if err := t.cgroup("/", nil); err != nil {
		return err
	}
	kp := "/kubepods"
	if t.Spec.Systemd {
		kp = "/kubepods.slice"
	}
	if err := t.cgroup(kp, nil); err != nil {
		return err
	}
	for _, q := range qosClasses[1:] {
		if err := t.cgroup(t.qosRel(q), nil); err != nil {
			return err
		}
	}
	return nil
}

func (t *Tree) qosRel(q string) string {
	switch {
	case q == "guaranteed" && t.Spec.Systemd:
		return "/kubepods.slice"
	case q == "guaranteed":
		return "/kubepods"
	case t.Spec.Systemd:
		return "/kubepods.slice/kubepods-" + q + ".slice"
	default:
		return "/kubepods/" + q
	}
}

// AddPod adds a pod with n containers (QoS classes rotate).
func (t *Tree) AddPod(n int) error {
	t.gen++
	q := qosClasses[t.gen%3]
	uid := fmt.Sprintf("%08x-0000-4000-8000-%012x", t.gen, t.gen)
	var podRel string
	switch {
	case t.Spec.Systemd && q == "guaranteed":
		podRel = t.qosRel(q) + "/kubepods-pod" + strings.ReplaceAll(uid, "-", "_") + ".slice"
	case t.Spec.Systemd:
		podRel = t.qosRel(q) + "/kubepods-" + q + "-pod" + strings.ReplaceAll(uid, "-", "_") + ".slice"
	default:
		podRel = t.qosRel(q) + "/pod" + uid
	}
	if err := t.cgroup(podRel, nil); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		t.gen++
		id := fmt.Sprintf("%064x", t.gen)
		name := id
		if t.Spec.Systemd {
			name = "cri-containerd-" + id + ".scope"
		}
		rel := podRel + "/" + name
		tids := make([]int, t.Spec.ThreadsPerContainer)
		for j := range tids {
			tids[j] = t.nextTID
			t.nextTID++
		}
		if err := t.cgroup(rel, tids); err != nil {
			return err
		}
		t.Containers = append(t.Containers, Container{ID: id, PodUID: uid, QoS: q, Rel: rel, PodRel: podRel})
	}
	return nil
}

// RemoveContainer deletes container i's cgroup directories, and its pod's
// once the pod has no container left (as the kubelet does).
func (t *Tree) RemoveContainer(i int) error {
	c := t.Containers[i]
	t.Containers = append(t.Containers[:i], t.Containers[i+1:]...)
	rel := c.PodRel
	if t.podInUse(c.PodRel) {
		rel = c.Rel
	}
	for _, d := range t.cgroupDirs(rel) {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	return nil
}

func (t *Tree) podInUse(podRel string) bool {
	for _, o := range t.Containers {
		if o.PodRel == podRel {
			return true
		}
	}
	return false
}

// cgroup writes one cgroup's files in every hierarchy; tids are its threads.
func (t *Tree) cgroup(rel string, tids []int) error {
	g := t.gen + len(rel)
	threads := joinInts(tids)
	for _, d := range t.cgroupDirs(rel) {
		files := map[string]string{"cgroup.procs": threads}
		switch {
		case t.Spec.V2:
			files["cgroup.threads"] = threads
			files["cpu.stat"] = fmt.Sprintf("usage_usec %d\nuser_usec %d\nsystem_usec %d\ncore_sched.force_idle_usec 0\nnr_periods %d\nnr_throttled %d\nthrottled_usec %d\nnr_bursts 0\nburst_usec 0\n", g*1000, g*700, g*300, g, g/2, g*10)
			files["cpu.max"] = "max 100000\n"
			files["cpu.weight"] = "100\n"
			files["memory.stat"] = memoryStatV2(g)
			files["memory.events"] = fmt.Sprintf("low 0\nhigh 0\nmax %d\noom %d\noom_kill %d\noom_group_kill 0\n", g%7, g%5, g%3)
			files["pids.current"] = fmt.Sprintf("%d\n", len(tids))
			files["io.stat"] = fmt.Sprintf("254:0 rbytes=%d wbytes=%d rios=%d wios=%d dbytes=0 dios=0\n", g*4096, g*8192, g, g*2)
			if rel != "/" {
				files["pids.max"] = "max\n"
				files["memory.current"] = fmt.Sprintf("%d\n", g*4096*300)
				files["memory.max"] = "max\n"
				files["memory.swap.current"] = "0\n"
			}
		case strings.Contains(d, "cpu,cpuacct"):
			files["tasks"] = threads
			files["cpuacct.usage"] = fmt.Sprintf("%d\n", g*1_000_000)
			files["cpuacct.usage_user"] = fmt.Sprintf("%d\n", g*700_000)
			files["cpuacct.usage_sys"] = fmt.Sprintf("%d\n", g*300_000)
			files["cpuacct.stat"] = fmt.Sprintf("user %d\nsystem %d\n", g*70, g*30)
			files["cpu.stat"] = fmt.Sprintf("nr_periods %d\nnr_throttled %d\nthrottled_time %d\n", g, g/2, g*10_000)
			files["cpu.cfs_quota_us"] = "-1\n"
			files["cpu.cfs_period_us"] = "100000\n"
			files["cpu.shares"] = "1024\n"
		case strings.Contains(d, "/memory"):
			files["tasks"] = threads
			files["memory.usage_in_bytes"] = fmt.Sprintf("%d\n", g*4096*300)
			files["memory.limit_in_bytes"] = "9223372036854771712\n"
			files["memory.memsw.usage_in_bytes"] = fmt.Sprintf("%d\n", g*4096*300)
			files["memory.oom_control"] = fmt.Sprintf("oom_kill_disable 0\nunder_oom 0\noom_kill %d\n", g%3)
			files["memory.stat"] = memoryStatV1(g)
		case strings.Contains(d, "/sys/fs/cgroup/blkio"):
			// Accounted (a throttle rule on vda): one device line each.
			files["tasks"] = threads
			files["blkio.throttle.io_service_bytes_recursive"] = fmt.Sprintf("254:0 Read %d\n254:0 Write %d\n254:0 Sync %d\n254:0 Async 0\n254:0 Discard 0\n254:0 Total %d\nTotal %d\n", g*4096, g*8192, g*12288, g*12288, g*12288)
			files["blkio.throttle.io_serviced_recursive"] = fmt.Sprintf("254:0 Read %d\n254:0 Write %d\n254:0 Sync %d\n254:0 Async 0\n254:0 Discard 0\n254:0 Total %d\nTotal %d\n", g, g*2, g*3, g*3, g*3)
		default:
			files["tasks"] = threads
			files["pids.current"] = fmt.Sprintf("%d\n", len(tids))
			if rel != "/" {
				files["pids.max"] = "max\n"
			}
		}
		if t.Spec.PSI && (t.Spec.V2 || strings.Contains(d, "cpu,cpuacct")) {
			for _, r := range []string{"cpu", "memory", "io"} {
				files[r+".pressure"] = fmt.Sprintf("some avg10=0.%02d avg60=0.%02d avg300=0.%02d total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=%d\n", g%100, g%97, g%89, g*13, g*5)
			}
		}
		for name, content := range files {
			if err := write(d, name, content); err != nil {
				return err
			}
		}
	}
	for i, tid := range tids {
		state := "S"
		if i%4 == 0 {
			state = "R"
		}
		stat := fmt.Sprintf("%d (worker-%d) %s 1 %d %d 0 -1 4194560 %d 0 0 0 %d %d 0 0 20 0 %d 0 %d 8 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
			tid, i, state, tid, tid, g, g, g, len(tids), g)
		if err := write(filepath.Join(t.Root, "proc", fmt.Sprint(tid)), "stat", stat); err != nil {
			return err
		}
		for k := 0; k < t.Spec.FDsPerProcess; k++ {
			if err := write(filepath.Join(t.Root, "proc", fmt.Sprint(tid), "fd"), strconv.Itoa(k), ""); err != nil {
				return err
			}
		}
		if i == 0 { // a pod's network is read from one of its processes
			if err := write(filepath.Join(t.Root, "proc", fmt.Sprint(tid), "net"), "dev", netDev(g)); err != nil {
				return err
			}
		}
	}
	return nil
}

func memoryStatV2(g int) string {
	keys := []string{"anon", "file", "kernel", "kernel_stack", "pagetables", "sec_pagetables", "percpu", "sock", "vmalloc", "shmem", "zswap", "zswapped", "file_mapped", "file_dirty", "file_writeback", "swapcached", "anon_thp", "file_thp", "shmem_thp", "inactive_anon", "active_anon", "inactive_file", "active_file", "unevictable", "slab_reclaimable", "slab_unreclaimable", "slab", "workingset_refault_anon", "workingset_refault_file", "workingset_activate_anon", "workingset_activate_file", "workingset_restore_anon", "workingset_restore_file", "workingset_nodereclaim", "pgscan", "pgsteal", "pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct", "pgfault", "pgmajfault", "pgrefill", "pgactivate", "pgdeactivate", "pglazyfree", "pglazyfreed", "zswpin", "zswpout", "thp_fault_alloc", "thp_collapse_alloc"}
	var b strings.Builder
	for i, k := range keys {
		fmt.Fprintf(&b, "%s %d\n", k, (g+i)*4096)
	}
	return b.String()
}

func memoryStatV1(g int) string {
	keys := []string{"cache", "rss", "rss_huge", "shmem", "mapped_file", "dirty", "writeback", "swap", "pgpgin", "pgpgout", "pgfault", "pgmajfault", "inactive_anon", "active_anon", "inactive_file", "active_file", "unevictable", "hierarchical_memory_limit", "hierarchical_memsw_limit"}
	var b strings.Builder
	for i, k := range keys {
		fmt.Fprintf(&b, "%s %d\n", k, (g+i)*4096)
	}
	for i, k := range keys[:len(keys)-2] {
		fmt.Fprintf(&b, "total_%s %d\n", k, (g+i)*4096)
	}
	return b.String()
}

func joinInts(xs []int) string {
	var b strings.Builder
	for _, x := range xs {
		fmt.Fprintf(&b, "%d\n", x)
	}
	return b.String()
}

func write(dir, name, content string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600)
}

// netDev is a /proc/<pid>/net/dev with loopback and one pod interface.
func netDev(g int) string {
	return "Inter-|   Receive                                                |  Transmit\n" +
		" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n" +
		fmt.Sprintf("    lo: %d %d 0 0 0 0 0 0 %d %d 0 0 0 0 0 0\n", g*10, g, g*10, g) +
		fmt.Sprintf("  eth0: %d %d 0 0 0 0 0 0 %d %d 0 0 0 0 0 0\n", g*1500, g*3, g*900, g*2)
}

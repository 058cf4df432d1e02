// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux && v2guest

package v2node

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/containerstats/containerstatsreceiver/internal/testing/containerdtest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/criotest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
	"github.com/containerstats/containerstatsreceiver/internal/testing/sidebyside"
)

// staticPod is a static pod with one container running the workload
// binary of the test image (pulled never: it is imported), on the host's
// network unless its name is netPod.
func staticPod(name, qosResources string, command ...string) string {
	var cmd []string
	for _, c := range command {
		cmd = append(cmd, strconv.Quote(c))
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: fieldnote}
spec:
  hostNetwork: %t
  containers:
  - name: %s
    image: %s
    imagePullPolicy: Never
    command: [%s]
%s`, name, name != netPod, name, containerdtest.Image, strings.Join(cmd, ", "), qosResources)
}

// The static pods of TestFieldNote2, by name (each pod's container is
// named as its pod): mixed holds anonymous and page-cache memory, burner
// burns one thread under a CPU limit (a CFS quota) with a huge page limit,
// cache holds page cache in its writable layer, net sleeps on the pods'
// bridge (netPod: the only one with a network namespace of its own),
// pressure writes and reads back 128 MiB under a 16 MiB memory limit (the
// kernel reclaims its page cache and it waits for the disk: memory and io
// pressure, for CRIStatsGate's PSI rows), then sleeps.
const netPod = "net"

var fieldnotePods = []string{"mixed", "burner", "cache", netPod, "pressure"}

// The guest's second pod network (TestV2's is bridge/subnet).
const bridge2, subnet2, gateway2 = "cstest2", "10.88.220.0/24", "10.88.220.1"

// TestFieldNote2 puts a standalone kubelet (make kube-bins: v1.37.2) on the
// v2 node, running static pods through containerd's CRI on the systemd
// driver, next to our scraper, and compares, at the kubelet's own sample
// times: node working set (ours: anon + file - inactive_file of the root's
// memory.stat; the kubelet's node_memory_working_set_bytes; and the
// MemTotal - MemFree - Inactive(file) figure runc's old fallback gave),
// pod and container working sets and container CPU time against
// /metrics/resource. The compared containers hold tens of MiB of
// anonymous and page-cache memory, so a wrong mapping (usage for working
// set, anon alone) is off by tens of MiB, far outside the tolerances. The
// table goes to fieldnote2.md (docs/memory.md quotes it). Then the
// kubelet restarts with PodAndContainerStatsFromCRI on, for the same
// pods (CRIStatsGate).
func TestFieldNote2(t *testing.T) {
	fieldNote2(t, func(t *testing.T) fieldRuntime {
		ctrd := containerdtest.StartWith(t, containerdtest.Options{
			BinDir: containerdtest.DefaultBinDir(), Systemd: true,
			ImageFiles: map[string]string{"bin/workload": os.Getenv("WORKLOAD_BIN")},
			Bridge:     bridge2, Subnet: subnet2, Gateway: gateway2,
		})
		// The kubelet's cAdvisor finds containerd where a node has it, to
		// name the containers' cgroups (the guest has no other).
		return fieldRuntime{name: "containerd", socket: ctrd.Socket, cri: ctrd.CRI(), stdSocket: "/run/containerd/containerd.sock"}
	})
}

// TestFieldNote2CRIO is TestFieldNote2 on CRI-O 1.34 (make crio-bins,
// shared with the guest) with its systemd cgroup manager, OpenShift's
// shape: containers in crio-<id>.scope units under the pods' slices,
// conmon in the pod's slice (conmon_cgroup "pod"), no infra container
// (drop_infra_ctr). Its tables go to crio-fieldnote2.md and
// crio-cristats.md; the gate table asserts which endpoint gives each row
// on CRI-O (hasCRIO).
func TestFieldNote2CRIO(t *testing.T) {
	fieldNote2(t, func(t *testing.T) fieldRuntime {
		c := criotest.Start(t, criotest.Options{
			BinDir: os.Getenv(criotest.BinDirEnv), RuncDir: containerdtest.DefaultBinDir(), Systemd: true, DropInfra: true,
			ImageFiles: map[string]string{"bin/workload": os.Getenv("WORKLOAD_BIN")},
			Bridge:     bridge2, Subnet: subnet2, Gateway: gateway2,
		})
		// cAdvisor's CRI-O handler asks CRI-O's HTTP API on its socket.
		return fieldRuntime{name: "cri-o", prefix: "crio-", socket: c.Socket, cri: c.CRI(), stdSocket: "/var/run/crio/crio.sock"}
	})
}

// fieldRuntime is the CRI runtime under a field note 2 run's kubelet.
type fieldRuntime struct {
	name   string // "containerd", "cri-o"
	prefix string // of the run's result files ("" for containerd's)
	socket string
	cri    runtimeapi.RuntimeServiceClient
	// stdSocket is where a node has the runtime's socket: the kubelet's
	// cAdvisor looks there (a link to socket for the run).
	stdSocket string
}

func fieldNote2(t *testing.T, start func(t *testing.T) fieldRuntime) {
	bin := os.Getenv("KUBELET_BIN")
	if _, err := os.Stat(bin); err != nil { //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
		machine.Need(t, "no kubelet in the guest (make kube-bins, KUBE_BIN_DIR): "+err.Error())
	}
	// Huge pages for the burner's limit: the kubelet admits a pod asking
	// for them only when the node has them.
	require.NoError(t, os.WriteFile("/proc/sys/vm/nr_hugepages", []byte("16"), 0o600))
	rt := start(t)
	dir := t.TempDir()
	manifests := filepath.Join(dir, "manifests")
	require.NoError(t, os.Mkdir(manifests, 0o755))
	const burstable = `    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {memory: 512Mi}
`
	for name, pod := range map[string]string{
		"mixed": staticPod("mixed", burstable, "/bin/workload", "mix", "anon=48", "active=32", "inactive=32", "cpu=8000", "file=/tmp/mix"),
		"burner": staticPod("burner", `    resources:
      requests: {cpu: 100m, memory: 64Mi, hugepages-2Mi: 4Mi}
      limits: {cpu: 500m, memory: 512Mi, hugepages-2Mi: 4Mi}
`, "/bin/workload", "burn", "threads=1", "mib=24"),
		"cache": staticPod("cache", "", "/bin/workload", "mix", "anon=0", "active=40", "inactive=0", "cpu=3000", "file=/tmp/cache"),
		netPod:  staticPod(netPod, burstable, "/bin/sleep", "3600"),
		"pressure": staticPod("pressure", `    resources:
      requests: {cpu: 100m, memory: 16Mi}
      limits: {memory: 16Mi}
`, "/bin/workload", "cache", "mib=128", "file=/tmp/pressure"),
	} {
		require.NoError(t, os.WriteFile(filepath.Join(manifests, name+".yaml"), []byte(pod), 0o600))
	}
	if out, err := exec.Command("ip", "addr", "add", kubeletNodeIP+"/32", "dev", "lo").CombinedOutput(); err != nil {
		t.Fatalf("ip addr add: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "addr", "del", kubeletNodeIP+"/32", "dev", "lo").Run() })
	require.NoError(t, os.MkdirAll(filepath.Dir(rt.stdSocket), 0o755))
	require.NoError(t, os.Symlink(rt.socket, rt.stdSocket))
	t.Cleanup(func() { _ = os.Remove(rt.stdSocket) })
	kl := startKubelet(t, bin, dir, "gate-off", fmt.Sprintf(kubeletConfig, rt.socket, manifests))

	// The kubelet has sampled every container of the pods.
	waitKubelet(t, kl, nil)
	t.Logf("kubelet: static pods reported %s after start", time.Since(kl.started).Round(time.Second))

	ids := newIdentity(t, rt.socket)
	s := newScraperFS(t, ids, rt.socket)
	// The containers as CRI runs them now, once their workloads are
	// ready (the kubelet may replace a container while it settles a pod).
	running := func() map[string][2]string {
		cs, err := rt.cri.ListContainers(t.Context(), &runtimeapi.ListContainersRequest{
			Filter: &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}},
		})
		require.NoError(t, err)
		out := map[string][2]string{}
		for _, c := range cs.GetContainers() {
			if c.GetLabels()["io.kubernetes.pod.namespace"] == "fieldnote" {
				out[c.GetMetadata().GetName()] = [2]string{c.GetId(), c.GetLabels()["io.kubernetes.pod.uid"]}
			}
		}
		return out
	}
	readyFile := map[string]string{"mixed": "/tmp/mix.ready", "cache": "/tmp/cache.ready", "burner": "/", netPod: "/", "pressure": "/tmp/pressure.ready"}
	var ctrs map[string][2]string
	allReady := func() bool {
		ctrs = running()
		for c, file := range readyFile {
			b, _ := os.ReadFile(filepath.Join(cgroupOf(ctrs[c][0]), "cgroup.procs"))
			f := strings.Fields(string(b))
			if ctrs[c][0] == "" || len(f) == 0 {
				return false
			}
			if _, err := os.Stat(fmt.Sprintf("/proc/%s/root%s", f[0], file)); err != nil { //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(3 * time.Minute); !allReady(); time.Sleep(500 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the workloads never got ready; CRI runs %v", ctrs)
	}
	logPodCgroups(t, rt.name, ctrs)
	ids.Refresh(t.Context())
	for c, id := range ctrs {
		require.NotNil(t, resource(scrapeOwn(t, s), "container.id", id[0]), "our scraper does not see %s", c)
	}
	// Traffic for the net pod's counters: 10 pings of 1000 bytes from the
	// node, ended before any comparison.
	pingPod(t, rt.cri, netPod)

	// Our scrapes every 2 s until the kubelet has published two samples
	// taken after the workloads were ready, bracketed by our scrapes.
	var ours samples
	scrapeNow := func() {
		mi := keyed(t, "/proc/meminfo")
		t0 := time.Now()
		m := scrapeOwn(t, s)
		t1 := time.Now()
		sm := ourSample(m, ctrs, t0.Add(t1.Sub(t0)/2))
		sm.from, sm.to = t0, t1
		sm.values["node.meminfo"] = float64((mi["MemTotal"] - mi["MemFree"] - mi["Inactive(file)"]) << 10)
		ours = append(ours, sm)
	}
	// Every kubelet sample compared below, by metric and labels.
	type want struct {
		metric string
		labels map[string]string
	}
	wants := []want{{"node_memory_working_set_bytes", nil}}
	for c := range ctrs {
		wants = append(wants, want{"container_memory_working_set_bytes", ctrLabels(c)}, want{"container_cpu_usage_seconds_total", ctrLabels(c)},
			want{"pod_memory_working_set_bytes", podLabels(c)}, want{"pod_cpu_usage_seconds_total", podLabels(c)})
	}
	var final, prev string
	var missing []string
	loopStart := time.Now()
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		t0 := time.Now()
		scrapeNow()
		if len(ours) <= 3 {
			t.Logf("our scrape %d took %s", len(ours), time.Since(t0).Round(time.Millisecond))
		}
		// The kubelet's samples fetched last time are compared once a
		// scrape of ours follows them: the CRI stats provider samples
		// containers when asked, cAdvisor's cache serves pods and the node.
		if prev != "" {
			missing = missing[:0]
			for _, w := range wants {
				_, at, ok := expoSample(prev, w.metric, w.labels)
				if !ok || !ours.bracket(at, at) {
					missing = append(missing, fmt.Sprintf("%s%v at %s", w.metric, w.labels, at.Format(time.StampMilli)))
				}
			}
			if len(missing) == 0 {
				final = prev
				break
			}
		}
		if b, err := httpGet(kubeletRO + "/metrics/resource"); err == nil {
			prev = b
			writeResult(t, rt.prefix+"metrics-resource.txt", []byte(b))
		}
	}
	t.Logf("the kubelet's samples bracketed after %s, %d scrapes of ours", time.Since(loopStart).Round(time.Second), len(ours))
	require.NotEmpty(t, final, "in 3 min our scrapes (%s to %s) never bracketed all the kubelet's samples: not %s",
		ours[0].at.Format(time.StampMilli), ours[len(ours)-1].at.Format(time.StampMilli), strings.Join(missing, "; "))
	require.Equal(t, ctrs, running(), "the kubelet replaced a container during the comparison")

	const mib = float64(1 << 20)
	// One row per entity and quantity, each kubelet figure against ours
	// bounded by the scrapes around its read (readSlack before its stamp):
	// no interpolation. The workloads differ by more than 4× each row's
	// tolerance (sidebyside's Apart): working sets of ~88 (mixed), ~26
	// (burner) and ~40 MiB (cache); CPU times of minutes at half a core
	// (burner), 8 s (mixed) and 3 s (cache) burnt at start and then none.
	var rows []sidebyside.Row
	fig := func(quantity, entity, metric string, labels map[string]string, key, unit string, tol func(float64) float64) {
		v, at, ok := expoSample(final, metric, labels)
		require.True(t, ok, "kubelet: %s %s", entity, metric)
		lo, hi, ok := ours.bounds(key, at, at)
		require.True(t, ok, "ours around the kubelet's %s %s at %s", entity, metric, at.Format(time.StampMilli))
		rows = append(rows, boundedRow(quantity, entity, v, lo, hi, tol(v), unit))
	}
	fixed := func(b float64) func(float64) float64 { return func(float64) float64 { return b } }
	for _, c := range []string{"mixed", "burner", "cache"} {
		// Stable workloads; the CRI stats provider samples containers when
		// asked: 256 KiB, far below the tens of MiB a wrong mapping (usage,
		// anon) would be off by. A pod holds the sandbox's process too, and
		// comes from cAdvisor's cache: 1 MiB.
		fig("container working set", c, "container_memory_working_set_bytes", ctrLabels(c), "c:"+c+"|container.memory.working_set", "B", fixed(256<<10))
		fig("pod working set", c, "pod_memory_working_set_bytes", podLabels(c), "p:"+c+"|k8s.pod.memory.working_set", "B", fixed(1<<20))
		// Counters bounded by the scrapes around the kubelet's read: 20 ms
		// + 1 % for the kernel's and the runtimes' rounding (the pod's was
		// 100 ms + 1 % when ours were interpolated at the kubelet's stamp,
		// which cAdvisor writes after reading).
		fig("container CPU time", c, "container_cpu_usage_seconds_total", ctrLabels(c), "c:"+c+"|cpu", "s", cpuTol)
		fig("pod CPU time", c, "pod_cpu_usage_seconds_total", podLabels(c), "p:"+c+"|k8s.pod.cpu.time", "s", cpuTol)
	}
	// The node's working set moves with every process of the node (the
	// kubelet itself, our test): 2 % of it.
	kn, knAt, _ := expoSample(final, "node_memory_working_set_bytes", nil)
	lo, hi, ok := ours.bounds("n|k8s.node.memory.working_set", knAt, knAt)
	require.True(t, ok, "ours around the kubelet's node working set")
	rows = append(rows, boundedRow("node working set", "node", kn, lo, hi, 0.02*kn, "B"))
	res := sidebyside.Require(t, "field note 2 on "+rt.name+", the kubelet's /metrics/resource beside ours", rows, sidebyside.Options{Apart: 4, MinRows: 13})
	meminfo, _, _ := ours.bounds("node.meminfo", knAt, knAt)
	var table strings.Builder
	fmt.Fprintf(&table, "wrong mappings that would pass: %d of %d tried\n\n%s\n", res.Wrong, res.Compared, strings.Join(res.Table, "\n"))
	last := ours[len(ours)-1].values
	fmt.Fprintf(&table, "\nThe node, `MemTotal − MemFree − Inactive(file)`: %.2f MiB. The mixed container, ours at the last scrape: usage %.2f MiB, anon %.2f MiB, working set %.2f MiB.\n",
		meminfo/mib, last["c:mixed|container.memory.usage"]/mib, last["c:mixed|container.memory.rss"]/mib, last["c:mixed|container.memory.working_set"]/mib)
	writeResult(t, rt.prefix+"fieldnote2.md", []byte(table.String()))
	t.Logf("field note 2 on the real v2 node, %s:\n%s", rt.name, table.String())
	assert.Greater(t, meminfo-lo, 16*mib, "MemTotal - MemFree - Inactive(file) overstates the node's working set")

	t.Run("CRIStatsGate", func(t *testing.T) {
		g := gateRun{t: t, ctrs: ctrs, running: running, scrape: scrapeNow, ours: &ours, runtime: rt.name, prefix: rt.prefix}
		g.views = append(g.views, g.view("off"))
		t0 := time.Now()
		kl.stop()
		t.Logf("kubelet stopped in %s", time.Since(t0).Round(100*time.Millisecond))
		cfg := fmt.Sprintf(kubeletConfig, rt.socket, manifests) + "featureGates:\n  PodAndContainerStatsFromCRI: true\n"
		on := startKubelet(t, bin, dir, "gate-on", cfg)
		// Ours go on every 2 s meanwhile, for the history view needs.
		waitKubelet(t, on, scrapeNow)
		t.Logf("kubelet with PodAndContainerStatsFromCRI: static pods reported %s after start", time.Since(on.started).Round(time.Second))
		g.views = append(g.views, g.view("on"))
		g.compare()
	})
}

// waitKubelet waits until the kubelet's /metrics/resource reports every
// container of fieldnotePods, calling tick (when set) every 2 s meanwhile.
func waitKubelet(t *testing.T, kl *kubeletProc, tick func()) {
	t.Helper()
	require.Eventually(t, func() bool {
		if !kl.running() {
			return true // fails below, at once
		}
		if tick != nil {
			tick()
		}
		b, err := httpGet(kubeletRO + "/metrics/resource")
		if err != nil {
			return false
		}
		for _, c := range fieldnotePods {
			if _, _, ok := expoSample(b, "container_memory_working_set_bytes", ctrLabels(c)); !ok {
				return false
			}
		}
		return true
	}, 5*time.Minute, 2*time.Second, "the kubelet never reported the static pods' containers; log:\n%s", tail(kl.log.String(), 4000))
	if !kl.running() {
		t.Fatalf("the kubelet exited; log:\n%s", tail(kl.log.String(), 4000))
	}
}

// ourSample is one scrape's values: of each container of ctrs ("c:<name>|"
// and the value's key), its pod ("p:<name>|"), and the node ("n|"); and
// each container's and pod's CPU time summed over the modes ("|cpu").
func ourSample(m pmetric.Metrics, ctrs map[string][2]string, at time.Time) sample {
	sm := sample{at: at, values: map[string]float64{}}
	for k, v := range nodeValues(m) {
		sm.values["n|"+k] = v
	}
	for c, id := range ctrs {
		cv, pv := values(m, "container.id", id[0]), values(m, "k8s.pod.uid", id[1])
		for k, v := range cv {
			sm.values["c:"+c+"|"+k] = v
		}
		for k, v := range pv {
			sm.values["p:"+c+"|"+k] = v
		}
		if u, ok := cv["container.cpu.time/user"]; ok {
			sm.values["c:"+c+"|cpu"] = u + cv["container.cpu.time/system"]
		}
	}
	return sm
}

// pingPod sends 10 pings of 1000 bytes from the node to the pod's address.
func pingPod(t *testing.T, cri runtimeapi.RuntimeServiceClient, name string) {
	t.Helper()
	ps, err := cri.ListPodSandbox(t.Context(), &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{
		State:         &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY},
		LabelSelector: map[string]string{"io.kubernetes.pod.name": name + "-" + nodeName},
	}})
	require.NoError(t, err)
	require.Len(t, ps.GetItems(), 1, "pod %s", name)
	st, err := cri.PodSandboxStatus(t.Context(), &runtimeapi.PodSandboxStatusRequest{PodSandboxId: ps.GetItems()[0].GetId()})
	require.NoError(t, err)
	ip := st.GetStatus().GetNetwork().GetIp()
	require.NotEmpty(t, ip, "CNI gave pod %s an address", name)
	if out, err := exec.Command("busybox", "ping", "-c", "10", "-s", "1000", "-i", "0.2", "-W", "5", ip).CombinedOutput(); err != nil {
		t.Fatalf("ping %s: %v: %s", ip, err, out)
	}
}

// logPodCgroups logs the cgroups under kubepods.slice of the pods'
// containers (their IDs and the pods' UIDs replaced), with whether each
// has processes: the shapes the runtime made for the kubelet's pods.
func logPodCgroups(t *testing.T, runtime string, ctrs map[string][2]string) {
	t.Helper()
	var pairs []string
	for _, c := range ctrs {
		pairs = append(pairs, c[0], "<id>", strings.ReplaceAll(c[1], "-", "_"), "<uid>")
	}
	short := strings.NewReplacer(pairs...)
	seen := map[string]bool{}
	_ = filepath.WalkDir(filepath.Join(cgRoot, "kubepods.slice"), func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		procs, _ := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		n := "no process"
		if len(strings.Fields(string(procs))) > 0 {
			n = "processes"
		}
		seen[short.Replace(strings.TrimPrefix(p, cgRoot))+" ("+n+")"] = true
		return nil
	})
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	t.Logf("cgroups of the kubelet's pods on %s:\n\t%s", runtime, strings.Join(out, "\n\t"))
}

// cgroupOf finds a container's scope under kubepods.slice ("" if none):
// containerd's cri-containerd-<id>.scope or CRI-O's crio-<id>.scope.
func cgroupOf(id string) string {
	var found string
	_ = filepath.WalkDir(filepath.Join(cgRoot, "kubepods.slice"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && (d.Name() == "cri-containerd-"+id+".scope" || d.Name() == "crio-"+id+".scope") {
			found = p
		}
		return nil
	})
	return found
}

// cpuTol is a CPU time's (or a PSI total's) tolerance at the kubelet's
// figure v, ours bounded by the scrapes around its read: 20 ms + 1 %.
func cpuTol(v float64) float64 { return 0.02 + 0.01*v }

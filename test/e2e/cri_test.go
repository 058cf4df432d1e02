// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/containerstats/containerstatsreceiver/internal/testing/containerdtest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/leftovers"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
	"github.com/containerstats/containerstatsreceiver/internal/testing/podtemplate"
)

// criWorkload is a workload container created through CRI, with what CRI
// says about it.
type criWorkload struct {
	name           string // key in the test
	pod            *containerdtest.Pod
	cname          string
	id             string
	restarts       int
	cpuDir, memDir string // its cgroup in the cpu and memory hierarchies
}

// createContainer creates and starts a container in pod through CRI, as
// the kubelet does for restart attempt attempt.
func createContainer(t *testing.T, ctrd *containerdtest.Containerd, p *containerdtest.Pod, name string, attempt uint32, cmd []string, res *runtimeapi.LinuxContainerResources) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	labels := map[string]string{
		"io.kubernetes.container.name": name, "io.kubernetes.pod.name": p.Name,
		"io.kubernetes.pod.namespace": p.Namespace, "io.kubernetes.pod.uid": p.UID,
	}
	cfg := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt},
		Image:    &runtimeapi.ImageSpec{Image: containerdtest.Image},
		Command:  cmd,
		Labels:   labels,
		Linux:    &runtimeapi.LinuxContainerConfig{Resources: res},
	}
	// containerd 1.6 takes the container's cgroup parent from the request's
	// sandbox config: send the pod's, as the kubelet does.
	sb := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: p.Name, Namespace: p.Namespace, Uid: p.UID},
		Labels:   map[string]string{"io.kubernetes.pod.name": p.Name, "io.kubernetes.pod.namespace": p.Namespace, "io.kubernetes.pod.uid": p.UID},
		Linux: &runtimeapi.LinuxPodSandboxConfig{
			CgroupParent: p.Parent,
			SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
				NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
			},
		},
	}
	cr, err := ctrd.CRI().CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: p.ID, Config: cfg, SandboxConfig: sb})
	require.NoError(t, err, "CreateContainer %s/%s", p.Name, name)
	st, err := ctrd.CRI().ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: cr.GetContainerId(), Verbose: true})
	require.NoError(t, err)
	require.Contains(t, st.GetInfo()["info"], p.Parent+"/"+cr.GetContainerId(), "container %s/%s not in its pod's cgroup", p.Name, name)
	_, err = ctrd.CRI().StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: cr.GetContainerId()})
	require.NoError(t, err, "StartContainer %s/%s", p.Name, name)
	return cr.GetContainerId()
}

func containerStatus(t *testing.T, ctrd *containerdtest.Containerd, id string) *runtimeapi.ContainerStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := ctrd.CRI().ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	require.NoError(t, err)
	return st.GetStatus()
}

// TestCollectorWithContainerd: containerd + runc with the CRI plugin
// (internal/testing/containerdtest) runs three pods the way a kubelet would: busy
// (burstable, spinning under a 0.2 CPU quota), mem (burstable, 32 MiB
// limit: its first container allocates 64 MiB and is OOM-killed, then the
// harness restarts it as attempt 1 in the same sandbox, as the kubelet
// does), idle (besteffort). The collector runs twice against them: as a
// process on the host (root_path /), then from `make image` as a CRI pod
// built from deploy/daemonset.yaml's pod template (host network, host / at
// /hostfs read-only, root_path /hostfs, the CRI socket mounted, all
// capabilities dropped).
func TestCollectorWithContainerd(t *testing.T) {
	machine.Lock(t) // the whole run: its pods, Prometheus, collectors
	need(t, containerdtest.Available())
	bin := collectorBin(t)
	archive := imageArchive(t)
	ctrd := containerdtest.Start(t)
	const ns = "e2e-workloads"

	busyPod := ctrd.RunPod(t, "busy", ns, "burstable", nil)
	busyID := createContainer(t, ctrd, busyPod, "spin", 0, []string{"/bin/sh", "-c", "while :; do :; done"},
		&runtimeapi.LinuxContainerResources{CpuPeriod: 100000, CpuQuota: 20000, CpuShares: 204})
	memPod := ctrd.RunPod(t, "mem", ns, "burstable", nil)
	oomID := createContainer(t, ctrd, memPod, "hog", 0, []string{"/bin/busybox", "dd", "if=/dev/zero", "of=/dev/null", "bs=64M", "count=1"},
		&runtimeapi.LinuxContainerResources{MemoryLimitInBytes: 32 << 20, CpuShares: 2})
	eventually(t, 30*time.Second, "first mem container OOM-killed", func() error {
		st := containerStatus(t, ctrd, oomID)
		if st.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED {
			return fmt.Errorf("state %s", st.GetState())
		}
		if st.GetReason() != "OOMKilled" {
			t.Fatalf("mem container exited with reason %q (exit code %d), want OOMKilled", st.GetReason(), st.GetExitCode())
		}
		return nil
	})
	// Attempt 1 survives: its shell's child allocates 64 MiB and is
	// OOM-killed inside the running container, whose cgroup (and its v1
	// oom_kill counter) stays; attempt 0's cgroup went with it.
	memID := createContainer(t, ctrd, memPod, "hog", 1,
		[]string{"/bin/sh", "-c", "/bin/busybox dd if=/dev/zero of=/dev/null bs=64M count=1; exec sleep 3600"},
		&runtimeapi.LinuxContainerResources{MemoryLimitInBytes: 32 << 20, CpuShares: 2})
	idlePod := ctrd.RunPod(t, "idle", ns, "besteffort", nil)
	idleID := idlePod.StartContainer(t, "nap", 0)

	ws := []criWorkload{
		{name: "busy", pod: busyPod, cname: "spin", id: busyID},
		{name: "mem", pod: memPod, cname: "hog", id: memID, restarts: 1},
		{name: "idle", pod: idlePod, cname: "nap", id: idleID},
	}
	for i := range ws {
		rel := filepath.Join(ws[i].pod.Parent, ws[i].id)
		ws[i].cpuDir = filepath.Join("/sys/fs/cgroup/cpu", rel)
		ws[i].memDir = filepath.Join("/sys/fs/cgroup/memory", rel)
	}
	eventually(t, 30*time.Second, "OOM kill inside the restarted mem container", func() error {
		n, err := ooms(ws[1].memDir)
		if err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("oom_kill %d", n)
		}
		return nil
	})
	sandboxes := []string{busyPod.ID, memPod.ID, idlePod.ID}

	t.Run("host", func(t *testing.T) {
		node := fmt.Sprintf("e2e-cri-host-%d", os.Getpid())
		prom := startPrometheus(t)
		sink := startSink(t, bin)
		start(t, "agent", bin, []string{
			"E2E_ROOT_PATH=/", "E2E_NODE_NAME=" + node, "E2E_CRI_ENDPOINT=" + ctrd.Socket,
			"E2E_OTLP_ENDPOINT=" + sink.endpoint, "E2E_REMOTE_WRITE_URL=" + prom.remoteWriteURL(),
		}, "--config", filepath.Join(repoRoot(t), "config", "e2e-agent.yaml"))
		checkCRI(t, ws, oomID, sandboxes, node, prom, sink)
	})

	t.Run("cadvisor-compat", func(t *testing.T) {
		checkCompat(t, bin, ctrd, ws)
	})

	t.Run("readme-names", func(t *testing.T) {
		checkReadmeNames(t, bin, ctrd, ws)
	})

	t.Run("pod", func(t *testing.T) {
		out, err := exec.Command("ctr", "-a", ctrd.Socket, "-n", containerdtest.Namespace, "images", "import", archive).CombinedOutput()
		require.NoError(t, err, "ctr images import %s: %s", archive, out)
		node := fmt.Sprintf("e2e-cri-pod-%d", os.Getpid())
		prom := startPrometheus(t)
		sink := startSink(t, bin)
		pid := runCollectorPod(t, ctrd, node, prom, sink)
		checkCRI(t, ws, oomID, sandboxes, node, prom, sink)
		checkPodConfinement(t, pid)
	})
}

// metadataDefines lists the metrics metadata.yaml defines whose names
// start with prefix, so the throttling and OOM-kill assertions cover every
// such metric the build under test has.
func metadataDefines(t *testing.T, prefix string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "metadata.yaml"))
	require.NoError(t, err)
	var out []string
	inMetrics := false
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, " ") && line != "" {
			inMetrics = strings.HasPrefix(line, "metrics:")
			continue
		}
		if inMetrics && strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") && strings.HasSuffix(line, ":") {
			name := strings.TrimSuffix(strings.TrimSpace(line), ":")
			if strings.HasPrefix(name, prefix) {
				out = append(out, name)
			}
		}
	}
	return out
}

// checkCRI asserts what arrived for the CRI workloads.
func checkCRI(t *testing.T, ws []criWorkload, oomID string, sandboxes []string, node string, prom *prometheus, sink *otlpSink) {
	t.Helper()
	eventually(t, 90*time.Second, "every CRI workload in Prometheus", func() error {
		for _, w := range ws {
			// container_cpu_usage needs two scrapes: once it is there, every
			// metric of the container is.
			s, err := prom.query(fmt.Sprintf(`container_cpu_usage{container_id=%q, k8s_node_name=%q}`, w.id, node))
			if err != nil {
				return err
			}
			if len(s) == 0 || s[0].Labels["k8s_pod_name"] == "" {
				all, _ := prom.query(fmt.Sprintf(`count by (container_id, k8s_pod_name, k8s_pod_uid) (container_memory_working_set_bytes{k8s_node_name=%q})`, node))
				return fmt.Errorf("%s (%s): no series with its pod name yet: %v; the node's containers: %v", w.name, w.id, s, all)
			}
		}
		return nil
	})
	for _, w := range ws {
		// Exactly once per pod and container name, under the ID CRI gave it.
		ss, err := prom.query(fmt.Sprintf(`container_memory_working_set_bytes{k8s_node_name=%q, k8s_namespace_name=%q, k8s_pod_name=%q}`, node, w.pod.Namespace, w.pod.Name))
		require.NoError(t, err)
		require.Len(t, ss, 1, "%s: series of pod %s: %v", w.name, w.pod.Name, ss)
		l := ss[0].Labels
		assert.Equal(t, w.id, l["container_id"], "%s container_id", w.name)
		assert.Equal(t, w.pod.UID, l["k8s_pod_uid"], "%s k8s_pod_uid", w.name)
		assert.Equal(t, w.cname, l["k8s_container_name"], "%s k8s_container_name", w.name)
		assert.Equal(t, fmt.Sprint(w.restarts), l["k8s_container_restart_count"], "%s k8s_container_restart_count", w.name)
		for metric, want := range containerSeries {
			s, err := prom.query(fmt.Sprintf(`%s{container_id=%q, k8s_node_name=%q}`, metric, w.id, node))
			require.NoError(t, err)
			assert.Len(t, s, want, "%s: %s", w.name, metric)
		}
		t.Logf("arrived in Prometheus for %s/%s: %v = %v", w.pod.Name, w.cname, l, ss[0].Value)
	}
	// No sandbox (pause) container and not the exited OOM-killed one.
	re := strings.Join(append(append([]string{}, sandboxes...), oomID), "|")
	s, err := prom.query(fmt.Sprintf(`{container_id=~%q, k8s_node_name=%q}`, re, node))
	require.NoError(t, err)
	assert.Empty(t, s, "series for sandbox or exited containers")

	busy := ws[0]
	cpu := func() float64 {
		s, err := prom.one(fmt.Sprintf(`sum(container_cpu_time_seconds_total{container_id=%q, k8s_node_name=%q})`, busy.id, node))
		require.NoError(t, err)
		return s.Value
	}
	c1 := cpu()
	time.Sleep(4 * time.Second)
	c2 := cpu()
	t.Logf("busy CPU time %.3fs -> %.3fs over 4s (quota 0.2 CPU)", c1, c2)
	assert.Greater(t, c2, c1, "busy CPU time must rise")
	assert.Less(t, c2-c1, 1.0, "busy ran past its 0.2 CPU quota")
	thr, err := statKey(filepath.Join(busy.cpuDir, "cpu.stat"), "nr_throttled")
	require.NoError(t, err)
	assert.Greater(t, thr, uint64(0), "kernel: busy never throttled")
	// Throttling counted for busy, the one OOM kill for the restarted mem
	// container and its pod.
	throttling := metadataDefines(t, "container.cpu.throttling.")
	require.Len(t, throttling, 3, "the throttling metrics are in metadata.yaml")
	for _, m := range throttling {
		s, err := prom.query(fmt.Sprintf(`{__name__=~"%s(_[a-z]+)*", container_id=%q, k8s_node_name=%q}`, strings.ReplaceAll(m, ".", "_"), busy.id, node))
		require.NoError(t, err)
		require.NotEmpty(t, s, "%s for the busy container", m)
		assert.Greater(t, s[0].Value, 0.0, "%s for the busy container", m)
		t.Logf("%s for the busy container: %v", m, s[0].Value)
	}
	mem := ws[1]
	for m, sel := range map[string]string{
		"container.memory.oom_kills": fmt.Sprintf("container_id=%q", mem.id),
		"k8s.pod.memory.oom_kills":   fmt.Sprintf("k8s_pod_uid=%q, container_id=\"\"", mem.pod.UID),
	} {
		require.NotEmpty(t, metadataDefines(t, m), "%s is in metadata.yaml", m)
		s, err := prom.query(fmt.Sprintf(`{__name__=~"%s(_[a-z]+)*", %s, k8s_node_name=%q}`, strings.ReplaceAll(m, ".", "_"), sel, node))
		require.NoError(t, err)
		require.Len(t, s, 1, "%s for the mem pod: %v", m, s)
		assert.Equal(t, 1.0, s[0].Value, "%s: the one OOM kill in the mem pod", m)
		t.Logf("%s for the mem pod: %v", m, s[0].Value)
	}

	eventually(t, 20*time.Second, "busy working set matches the kernel", func() error {
		usage, err := readUint(filepath.Join(busy.memDir, "memory.usage_in_bytes"))
		if err != nil {
			return err
		}
		inactive, err := statKey(filepath.Join(busy.memDir, "memory.stat"), "total_inactive_file")
		if err != nil {
			return err
		}
		want := float64(usage) - float64(min(inactive, usage))
		s, err := prom.one(fmt.Sprintf(`container_memory_working_set_bytes{container_id=%q, k8s_node_name=%q}`, busy.id, node))
		if err != nil {
			return err
		}
		if tol := math.Max(2<<20, 0.05*want); math.Abs(s.Value-want) > tol {
			return fmt.Errorf("prometheus %.0f, kernel %.0f", s.Value, want)
		}
		return nil
	})
	for _, metric := range []string{"k8s_node_cpu_time_seconds_total", "k8s_node_memory_working_set_bytes"} {
		s, err := prom.query(fmt.Sprintf(`%s{k8s_node_name=%q}`, metric, node))
		require.NoError(t, err)
		assert.NotEmpty(t, s, metric)
	}

	// Filesystem (docs/filesystem.md), under the Prometheus names of the
	// README's mapping table: each workload's writable layer from CRI (the
	// background collection's first run already finds containerd's
	// measurements), the node filesystem and containerd's image filesystem.
	eventually(t, 90*time.Second, "filesystem metrics in Prometheus", func() error {
		for _, w := range ws {
			for _, metric := range []string{"container_filesystem_usage_bytes", "container_filesystem_inodes_used"} {
				s, err := prom.query(fmt.Sprintf(`%s{container_id=%q, k8s_node_name=%q}`, metric, w.id, node))
				if err != nil {
					return err
				}
				if len(s) != 1 {
					return fmt.Errorf("%s: %s series: %v", w.name, metric, s)
				}
			}
		}
		for _, metric := range []string{
			"k8s_node_filesystem_capacity_bytes", "k8s_node_filesystem_available_bytes", "k8s_node_filesystem_usage_bytes",
			"k8s_node_filesystem_inodes", "k8s_node_filesystem_inodes_free",
			"k8s_node_image_filesystem_usage_bytes", "k8s_node_image_filesystem_inodes_used",
			"k8s_node_image_filesystem_capacity_bytes", "k8s_node_image_filesystem_available_bytes",
		} {
			s, err := prom.query(fmt.Sprintf(`%s{k8s_node_name=%q}`, metric, node))
			if err != nil {
				return err
			}
			if len(s) == 0 || s[0].Value <= 0 {
				return fmt.Errorf("%s: %v", metric, s)
			}
		}
		return nil
	})
	fsUsage, err := prom.query(fmt.Sprintf(`container_filesystem_usage_bytes{k8s_node_name=%q}`, node))
	require.NoError(t, err)
	imageFS, err := prom.query(fmt.Sprintf(`k8s_node_image_filesystem_usage_bytes{k8s_node_name=%q}`, node))
	require.NoError(t, err)
	t.Logf("filesystem in Prometheus: writable layers %v; image filesystem %v", fsUsage, imageFS)

	// OTLP: the same identity for each workload.
	eventually(t, 20*time.Second, "OTLP file holds every CRI workload", func() error {
		pts, err := sink.read()
		if err != nil {
			return err
		}
		for _, w := range ws {
			mine := byContainer(pts, w.id)
			if len(mine) == 0 {
				return fmt.Errorf("%s: no OTLP points", w.name)
			}
			r := mine[len(mine)-1].resource
			for k, want := range map[string]any{"k8s.pod.name": w.pod.Name, "k8s.namespace.name": w.pod.Namespace,
				"k8s.container.name": w.cname, "k8s.pod.uid": w.pod.UID} {
				if r[k] != want {
					return fmt.Errorf("%s: OTLP %s = %v, want %v", w.name, k, r[k], want)
				}
			}
		}
		return nil
	})
}

// ooms reads the v1 memory cgroup's OOM kill count (memory.oom_control).
func ooms(memDir string) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(memDir, "memory.oom_control"))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			return strconv.ParseUint(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("%s/memory.oom_control: no oom_kill", memDir)
}

func imageArchive(t *testing.T) string {
	t.Helper()
	archive := os.Getenv("IMAGE_ARCHIVE")
	if archive == "" {
		archive = filepath.Join(repoRoot(t), "bin", "otelcol-containerstats-image.tar")
	}
	if _, err := os.Stat(archive); err != nil {
		need(t, "image archive missing (make image): "+err.Error())
	}
	return archive
}

// runCollectorPod runs the collector image as a CRI pod built from
// deploy/daemonset.yaml's pod template by podtemplate.Translate: the
// manifest's mounts, security context, hostPID, downward-API node name and
// args, with three test-only changes: host network (no CNI here), the CRI
// socket and pod-resources hostPaths pointed at the harness's, and the
// ConfigMap replaced by config/e2e-agent.yaml (plus its E2E_* variables) so
// the collector exports to this test's backends. Returns the collector's
// host PID; the pod and its cgroups are removed in t.Cleanup.
func runCollectorPod(t *testing.T, ctrd *containerdtest.Containerd, node string, prom *prometheus, sink *otlpSink) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "daemonset.yaml"))
	require.NoError(t, err)
	objs, err := podtemplate.Decode(raw)
	require.NoError(t, err)
	var ds *appsv1.DaemonSet
	for _, o := range objs {
		if d, ok := o.(*appsv1.DaemonSet); ok {
			ds = d
		}
	}
	require.NotNil(t, ds)

	cm := t.TempDir()
	agentCfg, err := os.ReadFile(filepath.Join(repoRoot(t), "config", "e2e-agent.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(cm, "config.yaml"), agentCfg, 0o644))
	logs := t.TempDir()
	n := podtemplate.Node{
		Name: node, Namespace: ds.Namespace, PodName: ds.Name + "-" + node,
		PodUID: leftovers.TestPodUID(),
		HostPaths: map[string]string{
			"/":                               sharedHostRoot(t),
			"/run/containerd/containerd.sock": ctrd.Socket,
			"/var/lib/kubelet/pod-resources":  t.TempDir(),
		},
		ConfigMaps:  map[string]string{"otelcol-containerstats": cm},
		HostNetwork: true,
	}
	p, err := podtemplate.Translate(ds.Spec.Template.Spec, n)
	require.NoError(t, err)
	p.Sandbox.LogDirectory = logs
	p.Container.LogPath = "otelcol/0.log"
	for k, v := range map[string]string{
		"E2E_ROOT_PATH": "/hostfs", "E2E_NODE_NAME": node, "E2E_CRI_ENDPOINT": "/run/containerd/containerd.sock",
		"E2E_OTLP_ENDPOINT": sink.endpoint, "E2E_REMOTE_WRITE_URL": prom.remoteWriteURL(),
	} {
		p.Container.Envs = append(p.Container.Envs, &runtimeapi.KeyValue{Key: k, Value: []byte(v)})
	}

	cri := ctrd.CRI()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sb, err := cri.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: p.Sandbox})
	require.NoError(t, err, "RunPodSandbox for the collector")
	sandboxID := sb.GetPodSandboxId()
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(logs, "otelcol", "0.log"))
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("--- collector pod log (tail) ---\n%s", b)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = cri.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sandboxID})
		_, _ = cri.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sandboxID})
		removePodCgroups(p.Sandbox.Linux.CgroupParent)
	})
	cr, err := cri.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sandboxID, Config: p.Container, SandboxConfig: p.Sandbox})
	require.NoError(t, err, "CreateContainer for the collector")
	_, err = cri.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: cr.GetContainerId()})
	require.NoError(t, err, "StartContainer for the collector")

	st, err := cri.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: cr.GetContainerId(), Verbose: true})
	require.NoError(t, err)
	require.Equal(t, runtimeapi.ContainerState_CONTAINER_RUNNING, st.GetStatus().GetState(), "collector container: %v", st.GetStatus())
	var info struct {
		Pid int `json:"pid"`
	}
	require.NoError(t, json.Unmarshal([]byte(st.GetInfo()["info"]), &info))
	require.Positive(t, info.Pid)
	t.Logf("collector pod %s container %s pid %d (image %s)", sandboxID[:12], cr.GetContainerId()[:12], info.Pid, st.GetStatus().GetImageRef())
	return info.Pid
}

// sharedHostRoot returns a view of the host root that a HostToContainer
// mount accepts. The manifest mounts / with mountPropagation
// HostToContainer, which containerd allows only from a shared or slave
// mount: systemd makes / shared on real nodes, but on this machine (no
// systemd) / is private, and making it shared would change the whole
// machine. So the test binds / (plus /proc and /sys with their submounts,
// the cgroup hierarchies) at a temp directory and makes that copy shared;
// what the collector reads under /hostfs is the host's own files.
func sharedHostRoot(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "hostroot")
	require.NoError(t, os.Mkdir(dir, 0o755))
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-R", "-l", dir).CombinedOutput(); err != nil {
			t.Logf("umount %s: %v: %s", dir, err, out)
		}
	})
	for _, args := range [][]string{
		{"--bind", "/", dir},
		{"--rbind", "/proc", filepath.Join(dir, "proc")},
		{"--rbind", "/sys", filepath.Join(dir, "sys")},
		{"--make-rshared", dir},
	} {
		out, err := exec.Command("mount", args...).CombinedOutput()
		require.NoError(t, err, "mount %v: %s", args, out)
	}
	return dir
}

// removePodCgroups kills what is left in the collector pod's cgroup and
// removes its directories deepest first in every hierarchy; nothing else.
func removePodCgroups(parent string) {
	hs, _ := filepath.Glob("/sys/fs/cgroup/*")
	for _, h := range hs {
		if fi, err := os.Lstat(h); err != nil || !fi.IsDir() {
			continue
		}
		root := filepath.Join(h, parent)
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			b, _ := os.ReadFile(filepath.Join(dirs[i], "cgroup.procs"))
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			for k := 0; k < 100; k++ {
				if err := syscall.Rmdir(dirs[i]); err == nil || errors.Is(err, syscall.ENOENT) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
}

// checkPodConfinement: the collector in its pod has no capability, no new
// privileges, a read-only root filesystem and the host root read-only at
// /hostfs, as the manifest says.
func checkPodConfinement(t *testing.T, pid int) {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb":
			assert.Equal(t, "0000000000000000", strings.TrimSpace(v), "%s of the collector in its pod", k)
		case "NoNewPrivs":
			assert.Equal(t, "1", strings.TrimSpace(v))
		}
	}
	mi, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	require.NoError(t, err)
	opts := map[string]string{}
	for _, line := range strings.Split(string(mi), "\n") {
		if f := strings.Fields(line); len(f) > 5 {
			opts[f[4]] = f[5]
		}
	}
	for _, mp := range []string{"/", "/hostfs", "/run/containerd/containerd.sock", "/etc/otelcol"} {
		require.Contains(t, opts, mp, "mount %s in the collector pod", mp)
		assert.Contains(t, strings.Split(opts[mp], ","), "ro", "mount %s options %s", mp, opts[mp])
	}
}

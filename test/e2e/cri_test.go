// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/containerstats/containerstatsreceiver/internal/testing/containerdtest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
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
// does), idle (besteffort). The collector runs against them as a process
// on the host (root_path /); the image of `make image` as the DaemonSet's
// pod on a real kubelet is cluster_test.go's (make kube-test).
func TestCollectorWithContainerd(t *testing.T) {
	machine.Lock(t) // the whole run: its pods, Prometheus, collectors
	need(t, containerdtest.Available())
	bin := collectorBin(t)
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
		// Killed by the kernel's OOM killer (SIGKILL: 137). containerd calls
		// that "OOMKilled" when its OOM event is handled before the exit
		// event, "Error" when not (on a loaded machine CI saw the latter
		// once); the receiver's figures do not depend on containerd's word.
		if st.GetExitCode() != 137 || st.GetReason() != "OOMKilled" && st.GetReason() != "Error" {
			t.Fatalf("mem container exited with reason %q (exit code %d), want killed by the OOM killer (137)", st.GetReason(), st.GetExitCode())
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

	t.Run("prometheus3-otlp", func(t *testing.T) {
		checkPrometheus3(t, bin, ctrd, ws)
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
		s, oneErr := prom.one(fmt.Sprintf(`sum(container_cpu_time_seconds_total{container_id=%q, k8s_node_name=%q})`, busy.id, node))
		require.NoError(t, oneErr)
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
	assert.Positive(t, thr, "kernel: busy never throttled")
	// Throttling counted for busy, the one OOM kill for the restarted mem
	// container and its pod.
	throttling := metadataDefines(t, "container.cpu.throttling.")
	require.Len(t, throttling, 3, "the throttling metrics are in metadata.yaml")
	for _, m := range throttling {
		s, queryErr := prom.query(fmt.Sprintf(`{__name__=~"%s(_[a-z]+)*", container_id=%q, k8s_node_name=%q}`, strings.ReplaceAll(m, ".", "_"), busy.id, node))
		require.NoError(t, queryErr)
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
		s, queryErr := prom.query(fmt.Sprintf(`{__name__=~"%s(_[a-z]+)*", %s, k8s_node_name=%q}`, strings.ReplaceAll(m, ".", "_"), sel, node))
		require.NoError(t, queryErr)
		require.Len(t, s, 1, "%s for the mem pod: %v", m, s)
		assert.Equal(t, 1.0, s[0].Value, "%s: the one OOM kill in the mem pod", m)
		t.Logf("%s for the mem pod: %v", m, s[0].Value)
	}

	eventually(t, 20*time.Second, "busy working set matches the kernel", func() error {
		usage, readUintErr := readUint(filepath.Join(busy.memDir, "memory.usage_in_bytes"))
		if readUintErr != nil {
			return readUintErr
		}
		inactive, readUintErr := statKey(filepath.Join(busy.memDir, "memory.stat"), "total_inactive_file")
		if readUintErr != nil {
			return readUintErr
		}
		want := float64(usage) - float64(min(inactive, usage))
		s, readUintErr := prom.one(fmt.Sprintf(`container_memory_working_set_bytes{container_id=%q, k8s_node_name=%q}`, busy.id, node))
		if readUintErr != nil {
			return readUintErr
		}
		if tol := math.Max(2<<20, 0.05*want); math.Abs(s.Value-want) > tol {
			return fmt.Errorf("prometheus %.0f, kernel %.0f", s.Value, want)
		}
		return nil
	})
	for _, metric := range []string{"k8s_node_cpu_time_seconds_total", "k8s_node_memory_working_set_bytes"} {
		s, queryErr := prom.query(fmt.Sprintf(`%s{k8s_node_name=%q}`, metric, node))
		require.NoError(t, queryErr)
		assert.NotEmpty(t, s, metric)
	}

	// Filesystem (docs/filesystem.md), under the Prometheus names of the
	// docs/names.md's mapping table: each workload's writable layer from CRI (the
	// background collection's first run already finds containerd's
	// measurements), the node filesystem and containerd's image filesystem.
	eventually(t, 90*time.Second, "filesystem metrics in Prometheus", func() error {
		for _, w := range ws {
			for _, metric := range []string{"container_filesystem_usage_bytes", "container_filesystem_inode_used"} {
				s, queryErr := prom.query(fmt.Sprintf(`%s{container_id=%q, k8s_node_name=%q}`, metric, w.id, node))
				if queryErr != nil {
					return queryErr
				}
				if len(s) != 1 {
					return fmt.Errorf("%s: %s series: %v", w.name, metric, s)
				}
			}
		}
		for _, metric := range []string{
			"k8s_node_filesystem_capacity_bytes", "k8s_node_filesystem_available_bytes", "k8s_node_filesystem_usage_bytes",
			"k8s_node_filesystem_inode_count", "k8s_node_filesystem_inode_free",
			"k8s_node_image_filesystem_usage_bytes", "k8s_node_image_filesystem_inode_used",
			"k8s_node_image_filesystem_capacity_bytes", "k8s_node_image_filesystem_available_bytes",
		} {
			s, queryErr := prom.query(fmt.Sprintf(`%s{k8s_node_name=%q}`, metric, node))
			if queryErr != nil {
				return queryErr
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
			for k, want := range map[string]any{
				"k8s.pod.name": w.pod.Name, "k8s.namespace.name": w.pod.Namespace,
				"k8s.container.name": w.cname, "k8s.pod.uid": w.pod.UID,
			} {
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
	if _, err := os.Stat(archive); err != nil { //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
		need(t, "image archive missing (make image): "+err.Error())
	}
	return archive
}

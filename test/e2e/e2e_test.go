// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package e2e

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// need fails in CI (where every prerequisite is installed by .ci/run) and
// skips elsewhere, so a missing package can never turn CI's e2e into a
// silent skip (machine.Need).
func need(t *testing.T, why string) {
	t.Helper()
	machine.Need(t, why)
}

func collectorBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("OTELCOL_BIN")
	if bin == "" {
		bin = filepath.Join(repoRoot(t), "bin", "otelcol-containerstats")
	}
	if _, err := os.Stat(bin); err != nil { //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
		need(t, fmt.Sprintf("collector binary %s missing (make otelcol): %v", bin, err))
	}
	return bin
}

// agent starts the collector under test with config/e2e-agent.yaml.
func agent(t *testing.T, bin, root, node string, sink *otlpSink, prom *prometheus) *process {
	t.Helper()
	return start(t, "agent", bin, []string{
		"E2E_ROOT_PATH=" + root,
		"E2E_NODE_NAME=" + node,
		"E2E_CRI_ENDPOINT=",
		"E2E_OTLP_ENDPOINT=" + sink.endpoint,
		"E2E_REMOTE_WRITE_URL=" + prom.remoteWriteURL(),
	}, "--config", filepath.Join(repoRoot(t), "config", "e2e-agent.yaml"))
}

// Prometheus names of the container metrics (prometheus_remote_write with
// resource_constant_labels: unit suffix, _total on monotonic sums,
// dots to underscores; resource attributes become labels).
var containerSeries = map[string]int{ // name -> series per container
	"container_cpu_time_seconds_total":   2, // cpu_mode user, system
	"container_cpu_usage":                1,
	"container_memory_usage_bytes":       1,
	"container_memory_working_set_bytes": 1,
}

// OTLP metrics every container must carry (the others enabled by default
// may be there too).
var containerMetrics = []string{
	"container.cpu.time", "container.cpu.usage", "container.memory.usage", "container.memory.working_set",
}

// TestCollectorOnHost: the built collector on this machine scrapes real
// kubepods-shaped cgroups (cgroupfs driver) with real processes in them and
// exports over OTLP/gRPC to a second collector (file exporter) and by
// remote write to Prometheus; the test reads both back. Two runs on the
// same workloads: "host" runs the collector as `make run` does (root_path
// /); "hostfs" runs it the way deploy/daemonset.yaml does: in its own mount
// namespace with the host root bind-mounted read-only at <dir>/hostfs,
// root_path pointing there, every capability dropped and no_new_privs set.
func TestCollectorOnHost(t *testing.T) {
	machine.Lock(t) // the whole run: its cgroups, Prometheus, collectors
	need(t, cgrouptest.Available())
	bin := collectorBin(t)

	// Workloads. busy: one spinning thread under a CFS quota of 0.2 CPU,
	// 48 MiB touched; idle: a besteffort container that sleeps.
	busy := cgrouptest.NewContainer(t, "burstable")
	busy.Write(t, "cpu", "cpu.cfs_period_us", "100000")
	busy.Write(t, "cpu", "cpu.cfs_quota_us", "20000")
	busy.Start(t, cgrouptest.ModeBurn, "threads=1", "mib=48")
	eventually(t, 30*time.Second, "busy child charged 48 MiB", func() error {
		if u := busy.MemoryUsage(t); u < 48<<20 {
			return fmt.Errorf("memory.usage_in_bytes %d", u)
		}
		return nil
	})
	idle := cgrouptest.NewContainer(t, "besteffort")
	idle.Start(t, cgrouptest.ModeSleep)
	w := workloads{busy: busy, idle: idle}

	t.Run("host", func(t *testing.T) {
		node := fmt.Sprintf("e2e-host-%d", os.Getpid())
		prom := startPrometheus(t)
		sink := startSink(t, bin)
		ag := agent(t, bin, "/", node, sink, prom)
		checkArrival(t, w, node, ag, prom, sink)
	})
	t.Run("hostfs", func(t *testing.T) {
		need(t, lookPaths("unshare", "setpriv", "mount"))
		node := fmt.Sprintf("e2e-hostfs-%d", os.Getpid())
		prom := startPrometheus(t)
		sink := startSink(t, bin)
		ag := daemonSetAgent(t, bin, node, sink, prom)
		checkArrival(t, w, node, ag, prom, sink)
		checkConfinement(t, ag)
	})
}

type workloads struct{ busy, idle *cgrouptest.Container }

// checkArrival asserts what the agent's metrics look like in Prometheus and
// in the OTLP file.
func checkArrival(t *testing.T, w workloads, node string, ag *process, prom *prometheus, sink *otlpSink) {
	busy, idle := w.busy, w.idle
	containers := map[string]*cgrouptest.Container{"busy": busy, "idle": idle}

	// First arrival: both containers' CPU time in Prometheus.
	t0 := time.Now()
	eventually(t, 60*time.Second, "container metrics in Prometheus", func() error {
		ag.alive(t)
		sink.proc.alive(t)
		for name, c := range containers {
			s, err := prom.query(fmt.Sprintf(`container_cpu_usage{container_id=%q}`, c.ID))
			if err != nil {
				return err
			}
			if len(s) == 0 {
				return fmt.Errorf("%s: no container_cpu_usage yet", name)
			}
		}
		return nil
	})
	t.Logf("first container series queryable %.1fs after the agent started", time.Since(t0).Seconds())

	// Each container: every metric present exactly once (per cpu_mode),
	// with the identity the cgroup path carries.
	for name, c := range containers {
		for metric, want := range containerSeries {
			ss, err := prom.query(fmt.Sprintf(`%s{container_id=%q}`, metric, c.ID))
			require.NoError(t, err)
			require.Len(t, ss, want, "%s: %s series: %v", name, metric, ss)
			modes := map[string]bool{}
			for _, s := range ss {
				assert.Equal(t, c.PodUID, s.Labels["k8s_pod_uid"], "%s %s", name, metric)
				assert.Equal(t, c.QoS, s.Labels["k8s_pod_qos_class"], "%s %s", name, metric)
				assert.Equal(t, node, s.Labels["k8s_node_name"], "%s %s", name, metric)
				modes[s.Labels["cpu_mode"]] = true
			}
			if want == 2 {
				assert.Equal(t, map[string]bool{"user": true, "system": true}, modes, "%s %s", name, metric)
			}
		}
	}
	busyLabels, err := prom.query(fmt.Sprintf(`container_memory_working_set_bytes{container_id=%q}`, busy.ID))
	require.NoError(t, err)
	t.Logf("in Prometheus for the busy container: %v", busyLabels)

	// CPU time rises for the busy container, held to its quota; the idle
	// one's stays where it was (its start, the test binary's runtime
	// starting in the container, is charged to it: more under -race).
	cpuOf := func(c *cgrouptest.Container) float64 {
		s, oneErr := prom.one(fmt.Sprintf(`sum(container_cpu_time_seconds_total{container_id=%q})`, c.ID))
		require.NoError(t, oneErr)
		return s.Value
	}
	c1, i1 := cpuOf(busy), cpuOf(idle)
	time.Sleep(4 * time.Second)
	c2, i2 := cpuOf(busy), cpuOf(idle)
	t.Logf("busy container CPU time %.3fs -> %.3fs over 4s (quota 0.2 CPU); idle container %.3fs -> %.3fs", c1, c2, i1, i2)
	assert.Greater(t, c1, 0.0)
	// No lower bound beyond "rises" (the machine's 2 cores are shared); the upper
	// bounds are what shows the quota held and was measured.
	assert.Greater(t, c2, c1, "busy container's CPU time must rise (0.2 CPU for 4 s = 0.8 s)")
	assert.Less(t, c2-c1, 1.0, "busy container ran past its 0.2 CPU quota")
	throttled, err := statKey(filepath.Join(busy.Dir("cpu"), "cpu.stat"), "nr_throttled")
	require.NoError(t, err)
	assert.Positive(t, throttled, "kernel: busy container never throttled")
	u, err := prom.one(fmt.Sprintf(`avg_over_time(container_cpu_usage{container_id=%q}[4s])`, busy.ID))
	require.NoError(t, err)
	t.Logf("busy container_cpu_usage averaged over 4s: %.3f CPU (quota 0.2)", u.Value)
	assert.Greater(t, u.Value, 0.0, "container_cpu_usage of the busy container")
	assert.Less(t, u.Value, 0.26, "container_cpu_usage of the busy container above its 0.2 CPU quota")
	assert.Less(t, i2-i1, 0.05, "idle container's CPU time over the busy one's 4 s")
	assert.Less(t, i2, c2/2, "idle container's CPU time against the busy one's")

	// Working set within a small tolerance of the kernel's files now.
	eventually(t, 20*time.Second, "busy working set matches the kernel", func() error {
		usage, readUintErr := readUint(filepath.Join(busy.Dir("memory"), "memory.usage_in_bytes"))
		if readUintErr != nil {
			return readUintErr
		}
		inactive, readUintErr := statKey(filepath.Join(busy.Dir("memory"), "memory.stat"), "total_inactive_file")
		if readUintErr != nil {
			return readUintErr
		}
		want := float64(usage) - float64(min(inactive, usage))
		s, readUintErr := prom.one(fmt.Sprintf(`container_memory_working_set_bytes{container_id=%q}`, busy.ID))
		if readUintErr != nil {
			return readUintErr
		}
		if tol := math.Max(2<<20, 0.05*want); math.Abs(s.Value-want) > tol {
			return fmt.Errorf("prometheus %.0f, kernel usage-inactive_file %.0f (tolerance %.0f)", s.Value, want, tol)
		}
		if s.Value < 48<<20 {
			return fmt.Errorf("working set %.0f below the 48 MiB the child touched", s.Value)
		}
		return nil
	})

	// Node metrics.
	for metric, want := range map[string]int{
		"k8s_node_cpu_time_seconds_total":   1, // the total: no cpu_mode (semantic conventions)
		"k8s_node_cpu_usage":                1,
		"k8s_node_memory_usage_bytes":       1,
		"k8s_node_memory_working_set_bytes": 1,
	} {
		ss, queryErr := prom.query(fmt.Sprintf(`%s{k8s_node_name=%q}`, metric, node))
		require.NoError(t, queryErr)
		require.Len(t, ss, want, "%s: %v", metric, ss)
		for _, s := range ss {
			assert.Greater(t, s.Value, 0.0, "%s", metric)
		}
	}
	// Pod metrics for the busy container's pod.
	ss, err := prom.query(fmt.Sprintf(`k8s_pod_memory_working_set_bytes{k8s_pod_uid=%q}`, busy.PodUID))
	require.NoError(t, err)
	require.Len(t, ss, 1, "pod working set: %v", ss)

	// The same metrics arrived over OTLP: per container, the same metric
	// names with the same identity, one resource per scrape, and the value
	// Prometheus holds for a timestamp equals the OTLP point's.
	var pts []point
	eventually(t, 20*time.Second, "OTLP file holds both containers", func() error {
		pts, err = sink.read()
		if err != nil {
			return err
		}
		for name, c := range containers {
			if len(byContainer(pts, c.ID)) == 0 {
				return fmt.Errorf("%s: no points in %s", name, sink.file)
			}
		}
		return nil
	})
	for name, c := range containers {
		mine := byContainer(pts, c.ID)
		names := map[string]bool{}
		perTS := map[string]int{}
		for _, p := range mine {
			names[p.metric] = true
			assert.Equal(t, c.PodUID, p.resource["k8s.pod.uid"], "%s %s", name, p.metric)
			assert.Equal(t, c.QoS, p.resource["k8s.pod.qos_class"], "%s %s", name, p.metric)
			assert.Equal(t, node, p.resource["k8s.node.name"], "%s %s", name, p.metric)
			perTS[fmt.Sprintf("%s %v %d", p.metric, p.attrs, p.at.UnixNano())]++
		}
		for _, want := range containerMetrics {
			assert.True(t, names[want], "%s: OTLP metric %s missing (got %v)", name, want, names)
		}
		for k, n := range perTS {
			assert.Equal(t, 1, n, "%s: %d points for %s: the container was reported more than once", name, n, k)
		}
	}
	// Cross-check one value: Prometheus' sample timestamp -> the OTLP point.
	ws, err := prom.one(fmt.Sprintf(`container_memory_working_set_bytes{container_id=%q}`, busy.ID))
	require.NoError(t, err)
	tsS, err := prom.one(fmt.Sprintf(`timestamp(container_memory_working_set_bytes{container_id=%q})`, busy.ID))
	require.NoError(t, err)
	eventually(t, 10*time.Second, "OTLP point for Prometheus' latest sample", func() error {
		pts, err = sink.read()
		if err != nil {
			return err
		}
		for _, p := range byContainer(pts, busy.ID) {
			if p.metric == "container.memory.working_set" && p.at.UnixMilli() == int64(math.Round(tsS.Value*1000)) {
				if p.value != ws.Value {
					return fmt.Errorf("OTLP %v, Prometheus %v at %v", p.value, ws.Value, p.at)
				}
				return nil
			}
		}
		return fmt.Errorf("no OTLP working-set point at %.3f", tsS.Value)
	})
	t.Logf("OTLP file: %d points; Prometheus and OTLP agree on working set %v at %.3f", len(pts), ws.Value, tsS.Value)
}

// daemonSetAgent runs the agent as deploy/daemonset.yaml runs the
// collector: a private mount namespace in which the host's / is
// bind-mounted (recursively, top mount read-only) at <tmp>/hostfs,
// root_path set to it, all capabilities dropped from every set including
// the bounding set, and no_new_privs.
func daemonSetAgent(t *testing.T, bin, node string, sink *otlpSink, prom *prometheus) *process {
	t.Helper()
	hostfs := filepath.Join(t.TempDir(), "hostfs")
	require.NoError(t, os.Mkdir(hostfs, 0o755))
	script := `set -e
mount --make-rprivate /
mount --rbind / "$HOSTFS"
mount -o remount,bind,ro "$HOSTFS"
exec setpriv --no-new-privs --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- "$@"`
	return start(t, "agent-hostfs", "unshare", []string{
		"HOSTFS=" + hostfs,
		"E2E_ROOT_PATH=" + hostfs,
		"E2E_NODE_NAME=" + node,
		"E2E_CRI_ENDPOINT=",
		"E2E_OTLP_ENDPOINT=" + sink.endpoint,
		"E2E_REMOTE_WRITE_URL=" + prom.remoteWriteURL(),
	}, "--mount", "--propagation", "private", "bash", "-c", script, "agent",
		bin, "--config", filepath.Join(repoRoot(t), "config", "e2e-agent.yaml"))
}

// checkConfinement: the process that delivered the metrics is the collector
// itself (unshare, bash and setpriv exec'd into it), with no capability in
// any set, no_new_privs, and the host root mounted read-only at root_path.
func checkConfinement(t *testing.T, ag *process) {
	t.Helper()
	pid := ag.cmd.Process.Pid
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	require.NoError(t, err)
	assert.Equal(t, "otelcol-containerstats", filepath.Base(exe))
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	fields := map[string]string{}
	for _, line := range strings.Split(string(status), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		assert.Equal(t, "0000000000000000", fields[k], "%s of the collector", k)
	}
	assert.Equal(t, "1", fields["NoNewPrivs"])
	mi, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	require.NoError(t, err)
	found := false
	for _, line := range strings.Split(string(mi), "\n") {
		f := strings.Fields(line)
		if len(f) > 5 && strings.HasSuffix(f[4], "/hostfs") && f[3] == "/" {
			found = true
			assert.Contains(t, strings.Split(f[5], ","), "ro", "hostfs mount options %s", f[5])
		}
	}
	assert.True(t, found, "no /hostfs bind mount of / in the collector's mount namespace")
	t.Logf("collector pid %d: %s, CapEff=%s CapBnd=%s NoNewPrivs=%s, host root read-only at hostfs", pid, exe, fields["CapEff"], fields["CapBnd"], fields["NoNewPrivs"])
}

func lookPaths(names ...string) string {
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			return n + " not installed"
		}
	}
	return ""
}

func byContainer(pts []point, id string) []point {
	var out []point
	for _, p := range pts {
		if p.resource["container.id"] == id {
			out = append(out, p)
		}
	}
	return out
}

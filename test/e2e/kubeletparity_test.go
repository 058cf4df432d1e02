// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/containerstats/containerstatsreceiver/internal/testing/kubetest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/sidebyside"
)

// What kubeletstats reads from the Summary API and we read from the node
// (docs/kubeletstats.md): the node's system containers, a pod's volumes
// and its ephemeral storage, side by side with the kubelet's
// /stats/summary. The test kubelet runs with --kubelet-cgroups and
// --runtime-cgroups (kubetest.KubeletCgroup, RuntimeCgroup), so its
// summary has the kubelet and runtime system containers; ours are found
// from where the kubelet and containerd processes run.

// volsPod is the pod whose volumes are compared: an emptyDir on the node's
// disk holding a written 10 MiB file and a configMap volume.
const (
	volsPod       = "vols"
	volsConfigMap = "vols-settings"
	volsScratch   = "scratch"
	volsSettings  = "settings"
)

// startVolsPod creates the configMap and the pod (startWorkloads).
func (k *cluster) startVolsPod(t *testing.T) {
	t.Helper()
	_, err := k.cs.CoreV1().ConfigMaps(workNS).Create(context.Background(), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: volsConfigMap},
		Data:       map[string]string{"a.conf": "alpha=1\n", "b.conf": "beta=22\nbeta2=333\n"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	spec := workloadPod("dd", resources("cpu=20m,memory=16Mi", "cpu=200m,memory=48Mi"),
		"dd if=/dev/urandom of=/scratch/blob bs=1M count=10 && sync && exec sleep 3600")
	spec.Volumes = []corev1.Volume{
		{Name: volsScratch, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: volsSettings, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: volsConfigMap},
		}}},
	}
	spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: volsScratch, MountPath: "/scratch"}, {Name: volsSettings, MountPath: "/etc/settings"}}
	k.createPod(t, volsPod, spec)
}

// paritySummary is the part of /stats/summary these rows read.
type paritySummary struct {
	Node struct {
		SystemContainers []struct {
			Name string `json:"name"`
			CPU  *struct {
				Time                 time.Time `json:"time"`
				UsageCoreNanoSeconds *uint64   `json:"usageCoreNanoSeconds"`
			} `json:"cpu"`
			Memory *struct {
				Time            time.Time `json:"time"`
				UsageBytes      *uint64   `json:"usageBytes"`
				WorkingSetBytes *uint64   `json:"workingSetBytes"`
			} `json:"memory"`
		} `json:"systemContainers"`
	} `json:"node"`
	Pods []struct {
		PodRef struct {
			Name, Namespace, UID string
		} `json:"podRef"`
		Volumes []struct {
			Name           string    `json:"name"`
			Time           time.Time `json:"time"`
			UsedBytes      *uint64   `json:"usedBytes"`
			CapacityBytes  *uint64   `json:"capacityBytes"`
			AvailableBytes *uint64   `json:"availableBytes"`
			Inodes         *uint64   `json:"inodes"`
			InodesFree     *uint64   `json:"inodesFree"`
			InodesUsed     *uint64   `json:"inodesUsed"`
		} `json:"volume"`
		Ephemeral *struct {
			Time           time.Time `json:"time"`
			UsedBytes      *uint64   `json:"usedBytes"`
			CapacityBytes  *uint64   `json:"capacityBytes"`
			AvailableBytes *uint64   `json:"availableBytes"`
		} `json:"ephemeral-storage"`
	} `json:"pods"`
}

func (k *cluster) paritySummary(t *testing.T) paritySummary {
	t.Helper()
	var s paritySummary
	require.NoError(t, json.Unmarshal(k.kubeletGet(t, "/stats/summary"), &s))
	return s
}

func u64(p *uint64) float64 {
	if p == nil {
		return -1
	}
	return float64(*p)
}

// parityRows adds the rows of the system containers, the vols pod's
// volumes and its ephemeral storage. Tolerances: system containers' CPU
// time 50 ms + 2 % (ours interpolated to the kubelet's sample time, which
// cAdvisor takes every 10-15 s), memory 1 MiB + 2 % around our samples
// on either side of the kubelet's (the kubelet's own heap grows while the
// test reads it: a value read 4 s later was 4.4 MB more), at one of up
// to 3 of the kubelet's samples (systemContainerRows), which returns them
// as sidebyside rows: the caller asserts that no other system container's
// figure passes them; volume usage 64 KiB (the kubelet's
// du and our walk count the same blocks), inodes used exact, capacity and
// available 1 % (the node's disk is shared with the test); the pod's
// ephemeral storage 256 KiB (its log file grows by the kubelet's own
// lines).
func (k *cluster) parityRows(t *testing.T, add func(row)) []sidebyside.Row {
	t.Helper()
	ps := k.paritySummaryReady(t)
	k.volumeRows(t, ps, add)
	return k.systemContainerRows(t, ps, add)
}

// paritySummaryReady is the kubelet's summary once it has the system
// containers and the vols pod's volumes and ephemeral storage.
func (k *cluster) paritySummaryReady(t *testing.T) paritySummary {
	t.Helper()
	var ps paritySummary
	eventually(t, 2*time.Minute, "the kubelet's summary has the system containers and the vols pod's volumes and ephemeral storage", func() error {
		ps = k.paritySummary(t)
		names := map[string]bool{}
		for _, c := range ps.Node.SystemContainers {
			names[c.Name] = true
		}
		for _, want := range []string{"kubelet", "runtime", "pods"} {
			if !names[want] {
				return fmt.Errorf("system containers %v, no %s", names, want)
			}
		}
		for _, p := range ps.Pods {
			if p.PodRef.Name == volsPod && p.PodRef.Namespace == workNS {
				if len(p.Volumes) < 2 || p.Ephemeral == nil || p.Ephemeral.UsedBytes == nil || *p.Ephemeral.UsedBytes < 10<<20 {
					return fmt.Errorf("vols pod: %d volumes, ephemeral %+v", len(p.Volumes), p.Ephemeral)
				}
				return nil
			}
		}
		return fmt.Errorf("no vols pod in the summary")
	})
	return ps
}

// systemContainerRows: kubelet, runtime and pods (kubepods), CPU time,
// memory usage and working set; returns them as sidebyside rows, one
// entity per system container.
func (k *cluster) systemContainerRows(t *testing.T, ps paritySummary, add func(row)) []sidebyside.Row {
	t.Helper()
	node := fmt.Sprintf(`k8s_node_name=%q`, kubetest.NodeName)
	var out []sidebyside.Row
	for _, c := range ps.Node.SystemContainers {
		if c.Name != "kubelet" && c.Name != "runtime" && c.Name != "pods" {
			continue
		}
		sel := fmt.Sprintf(`{%s, k8s_node_system_container_name=%q}`, node, c.Name)
		eventually(t, 30*time.Second, "our series of system container "+c.Name, func() error {
			if _, ok := k.ours(t, "k8s_node_system_container_cpu_time_seconds_total"+sel); !ok {
				return fmt.Errorf("none; the collector logged:\n%s", k.collectorLog(t, "system container"))
			}
			return nil
		})
		require.True(t, c.CPU != nil && c.CPU.UsageCoreNanoSeconds != nil, "%s: no CPU in the summary", c.Name)
		kv := float64(*c.CPU.UsageCoreNanoSeconds) / 1e9
		tol := 0.05 + 0.02*kv
		cpuAr := k.oursAround(t, "k8s_node_system_container_cpu_time_seconds_total"+sel, c.CPU.Time, time.Second)
		text, ok := cpuAr.counter(kv, tol, "s")
		add(row{"system container " + c.Name, "CPU time (s)", text, "-", value(kv, "s") + " (/stats/summary)", fmt.Sprintf("%.3f", tol), ok})
		out = append(out, sidebyside.Row{
			Quantity: "system container CPU time (s)", Entity: c.Name, Ref: kv, Tol: tol, Unit: "s", Shown: text,
			Pass: func(v float64) bool { _, in := cpuAr.counter(v, tol, "s"); return in },
		})
		require.True(t, c.Memory != nil && c.Memory.UsageBytes != nil && c.Memory.WorkingSetBytes != nil, "%s: no memory in the summary", c.Name)
		fig := sysMem{c.Memory.Time, float64(*c.Memory.UsageBytes), float64(*c.Memory.WorkingSetBytes)}
		// A gauge can move and come back between two of our samples (10 s
		// apart: a heap grows and is collected) where the kubelet's sample
		// fell: then its next sample is taken, up to sysMemSamples. A
		// wrong mapping (another container's figure) must fail the sample
		// taken (the caller's sidebyside.Require).
		for n := 1; ; n++ {
			var got []memRow
			all := true
			for _, m := range []struct {
				what, metric string
				kubelet      float64
			}{
				{"memory usage (B)", "k8s_node_system_container_memory_usage_bytes", fig.usage},
				{"working set (B)", "k8s_node_system_container_memory_working_set_bytes", fig.ws},
			} {
				ar := k.oursAround(t, m.metric+sel, fig.at, time.Second)
				tol := 1<<20 + 0.02*m.kubelet
				got = append(got, memRow{c.Name, m.what, ar, tol, m.kubelet})
				all = all && ar.within(m.kubelet, tol)
			}
			if all || n == sysMemSamples {
				for _, r := range got {
					kubelet := value(r.kubelet, "B") + " (/stats/summary)"
					if n > 1 {
						kubelet += fmt.Sprintf(" (its sample %d of up to %d)", n, sysMemSamples)
					}
					add(row{
						"system container " + c.Name, r.what, r.ar.gauge("B"), "-", kubelet,
						fmt.Sprintf("%.0f", r.tol), r.ar.within(r.kubelet, r.tol),
					})
					out = append(out, sidebyside.Row{
						Quantity: "system container " + r.what, Entity: c.Name, Ref: r.kubelet, Tol: r.tol, Unit: "B", Shown: r.ar.gauge("B"),
						Pass: func(v float64) bool { return r.ar.within(v, r.tol) },
					})
				}
				break
			}
			for _, r := range got {
				t.Logf("system container %s %s: the kubelet's %s at %s, ours %s: taking the kubelet's next sample (%d of up to %d)",
					c.Name, r.what, value(r.kubelet, "B"), fig.at.Format(time.RFC3339), r.ar.gauge("B"), n+1, sysMemSamples)
			}
			fig = k.nextSysMem(t, c.Name, fig.at)
		}
	}
	return out
}

// memRow is one of our system container memory rows.
type memRow struct {
	name, what string
	ar         around
	tol        float64
	kubelet    float64
}

// sysMemSamples is how many of the kubelet's samples of a system
// container's memory systemContainerRows takes at most.
const sysMemSamples = 3

// sysMem is one sample of a system container's memory in the Summary API.
type sysMem struct {
	at        time.Time
	usage, ws float64
}

// nextSysMem waits for the kubelet's next sample of system container
// name's memory (cAdvisor's housekeeping: every 10-15 s).
func (k *cluster) nextSysMem(t *testing.T, name string, after time.Time) sysMem {
	t.Helper()
	var out sysMem
	eventually(t, time.Minute, "the kubelet's next sample of system container "+name, func() error {
		for _, c := range k.paritySummary(t).Node.SystemContainers {
			if c.Name == name && c.Memory != nil && c.Memory.UsageBytes != nil && c.Memory.WorkingSetBytes != nil {
				if !c.Memory.Time.After(after) {
					return fmt.Errorf("its sample is still at %s", c.Memory.Time)
				}
				out = sysMem{c.Memory.Time, float64(*c.Memory.UsageBytes), float64(*c.Memory.WorkingSetBytes)}
				return nil
			}
		}
		return fmt.Errorf("no memory of %s in the summary", name)
	})
	return out
}

// volumeRows: the vols pod's emptyDir and configMap volumes, and its
// ephemeral storage.
func (k *cluster) volumeRows(t *testing.T, ps paritySummary, add func(row)) {
	t.Helper()
	for _, p := range ps.Pods {
		if p.PodRef.Name != volsPod || p.PodRef.Namespace != workNS {
			continue
		}
		pod := fmt.Sprintf(`k8s_pod_uid=%q`, p.PodRef.UID)
		for _, vol := range p.Volumes {
			if vol.Name != volsScratch && vol.Name != volsSettings {
				continue
			}
			sel := fmt.Sprintf(`{%s, k8s_volume_name=%q}`, pod, vol.Name)
			for _, m := range []struct {
				what, metric string
				kubelet      float64
				tol          float64
			}{
				{"usage (B)", "k8s_pod_volume_usage_bytes", u64(vol.UsedBytes), 64 << 10},
				{"inodes used", "k8s_pod_volume_inode_used", u64(vol.InodesUsed), 0},
				{"capacity (B)", "k8s_pod_volume_capacity_bytes", u64(vol.CapacityBytes), 0.01 * u64(vol.CapacityBytes)},
				{"available (B)", "k8s_pod_volume_available_bytes", u64(vol.AvailableBytes), 0.01 * u64(vol.CapacityBytes)},
			} {
				ar := k.oursAround(t, m.metric+sel, vol.Time, time.Second)
				add(row{
					volsPod + " volume " + vol.Name, m.what, ar.gauge(""), "-", fmt.Sprintf("%.0f (/stats/summary)", m.kubelet),
					fmt.Sprintf("%.0f", m.tol), m.kubelet >= 0 && ar.within(m.kubelet, m.tol),
				})
			}
		}
		e := p.Ephemeral
		ar := k.oursAround(t, "k8s_pod_filesystem_usage_bytes{"+pod+"}", e.Time, time.Second)
		add(row{
			volsPod + " (pod)", "ephemeral storage used (B)", ar.gauge("B"), "-", fmt.Sprintf("%.0f (/stats/summary)", u64(e.UsedBytes)),
			"262144", ar.within(u64(e.UsedBytes), 256<<10),
		})
	}
}

// eventRequests reads the log records the gateway wrote to k.eventsDir,
// grouped by the OTLP export request in which they arrived: the gateway's
// logs pipeline has no batching, so its file exporter writes each request
// as one line. Only complete lines: the file exporter writes through a
// buffer that it flushes when full or every second, so the file may end in
// part of a line (a reader saw one: "expect \" after {, but found "); the
// rest comes with the next flush.
func (k *cluster) eventRequests(t *testing.T) [][]kubetest.Event {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(k.eventsDir, "events.json"))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	b = b[:bytes.LastIndexByte(b, '\n')+1]
	var out [][]kubetest.Event
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(sc.Bytes())
		require.NoError(t, err)
		out = append(out, logEvents(ld))
	}
	require.NoError(t, sc.Err())
	return out
}

// logEvents are ld's log records as kubetest.Events (an event record's
// name, or "" for a plain log record), in order.
func logEvents(ld plog.Logs) []kubetest.Event {
	var out []kubetest.Event
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			lrs := rl.ScopeLogs().At(j).LogRecords()
			for n := 0; n < lrs.Len(); n++ {
				lr := lrs.At(n)
				out = append(out, kubetest.Event{
					Name: lr.EventName(), Res: rl.Resource().Attributes().AsRaw(), Attr: lr.Attributes().AsRaw(),
					At: lr.Timestamp().AsTime(), Sev: lr.SeverityText(), Body: lr.Body().AsString(),
				})
			}
		}
	}
	return out
}

// workEvents is the records named name of the workloads' namespace among
// evs.
func workEvents(evs []kubetest.Event, name string) []kubetest.Event {
	var out []kubetest.Event
	for _, e := range evs {
		if e.Name == name && e.Res["k8s.namespace.name"] == workNS {
			out = append(out, e)
		}
	}
	return out
}

// oomEvent: the oom pod's container, OOM-killed once (restartCount 1, last
// state OOMKilled), is exactly one k8s.container.oom_kill event that
// names it, through the DaemonSet's logs pipeline (eventsPipeline) and the
// gateway, and its second instance exactly one k8s.container.restart
// event (restart count 1, the previous instance OOMKilled with exit code
// 137, WARN); no other container of the workloads has either.
//
// One event, not one record: the exporters deliver at least once, so the
// gateway may have received an export request twice (a request it took
// whose answer the DaemonSet's exporter did not get in time is sent
// again, whole). kubetest.DistinctEvents, given the records by request,
// drops the records of a whole request sent again and fails on a copy in
// any other place (one record twice in one request: the product emitted
// it twice) and on one event detected twice (same UID with another
// timestamp; another UID makes two events).
func (k *cluster) oomEvent(t *testing.T) {
	var all []kubetest.Event
	eventually(t, 2*time.Minute, "an oom_kill and a restart event of the oom pod at the gateway", func() error {
		all = nil
		for _, req := range k.eventRequests(t) {
			all = append(all, req...)
		}
		for _, name := range []string{"k8s.container.oom_kill", "k8s.container.restart"} {
			if len(workEvents(all, name)) == 0 {
				return fmt.Errorf("no %s record of namespace %s yet", name, workNS)
			}
		}
		return nil
	})
	// A second record would come within a scrape or an identity refresh.
	time.Sleep(12 * time.Second)
	reqs := k.eventRequests(t)
	for n, req := range reqs {
		for _, e := range req {
			if e.Res["k8s.namespace.name"] == workNS {
				t.Logf("oom-event: request %d of %d: %s at %s, resource %v, attributes %v", n, len(reqs), e.Name, e.At.Format(time.RFC3339Nano), e.Res, e.Attr)
			}
		}
	}
	d, copies, err := kubetest.DistinctEvents(reqs)
	require.NoError(t, err)
	if copies > 0 {
		t.Logf("oom-event: %d record(s) of a request delivered more than once (a whole request again); the collector's exporter log:\n%s",
			copies, k.collectorLog(t, "Exporting failed"))
	}
	ooms := workEvents(d, "k8s.container.oom_kill")
	restarts := workEvents(d, "k8s.container.restart")
	require.Len(t, ooms, 1, "k8s.container.oom_kill events of namespace %s", workNS)
	e := ooms[0]
	require.Equal(t, "oom", e.Res["k8s.pod.name"])
	require.Equal(t, "hog", e.Res["k8s.container.name"])
	require.NotEmpty(t, e.Res["container.id"])
	require.NotEmpty(t, e.Res["k8s.pod.uid"])

	require.Len(t, restarts, 1, "k8s.container.restart events of namespace %s", workNS)
	r := restarts[0]
	require.Equal(t, "oom", r.Res["k8s.pod.name"])
	require.Equal(t, "hog", r.Res["k8s.container.name"])
	require.Equal(t, e.Res["k8s.pod.uid"], r.Res["k8s.pod.uid"])
	require.NotEqual(t, e.Res["container.id"], r.Res["container.id"], "the restart record names the new instance")
	require.EqualValues(t, 1, r.Res["k8s.container.restart_count"])
	require.Equal(t, "OOMKilled", r.Attr["k8s.container.status.last_terminated_reason"])
	require.EqualValues(t, 137, r.Attr["k8s.container.status.last_terminated_exit_code"])
	require.Equal(t, "WARN", r.Sev)
}

// collectorLog is the lines of the DaemonSet collector's log (the
// kubelet's file of its container on the node) that contain substr.
func (k *cluster) collectorLog(t *testing.T, substr string) string {
	t.Helper()
	files, err := filepath.Glob(k.node.Path(fmt.Sprintf("/var/log/pods/%s_%s-*/*/*.log", collectorNS, dsName)))
	require.NoError(t, err)
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, substr) {
				out = append(out, l)
			}
		}
	}
	return strings.Join(out, "\n")
}

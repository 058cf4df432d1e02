// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/containerstats/containerstatsreceiver"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/node"
	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/containerdtest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/criotest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/kubetest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
	"github.com/containerstats/containerstatsreceiver/internal/testing/sidebyside"
	"github.com/containerstats/containerstatsreceiver/receiver/logs"
)

// TestCRIO: the receiver on a real CRI-O (make crio-bins: CRI-O 1.34,
// Debian's conmon, make containerd-bins' runc; criotest), cgroupfs
// manager, conmon in the pod's cgroup, with drop_infra_ctr on (pods with
// no infra container, CRI-O's default) and off (a pause process and
// cgroup per pod). Each: two workloads of distinct CPU time and working
// set in one pod, a container OOM-killed and restarted (attempt 1) in
// another, the receiver's metrics and events (the public factory, root
// path /) and its log files (receiver/logs on the pods' log directory).
// Asserted: one series per container, under the ID CRI-O gave it and no
// other (no sandbox, no conmon, no exited container); every identity
// attribute equal to CRI-O's answers (container.runtime.name cri-o);
// CPU time and working set equal to the kernel's files of each
// container's cgroup and to no other's (sidebyside); the OOM kill and the
// restart once each; the restarted container's log records carry the
// resource of its metrics. The cgroup shapes seen are logged.
func TestCRIO(t *testing.T) {
	machine.Lock(t)
	need(t, criotest.Available(criotest.DefaultBinDir(), containerdtest.Stacks()[0].BinDir))
	wl := workloadBin(t)
	for _, drop := range []bool{true, false} {
		name := map[bool]string{true: "drop_infra_ctr", false: "infra_ctr"}[drop]
		t.Run(name, func(t *testing.T) { testCRIO(t, drop, wl) })
	}
}

func testCRIO(t *testing.T, drop bool, wl string) {
	c := criotest.Start(t, criotest.Options{DropInfra: drop, ImageFiles: map[string]string{"bin/workload": wl}})
	c.LogRoot = t.TempDir()
	ctx := context.Background()
	nodeName := fmt.Sprintf("e2e-crio-%d", os.Getpid())

	// The receiver first: the OOM kill and the restart happen while it
	// scrapes.
	cfg := containerstatsreceiver.NewFactory().CreateDefaultConfig().(*containerstatsreceiver.Config)
	cfg.RootPath = "/"
	cfg.NodeName = nodeName
	cfg.CollectionInterval = 500 * time.Millisecond
	cfg.InitialDelay = 0
	cfg.Runtime.CRIEnabled, cfg.Runtime.CRIEndpoint = true, c.Socket
	cfg.Runtime.ContainerdEnabled, cfg.Runtime.DockerEnabled = false, false
	cfg.GPU.Enabled = false
	cfg.PodLabels = true
	cfg.Logs.Enabled = false
	require.True(t, cfg.Events.Enabled)
	require.NoError(t, cfg.Validate())
	f := containerstatsreceiver.NewFactory()
	set := receivertest.NewNopSettings(metadata.Type)
	// The receiver's errors: none may name an entity of this test (other
	// containers of the machine are not its business).
	logCore, logged := observer.New(zapcore.ErrorLevel)
	set.Logger = zap.New(logCore)
	msink, esink := new(consumertest.MetricsSink), new(consumertest.LogsSink)
	mr, err := f.CreateMetrics(ctx, set, cfg, msink)
	require.NoError(t, err)
	er, err := f.CreateLogs(ctx, set, cfg, esink)
	require.NoError(t, err)
	require.NoError(t, mr.Start(ctx, componenttest.NewNopHost()))
	t.Cleanup(func() { assert.NoError(t, mr.Shutdown(context.Background())) })
	require.NoError(t, er.Start(ctx, componenttest.NewNopHost()))
	t.Cleanup(func() { assert.NoError(t, er.Shutdown(context.Background())) })

	podLabels := map[string]map[string]string{"web-0": {"app": "web", "tier": "front"}}
	web := c.RunPod(t, "web-0", "shop", "burstable", podLabels["web-0"])
	small := web.StartContainer(t, containerdtest.ContainerSpec{Name: "small", Command: mixSmall})
	large := web.StartContainer(t, containerdtest.ContainerSpec{Name: "large", Attempt: 2, Command: mixLarge})
	oom := c.RunPod(t, "oom", "shop", "burstable", nil)
	memLimit := &runtimeapi.LinuxContainerResources{MemoryLimitInBytes: 32 << 20, CpuShares: 2}
	hog0 := oom.StartContainer(t, containerdtest.ContainerSpec{
		Name: "hog", Resources: memLimit,
		Command: []string{"/bin/busybox", "dd", "if=/dev/zero", "of=/dev/null", "bs=64M", "count=1"},
	})
	eventually(t, 30*time.Second, "hog (attempt 0) OOM-killed", func() error {
		st := crioStatus(t, c, hog0)
		if st.GetState() != runtimeapi.ContainerState_CONTAINER_EXITED {
			return fmt.Errorf("state %s", st.GetState())
		}
		require.EqualValues(t, 137, st.GetExitCode(), "killed (SIGKILL)")
		require.Equal(t, "OOMKilled", st.GetReason(), "CRI-O's reason")
		return nil
	})
	// Restarted as the kubelet restarts it: attempt 1, same sandbox. It
	// logs two lines, one per stream.
	hog := oom.StartContainer(t, containerdtest.ContainerSpec{
		Name: "hog", Attempt: 1, Resources: memLimit,
		Command: []string{"/bin/sh", "-c", "echo hog up; echo hog err >&2; exec sleep 3600"},
	})
	ours := []string{small, large, hog}
	own := append([]string{web.UID, web.ID, oom.UID, oom.ID, hog0}, ours...)

	// The cgroup shapes CRI-O made: each container's, each conmon's, the
	// pods' infra containers'.
	mixes := map[string]mixed{}
	shapes := map[string]string{}
	short := strings.NewReplacer(web.UID, "<uid>", oom.UID, "<uid>", web.ID, "<sandbox>", oom.ID, "<sandbox>", small, "<id>", large, "<id>", hog, "<id>", hog0, "<id>")
	for _, id := range ours {
		pid := crioPID(t, c, id)
		cg := memoryCgroup(t, pid)
		shapes["container: "+short.Replace(cg)] = ""
		if id != hog {
			mixes[id] = mixed{pid: pid, cgroup: cg}
		}
		// No ID of ours beyond the container's own in its cgroup path.
		assert.Equal(t, filepath.Join(map[bool]string{true: web.Parent, false: oom.Parent}[id != hog], "crio-"+id), cg, "container %s's cgroup", id)
	}
	for _, pid := range c.Conmons() {
		shapes["conmon: "+short.Replace(memoryCgroup(t, pid))] = ""
	}
	// Every directory under the pods' cgroups, with its processes: the
	// kernel's view, whoever made them (with drop_infra_ctr CRI-O still
	// makes the sandbox's crio-<sandbox>, with no process in it).
	infraProcs := 0
	for _, p := range []*criotest.Pod{web, oom} {
		dir := filepath.Join(memoryRoot(), p.Parent)
		entries, rdErr := os.ReadDir(dir)
		require.NoError(t, rdErr)
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			procs, _ := os.ReadFile(filepath.Join(dir, e.Name(), "cgroup.procs"))
			n := len(strings.Fields(string(procs)))
			shapes[fmt.Sprintf("directory: %s (%s)", short.Replace(filepath.Join(p.Parent, e.Name())), map[bool]string{true: "processes", false: "no process"}[n > 0])] = ""
			if e.Name() == "crio-"+p.ID {
				infraProcs += n
			}
		}
	}
	if drop {
		assert.Zero(t, infraProcs, "drop_infra_ctr: no infra process")
	} else {
		assert.Positive(t, infraProcs, "an infra process per pod")
	}
	var shapeList []string
	for s := range shapes {
		shapeList = append(shapeList, s)
	}
	sort.Strings(shapeList)
	t.Logf("cgroups of real CRI-O %s (cgroupfs, conmon_cgroup pod, drop_infra_ctr %t):\n\t%s", c.Version, drop, strings.Join(shapeList, "\n\t"))

	mixSettled(t, map[string]mixed{"small": mixes[small], "large": mixes[large]})

	// A scrape after the figures settled, then the kernel's files read
	// around it: ours is bracketed by the two reads.
	var last pmetric.Metrics
	var pts []point // last's number data points
	n0 := len(msink.AllMetrics())
	eventually(t, 30*time.Second, "a scrape with every container of ours, after the workloads settled", func() error {
		all := msink.AllMetrics()
		if len(all) <= n0+1 {
			return fmt.Errorf("%d scrapes since", len(all)-n0)
		}
		last = all[len(all)-1]
		pts = metricPoints(last)
		for _, id := range ours {
			if len(byContainer(pts, id)) == 0 {
				return fmt.Errorf("container %s not reported", id)
			}
		}
		return nil
	})

	// One series per container, under CRI-O's IDs: nothing else of our
	// pods (no sandbox, no conmon, no exited attempt 0).
	seen := map[string]int{}
	for i := 0; i < last.ResourceMetrics().Len(); i++ {
		a := last.ResourceMetrics().At(i).Resource().Attributes().AsRaw()
		uid, _ := a["k8s.pod.uid"].(string)
		id, _ := a["container.id"].(string)
		if (uid == web.UID || uid == oom.UID) && id != "" {
			seen[id]++
		}
		for _, x := range []string{web.ID, oom.ID, hog0} {
			assert.NotEqual(t, x, id, "a series of the sandbox or the exited container %s", x)
		}
	}
	assert.Equal(t, map[string]int{small: 1, large: 1, hog: 1}, seen, "our pods' container series, by container.id")

	// Identity: every attribute from CRI-O's own answers.
	for _, id := range ours {
		st := crioStatus(t, c, id)
		list, listErr := c.CRI().ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{Id: id}})
		require.NoError(t, listErr)
		require.Len(t, list.GetContainers(), 1)
		ps, psErr := c.CRI().PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: list.GetContainers()[0].GetPodSandboxId()})
		require.NoError(t, psErr)
		pm := ps.GetStatus().GetMetadata()
		imgName, imgTag := identity.SplitImage(st.GetImage().GetImage())
		require.NotEmpty(t, imgName)
		want := map[string]any{
			"container.id": id, "container.name": st.GetMetadata().GetName(),
			"container.image.name": imgName, "container.image.tags": []any{imgTag},
			"container.runtime.name": "cri-o",
			"k8s.container.name":     st.GetMetadata().GetName(), "k8s.container.restart_count": int64(st.GetMetadata().GetAttempt()),
			"k8s.pod.uid": pm.GetUid(), "k8s.pod.name": pm.GetName(), "k8s.namespace.name": pm.GetNamespace(),
			"k8s.pod.qos_class": "burstable", "k8s.node.name": nodeName,
		}
		// The pod's labels are the ones this test gave it (CRI-O adds
		// its own to the sandbox's: io.kubernetes.container.name=POD).
		for k, v := range podLabels[pm.GetName()] {
			want["k8s.pod.label."+k] = v
		}
		res := byContainer(pts, id)[0].resource
		assert.Equal(t, want, res, "container %s/%s", pm.GetName(), st.GetMetadata().GetName())
		if id == small {
			t.Logf("one container's identity on CRI-O: %v", res)
		}
	}

	// CPU time and working set against the kernel's files.
	var rows []sidebyside.Row
	for _, w := range []struct{ name, id string }{{"small", small}, {"large", large}} {
		cpu, ws, kErr := kernelFigures(mixes[w.id].cgroup)
		require.NoError(t, kErr)
		mine := byContainer(pts, w.id)
		rows = append(rows,
			sidebyside.Row{Quantity: "container.cpu.time", Entity: w.name, Ref: cpu, Ours: pointSum(t, mine, "container.cpu.time"), Tol: 0.02, Unit: "s"},
			sidebyside.Row{Quantity: "container.memory.working_set", Entity: w.name, Ref: ws, Ours: pointSum(t, mine, "container.memory.working_set"), Tol: hostWSTol(), Unit: "B"})
		// The container's conmon, whose cgroup carries the container's
		// ID (crio-conmon-<id>): a collector that took it for the
		// container would report these.
		mcpu, mws, kErr := kernelFigures(filepath.Join(web.Parent, "crio-conmon-"+w.id))
		require.NoError(t, kErr, "%s's conmon cgroup", w.name)
		rows = append(rows,
			sidebyside.Row{Quantity: "container.cpu.time", Entity: w.name + "'s conmon", Ref: mcpu, Wrong: "its conmon's cgroup, crio-conmon-<id>", Unit: "s"},
			sidebyside.Row{Quantity: "container.memory.working_set", Entity: w.name + "'s conmon", Ref: mws, Wrong: "its conmon's cgroup, crio-conmon-<id>", Unit: "B"})
	}
	sidebyside.Require(t, "TestCRIO: ours against the kernel's files of CRI-O's containers", rows, sidebyside.Options{Apart: 4, MinRows: 4})

	// Events: the OOM kill and the restart, once each.
	time.Sleep(3 * time.Second) // a second record would come within a few scrapes
	var oomKills, restarts []kubetest.Event
	for _, ld := range esink.AllLogs() {
		for _, e := range logEvents(ld) {
			if e.Res["k8s.pod.uid"] != oom.UID {
				continue
			}
			switch e.Name {
			case "k8s.container.oom_kill":
				oomKills = append(oomKills, e)
			case "k8s.container.restart":
				restarts = append(restarts, e)
			}
		}
	}
	t.Logf("events of the oom pod: oom_kill %+v; restart %+v", oomKills, restarts)
	require.Len(t, oomKills, 1, "k8s.container.oom_kill records of the oom pod")
	require.Len(t, restarts, 1, "k8s.container.restart records of the oom pod")
	r := restarts[0]
	assert.Equal(t, hog, r.Res["container.id"], "the restart names the new instance")
	assert.EqualValues(t, 1, r.Res["k8s.container.restart_count"])
	assert.Equal(t, "OOMKilled", r.Attr["k8s.container.status.last_terminated_reason"])
	assert.EqualValues(t, 137, r.Attr["k8s.container.status.last_terminated_exit_code"])
	assert.Equal(t, "hog", oomKills[0].Res["k8s.container.name"])

	// Log records: conmon's CRI log file of the restarted hog, with the
	// resource of its metrics.
	want := byContainer(pts, hog)[0].resource
	lsink := new(consumertest.LogsSink)
	logNode := node.New(node.Config{
		Host:     node.HostConfig{Root: c.LogRoot, Runtimes: node.Runtimes{CRI: true, CRIEndpoint: c.Socket}},
		Identity: node.IdentityConfig{Timeout: time.Second, RefreshInterval: 200 * time.Millisecond, MinRefresh: 50 * time.Millisecond},
	}, set.Logger)
	cgNode := node.New(node.Config{Host: node.HostConfig{Root: "/"}}, set.Logger)
	lr, err := logs.New(ctx, set, logs.Options{
		Host: logNode.Host, NodeName: nodeName, ResourceAttributes: cfg.ResourceAttributes,
		Identity: logNode.Identity, Cgroups: cgNode.Host.Cgroups(), PodLabels: true,
		StartAt: "beginning", PollInterval: 20 * time.Millisecond,
	}, lsink)
	require.NoError(t, err)
	require.NoError(t, lr.Start(ctx, componenttest.NewNopHost()))
	t.Cleanup(func() { assert.NoError(t, lr.Shutdown(context.Background())) })
	streams := map[string]map[string]any{}
	eventually(t, 20*time.Second, "hog's stdout and stderr lines as log records", func() error {
		for _, ld := range lsink.AllLogs() {
			for _, rec := range logEvents(ld) {
				if rec.Body == "hog up" || rec.Body == "hog err" {
					stream, _ := rec.Attr["log.iostream"].(string)
					streams[stream] = rec.Res
				}
			}
		}
		if len(streams) < 2 {
			return fmt.Errorf("streams so far: %v", streams)
		}
		return nil
	})
	for s, res := range streams {
		assert.Equal(t, want, res, "%s record's resource equals the metrics' resource", s)
	}
	t.Logf("the receiver's error lines during the test: %d", logged.Len())
	for _, e := range logged.All() {
		line := e.Message + " " + fmt.Sprint(e.ContextMap())
		for _, x := range own {
			assert.NotContains(t, line, x, "the receiver logged an error about this test's %s", x)
		}
	}
}

func crioStatus(t *testing.T, c *criotest.CRIO, id string) *runtimeapi.ContainerStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := c.CRI().ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	require.NoError(t, err)
	return st.GetStatus()
}

// crioPID is a container's init process, from CRI-O's verbose status.
func crioPID(t *testing.T, c *criotest.CRIO, id string) int {
	t.Helper()
	st, err := c.CRI().ContainerStatus(context.Background(), &runtimeapi.ContainerStatusRequest{ContainerId: id, Verbose: true})
	require.NoError(t, err)
	pid := infoPID(t, st.GetInfo()["info"])
	require.Positive(t, pid, "container %s's pid in %s", id, st.GetInfo()["info"])
	return pid
}

// infoPID is the "pid" of a CRI verbose info document.
func infoPID(t *testing.T, info string) int {
	t.Helper()
	var v struct {
		PID int `json:"pid"`
	}
	require.NoError(t, json.Unmarshal([]byte(info), &v), info)
	return v.PID
}

// memoryRoot is the memory hierarchy (v1) or the unified one (v2).
func memoryRoot() string {
	if cgrouptest.V2() {
		return cgrouptest.Base
	}
	return filepath.Join(cgrouptest.Base, "memory")
}

// memoryCgroup is process pid's cgroup in the memory hierarchy (v1) or
// the unified one (v2).
func memoryCgroup(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cgroup"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if cgrouptest.V2() && f[0] == "0" {
			return f[2]
		}
		for _, ctl := range strings.Split(f[1], ",") {
			if ctl == "memory" {
				return f[2]
			}
		}
	}
	t.Fatalf("process %d: no memory cgroup in %s", pid, b)
	return ""
}

// pointSum is the sum of metric's points among pts (CPU time has one
// per mode where the modes are on); at least one.
func pointSum(t *testing.T, pts []point, metric string) float64 {
	t.Helper()
	var sum float64
	n := 0
	for _, p := range pts {
		if p.metric == metric {
			sum += p.value
			n++
		}
	}
	require.Positive(t, n, "%s has data points", metric)
	return sum
}

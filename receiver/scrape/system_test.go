// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/procfs"
)

const sysAttr = "k8s.node.system_container.name"

// sysPoint returns the point of metric on system container name's
// resource.
func sysPoint(m pmetric.Metrics, name, metric string) (pmetric.NumberDataPoint, bool) {
	var out pmetric.NumberDataPoint
	found := false
	eachMetric(m, sysAttr, name, func(x pmetric.Metric) {
		if x.Name() != metric {
			return
		}
		var dps pmetric.NumberDataPointSlice
		if x.Type() == pmetric.MetricTypeSum {
			dps = x.Sum().DataPoints()
		} else {
			dps = x.Gauge().DataPoints()
		}
		out, found = dps.At(0), true
	})
	return out, found
}

// sysResources returns the system container names a scrape reported,
// with their resources' attributes.
func sysResources(m pmetric.Metrics) map[string]map[string]any {
	out := map[string]map[string]any{}
	forEachResource(m, func(rm pmetric.ResourceMetrics) {
		if v, ok := rm.Resource().Attributes().Get(sysAttr); ok {
			out[v.Str()] = rm.Resource().Attributes().AsRaw()
		}
	})
	return out
}

// TestSystemContainersFixtures: in every layout the kubelet's and the
// runtime's cgroups are found from their processes and the pods' root
// from discovery (a Docker/Podman host, v2-standalone, has the runtime's
// only); each is its own resource with the node's name, and the
// values are the kubelet's quantities of that cgroup: CPU time = the total
// in seconds, memory usage = usage_in_bytes / memory.current, working set
// = usage - (total_)inactive_file. The first scrape has no CPU usage.
func TestSystemContainersFixtures(t *testing.T) {
	type want struct {
		rel       string // the cgroup detection finds
		cpuNs     uint64 // its total CPU time in the fixture
		usage, ws int64
	}
	cases := map[string]map[string]want{
		"v2-systemd": {
			"kubelet": {rel: "/system.slice/kubelet.service", cpuNs: 613700411_000, usage: 287354880, ws: 287354880 - 40964096},
			"runtime": {rel: "/system.slice/containerd.service", cpuNs: 1746005238_000, usage: 1837105152, ws: 1837105152 - 7266304},
		},
		"v2-cgroupfs": {
			"kubelet": {rel: "/openrc.kubelet", cpuNs: 734500421_000, usage: 301989888, ws: 301989888 - 44052480},
			"runtime": {rel: "/openrc.containerd", cpuNs: 1283900431_000, usage: 512753664, ws: 512753664 - 75001856},
		},
		"v1-systemd": {
			"kubelet": {rel: "/system.slice/kubelet.service", cpuNs: 521300000817, usage: 311427072, ws: 311427072 - 43585536},
			"runtime": {rel: "/system.slice/crio.service", cpuNs: 1009000007063, usage: 1063256064, ws: 1063256064 - 4292608},
		},
		"v1-cgroupfs": {
			"kubelet": {rel: "/system/kubelet", cpuNs: 588800000827, usage: 325058560, ws: 325058560 - 45547520},
			"runtime": {rel: "/system/containerd", cpuNs: 1644200000837, usage: 694157312, ws: 694157312 - 100663296},
		},
		"hybrid": {
			"kubelet": {rel: "/system.slice/kubelet.service", cpuNs: 547100000847, usage: 318767104, ws: 318767104 - 44564480},
			// dockerd runs too (PID 7591, lower): containerd is preferred.
			"runtime": {rel: "/system.slice/containerd.service", cpuNs: 2852000019964, usage: 2995781632, ws: 2995781632 - 11841536},
		},
		// A Docker/Podman host: no kubelet, no pods' root. dockerd runs
		// too (PID 8900, lower): containerd is preferred.
		"v2-standalone": {
			"runtime": {rel: "/system.slice/containerd.service", cpuNs: 1746005238_000, usage: 1837105152, ws: 1837105152 - 7266304},
		},
	}
	for _, lt := range layouts {
		t.Run(lt.name, func(t *testing.T) {
			root, clk := copyFixture(t, lt.name), &fakeClock{now: t0}
			s := startScraper(t, root, lt.standalone, clk, func(*Options) {})
			m, err := s.Scrape(context.Background())
			require.NoError(t, err)
			res := sysResources(m)
			l, err := cgroupfs.Detect(root)
			require.NoError(t, err)
			tree, err := l.Discover(false)
			require.NoError(t, err)
			pods := tree.Kubepods != ""
			wantRes := len(cases[lt.name])
			if pods {
				wantRes++
			}
			assert.Len(t, res, wantRes, "kubelet, runtime, pods (those the node has); misc only when configured: %v", res)
			for name, w := range cases[lt.name] {
				require.Contains(t, res, name)
				assert.Equal(t, map[string]any{sysAttr: name, "k8s.node.name": "node-1"}, res[name])
				assert.Equal(t, w.rel, s.sys.found[map[string]int{"kubelet": sysKubelet, "runtime": sysRuntime}[name]].rel)
				p, ok := sysPoint(m, name, "k8s.node.system_container.cpu.time")
				require.True(t, ok, name)
				assert.InDelta(t, float64(w.cpuNs)/1e9, p.DoubleValue(), 1e-9, name)
				p, ok = sysPoint(m, name, "k8s.node.system_container.memory.usage")
				require.True(t, ok, name)
				assert.Equal(t, w.usage, p.IntValue(), name)
				p, ok = sysPoint(m, name, "k8s.node.system_container.memory.working_set")
				require.True(t, ok, name)
				assert.Equal(t, w.ws, p.IntValue(), name)
				_, ok = sysPoint(m, name, "k8s.node.system_container.cpu.usage")
				assert.False(t, ok, "%s: no rate on the first scrape", name)
			}
			if pods {
				require.Contains(t, res, "pods")
				assert.Equal(t, 3, dataPoints(m, sysAttr, "pods"), "time, memory usage, working set of the pods' root")
			} else {
				assert.NotContains(t, res, "pods", "no kubepods tree, no pods' root")
				assert.NotContains(t, res, "kubelet", "no kubelet process")
			}

			clk.now = t0.Add(10 * time.Second)
			bumpCPU(t, root)
			m, err = s.Scrape(context.Background())
			require.NoError(t, err)
			for name := range cases[lt.name] {
				p, ok := sysPoint(m, name, "k8s.node.system_container.cpu.usage")
				require.True(t, ok, name)
				assert.Positive(t, p.DoubleValue(), name)
				assert.Equal(t, 4, dataPoints(m, sysAttr, name), name)
			}
		})
	}
}

// sysRoot is a v2-systemd copy whose processes are replaced by procs
// (pid -> comm, cgroup path).
func sysRoot(t *testing.T, procs map[int][2]string) string {
	t.Helper()
	root := copyFixture(t, "v2-systemd")
	for _, pid := range []string{"1", "2900", "2901", "2902"} {
		for _, f := range []string{"comm", "cgroup"} {
			require.NoError(t, os.Remove(filepath.Join(root, "proc", pid, f)))
		}
	}
	for pid, p := range procs {
		writeProc(t, root, pid, p[0], "0::"+p[1]+"\n")
	}
	return root
}

func writeProc(t *testing.T, root string, pid int, comm, cgroup string) {
	t.Helper()
	dir := filepath.Join(root, "proc", strconv.Itoa(pid))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "comm"), []byte(comm+"\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cgroup"), []byte(cgroup), 0o600))
}

// TestSystemContainerDetectionPicks: exact process names (a shim is not
// the runtime, "kubelet-x" is not the kubelet), containerd before dockerd
// whatever their PIDs, the lowest PID of several kubelets, and a process
// in the root cgroup is no system container (logged once).
func TestSystemContainerDetectionPicks(t *testing.T) {
	root := sysRoot(t, map[int][2]string{
		10: {"containerd-shim", "/system.slice"},
		11: {"dockerd", "/system.slice"},
		12: {"kubelet-x", "/system.slice"},
		20: {"kubelet", "/system.slice/kubelet.service"},
		21: {"kubelet", "/system.slice"},
		30: {"containerd", "/system.slice/containerd.service"},
	})
	s := startScraper(t, root, false, &fakeClock{now: t0}, func(*Options) {})
	assert.Equal(t, sysProc{pid: 20, rel: "/system.slice/kubelet.service"}, s.sys.found[sysKubelet])
	assert.Equal(t, sysProc{pid: 30, rel: "/system.slice/containerd.service"}, s.sys.found[sysRuntime])

	root = sysRoot(t, map[int][2]string{20: {"kubelet", "/"}, 30: {"crio", "/system.slice/containerd.service"}})
	core, logs := observer.New(zapcore.InfoLevel)
	clk := &fakeClock{now: t0}
	s = scraperWith(t, root, defaultMBC(), clk, zap.New(core))
	for i := range 3 {
		clk.now = t0.Add(time.Duration(i) * 2 * sysDetectEvery) // detection each time
		m, err := s.Scrape(context.Background())
		require.NoError(t, err)
		res := sysResources(m)
		assert.NotContains(t, res, "kubelet", "the root cgroup is the node's")
		assert.Contains(t, res, "runtime", "crio")
	}
	assert.Equal(t, 1, logs.FilterMessageSnippet("root cgroup").Len(), "logged once")
}

// TestSystemContainerNoScanPerScrape: the /proc scan runs at Start; later
// scrapes within sysDetectEvery read no comm or /proc/<pid>/cgroup file,
// and a detection after it only checks the processes found before.
func TestSystemContainerNoScanPerScrape(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	var read []string
	clk := &fakeClock{now: t0}
	s := startScraper(t, root, false, clk, func(o *Options) {
		o.TraceRead = func(p string) { read = append(read, p) }
	})
	procRead := func() (n int, list bool) {
		for _, p := range read {
			if strings.HasSuffix(p, "/comm") || strings.HasSuffix(p, "/cgroup") {
				n++
			}
			list = list || p == filepath.Join(root, "proc")+"/"
		}
		return n, list
	}
	n, list := procRead()
	assert.True(t, list, "Start lists /proc")
	assert.GreaterOrEqual(t, n, 4, "and reads the processes' comm and the two cgroup files")
	for i := range 5 {
		read = nil
		clk.now = t0.Add(time.Duration(i) * 10 * time.Second)
		_, err := s.Scrape(context.Background())
		require.NoError(t, err)
		n, list = procRead()
		assert.Zero(t, n, "scrape %d", i)
		assert.False(t, list)
	}
	read = nil
	clk.now = t0.Add(sysDetectEvery + time.Second)
	_, err := s.Scrape(context.Background())
	require.NoError(t, err)
	n, list = procRead()
	assert.Equal(t, 4, n, "the two processes found before: comm and cgroup each")
	assert.False(t, list, "no listing while they run")
}

// TestSystemContainerFollowsRestart: the kubelet restarts into another
// cgroup; the next detection (after sysDetectEvery) follows it, and its
// series starts again: new start time, no rate across the two cgroups.
func TestSystemContainerFollowsRestart(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	clk := &fakeClock{now: t0}
	s := startScraper(t, root, false, clk, func(*Options) {})
	_, err := s.Scrape(context.Background())
	require.NoError(t, err)

	newDir := filepath.Join(root, "sys/fs/cgroup/system.slice/kubelet-2.service")
	require.NoError(t, os.MkdirAll(newDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(newDir, "cpu.stat"), []byte("usage_usec 5000000\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(newDir, "memory.current"), []byte("7000000\n"), 0o600))
	require.NoError(t, os.RemoveAll(filepath.Join(root, "proc", "2901")))
	writeProc(t, root, 2950, "kubelet", "0::/system.slice/kubelet-2.service\n")

	clk.now = t0.Add(10 * time.Second)
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	p, ok := sysPoint(m, "kubelet", "k8s.node.system_container.memory.usage")
	require.True(t, ok)
	assert.EqualValues(t, 287354880, p.IntValue(), "before the next detection: the old cgroup, still there")

	clk.now = t0.Add(sysDetectEvery + 20*time.Second)
	m, err = s.Scrape(context.Background())
	require.NoError(t, err)
	assert.Equal(t, sysProc{pid: 2950, rel: "/system.slice/kubelet-2.service"}, s.sys.found[sysKubelet])
	p, ok = sysPoint(m, "kubelet", "k8s.node.system_container.memory.usage")
	require.True(t, ok)
	assert.EqualValues(t, 7000000, p.IntValue())
	p, ok = sysPoint(m, "kubelet", "k8s.node.system_container.cpu.time")
	require.True(t, ok)
	assert.InDelta(t, 5.0, p.DoubleValue(), 1e-9)
	assert.Equal(t, pcommon.NewTimestampFromTime(clk.now), p.StartTimestamp(), "a new series")
	_, ok = sysPoint(m, "kubelet", "k8s.node.system_container.cpu.usage")
	assert.False(t, ok, "no rate across two cgroups")
	_, ok = sysPoint(m, "kubelet", "k8s.node.system_container.memory.working_set")
	assert.False(t, ok, "no memory.stat: no working set, not a 0")
}

// TestSystemContainerVanished: a system container's cgroup removed
// between scrapes costs its points in a partial error naming it, the
// other system containers and the node are reported, and the next scrape
// detects again (the process's cgroup no longer exists: nothing reported,
// no error).
func TestSystemContainerVanished(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	clk := &fakeClock{now: t0}
	s := startScraper(t, root, false, clk, func(*Options) {})
	_, err := s.Scrape(context.Background())
	require.NoError(t, err)
	dir := filepath.Join(root, "sys/fs/cgroup/system.slice/kubelet.service")
	require.NoError(t, os.RemoveAll(dir))

	clk.now = t0.Add(10 * time.Second)
	m, err := s.Scrape(context.Background())
	var pe scrapererror.PartialScrapeError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 4, pe.Failed, "time, usage, memory usage, working set")
	assert.Equal(t, s.entityPoints(kindSystem, nil), pe.Failed)
	assert.Contains(t, err.Error(), "system container kubelet (/system.slice/kubelet.service): "+dir+": "+cgroupfs.ErrVanished.Error())
	res := sysResources(m)
	assert.NotContains(t, res, "kubelet")
	assert.Contains(t, res, "runtime")
	assert.True(t, s.sys.stale)

	clk.now = t0.Add(20 * time.Second)
	m, err = s.Scrape(context.Background())
	require.NoError(t, err, "detected again: the kubelet's cgroup does not exist, nothing to report")
	assert.NotContains(t, sysResources(m), "kubelet")
	assert.Equal(t, sysProc{pid: 2901}, s.sys.found[sysKubelet])
}

// TestSystemContainersConfigured: configured cgroups are read without
// looking at /proc, misc only when set; a configured cgroup that does not
// exist is a partial error naming it each scrape.
func TestSystemContainersConfigured(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	var read []string
	s := startScraper(t, root, false, &fakeClock{now: t0}, func(o *Options) {
		o.SystemContainers = SystemCgroups{Kubelet: "/system.slice/containerd.service", Runtime: "/system.slice/kubelet.service", Misc: "/system.slice"}
		o.TraceRead = func(p string) { read = append(read, p) }
	})
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	for _, p := range read {
		assert.False(t, strings.HasSuffix(p, "/comm") || strings.HasSuffix(p, "/cgroup") || p == filepath.Join(root, "proc")+"/",
			"no process looked at with every name configured: %s", p)
	}
	for name, usage := range map[string]int64{"kubelet": 1837105152, "runtime": 287354880, "misc": 1776287744} {
		p, ok := sysPoint(m, name, "k8s.node.system_container.memory.usage")
		require.True(t, ok, name)
		assert.Equal(t, usage, p.IntValue(), name)
	}

	s = startScraper(t, root, false, &fakeClock{now: t0}, func(o *Options) {
		o.SystemContainers = SystemCgroups{Misc: "/system.slice/nothing.service"}
	})
	for range 2 {
		m, err = s.Scrape(context.Background())
		var pe scrapererror.PartialScrapeError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, 4, pe.Failed)
		assert.Contains(t, err.Error(), "system container misc (/system.slice/nothing.service)")
		assert.Len(t, sysResources(m), 3, "kubelet, runtime and pods still reported")
	}
}

// TestSystemContainersOff: no system container without its metrics, or
// with node series off; nothing of /proc is read then.
func TestSystemContainersOff(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	for name, mod := range map[string]func(*Options){
		"metrics off": func(o *Options) {
			m := &o.MetricsBuilderConfig.Metrics
			m.K8sNodeSystemContainerCPUTime.Enabled, m.K8sNodeSystemContainerCPUUsage.Enabled = false, false
			m.K8sNodeSystemContainerMemoryUsage.Enabled, m.K8sNodeSystemContainerMemoryWorkingSet.Enabled = false, false
		},
		"node series off": func(o *Options) { o.NoNodeSeries = true },
	} {
		t.Run(name, func(t *testing.T) {
			var read []string
			s := startScraper(t, root, false, &fakeClock{now: t0}, func(o *Options) {
				mod(o)
				o.TraceRead = func(p string) { read = append(read, p) }
			})
			assert.Nil(t, s.sys)
			m, err := s.Scrape(context.Background())
			require.NoError(t, err)
			assert.Empty(t, sysResources(m))
			for _, p := range read {
				assert.False(t, strings.HasSuffix(p, "/comm"), p)
			}
		})
	}
}

// TestProcessCgroup: which /proc/<pid>/cgroup line is the process's
// cgroup on each layout, and what is refused.
func TestProcessCgroup(t *testing.T) {
	v2 := &cgroupfs.Layout{Mode: cgroupfs.ModeV2, Unified: t.TempDir()}
	v1 := &cgroupfs.Layout{Mode: cgroupfs.ModeV1, V1: map[string]string{"cpuacct": t.TempDir(), "cpu": "x", "memory": t.TempDir()}}
	hybrid := &cgroupfs.Layout{Mode: cgroupfs.ModeHybrid, Unified: t.TempDir(), V1: v1.V1}
	for _, d := range []string{v2.Unified, v1.V1["cpuacct"], v1.V1["memory"]} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, "system.slice", "kubelet.service"), 0o755))
	}
	lines := func(s string) []procfs.CgroupLine {
		var out []procfs.CgroupLine
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			id, rest, _ := strings.Cut(l, ":")
			ctrls, p, _ := strings.Cut(rest, ":")
			cl := procfs.CgroupLine{Path: p}
			if id != "0" {
				cl.HierarchyID = 1
			}
			if ctrls != "" {
				cl.Controllers = strings.Split(ctrls, ",")
			}
			out = append(out, cl)
		}
		return out
	}
	const k = "/system.slice/kubelet.service"
	for _, c := range []struct {
		name   string
		l      *cgroupfs.Layout
		lines  string
		want   string
		errHas string
	}{
		{"v2", v2, "0::" + k, k, ""},
		{"v2 root", v2, "0::/", "/", ""},
		{"v2 namespace-relative", v2, "0::/../../.." + k, k, ""},
		{"v2 no unified line", v2, "1:name=systemd:" + k, "", `no "0::"`},
		{"v2 missing directory", v2, "0::/system.slice/gone.service", "", "no directory"},
		{"v1", v1, "5:memory:" + k + "\n4:cpu,cpuacct:" + k + "\n1:name=systemd:/other", k, ""},
		{"v1 cpu and memory differ", v1, "5:memory:/system.slice\n4:cpu,cpuacct:" + k, "", "differ"},
		{"v1 no memory line", v1, "4:cpu,cpuacct:" + k, "", "no line of the memory controller"},
		{"hybrid takes the v1 controllers", hybrid, "0::/elsewhere\n5:memory:" + k + "\n4:cpu,cpuacct:" + k, k, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := processCgroup(c.l, lines(c.lines))
			if c.errHas != "" {
				require.ErrorContains(t, err, c.errHas)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

// TestSystemContainerBadProcFiles: an unreadable comm, a malformed
// /proc/<pid>/cgroup or one naming a cgroup that does not exist leave that
// system container out (logged, no scrape error, no panic); the rest are
// reported.
func TestSystemContainerBadProcFiles(t *testing.T) {
	for name, mutate := range map[string]func(root string){
		"malformed cgroup file": func(root string) {
			require.NoError(t, os.WriteFile(filepath.Join(root, "proc", "2901", "cgroup"), []byte("garbage\n"), 0o600))
		},
		"cgroup that does not exist": func(root string) {
			require.NoError(t, os.WriteFile(filepath.Join(root, "proc", "2901", "cgroup"), []byte("0::/system.slice/gone.service\n"), 0o600))
		},
		"comm a directory": func(root string) {
			p := filepath.Join(root, "proc", "2901", "comm")
			require.NoError(t, os.Remove(p))
			require.NoError(t, os.Mkdir(p, 0o755))
		},
	} {
		t.Run(name, func(t *testing.T) {
			root := copyFixture(t, "v2-systemd")
			mutate(root)
			core, logs := observer.New(zapcore.InfoLevel)
			s := scraperWith(t, root, defaultMBC(), &fakeClock{now: t0}, zap.New(core))
			m, err := s.Scrape(context.Background())
			require.NoError(t, err)
			res := sysResources(m)
			assert.NotContains(t, res, "kubelet")
			assert.Contains(t, res, "runtime")
			assert.Contains(t, res, "pods")
			assert.Equal(t, 1, logs.FilterField(zap.String("system_container", "kubelet")).Len(), "one log says why")
		})
	}
}

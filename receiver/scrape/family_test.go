// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// only returns a config with every metric off but the named ones.
func only(t *testing.T, names ...string) metadata.MetricsBuilderConfig {
	t.Helper()
	mbc := metadata.NewDefaultMetricsBuilderConfig()
	v := reflect.ValueOf(&mbc.Metrics).Elem()
	found := 0
	for i := 0; i < v.NumField(); i++ {
		tag := v.Type().Field(i).Tag.Get("mapstructure")
		on := false
		for _, n := range names {
			if n == tag {
				on, found = true, found+1
			}
		}
		v.Field(i).FieldByName("Enabled").SetBool(on)
	}
	require.Equal(t, len(names), found, "unknown metric name in %v", names)
	return mbc
}

// filesRead scrapes root once with mbc and returns the base names of the
// files the scrape opened (directory listings left out), sorted and
// deduplicated; /proc/<tid>/stat counts as "stat".
func filesRead(t *testing.T, root string, mbc metadata.MetricsBuilderConfig) ([]string, error) {
	t.Helper()
	var rec []string
	recording := false
	s := New(newSettings(), Options{
		Host: testHost(root), NodeName: "node-1", StandaloneContainers: true, MetricsBuilderConfig: mbc,
		Now: (&fakeClock{now: t0}).Now, TraceRead: func(p string) {
			if recording && !strings.HasSuffix(p, "/") {
				rec = append(rec, filepath.Base(p))
			}
		},
	})
	require.NoError(t, s.Start(context.Background(), nil))
	defer func() { require.NoError(t, s.Shutdown(context.Background())) }()
	recording = true // Start's own reads (boot time) are not the scrape's
	_, err := s.Scrape(context.Background())
	sort.Strings(rec)
	return slices.Compact(rec), err
}

// TestFilesReadOnlyForEnabledMetrics: with every metric off but one, a
// scrape of each fixture layout opens only the files that metric needs (v1
// and v2 names together), and at least one of them.
// blkioFiles are the files block I/O metrics read: v2 io.stat, v1's
// throttle and BFQ rwstat files, and the devices' uevents for their names.
var blkioFiles = []string{
	"io.stat", "blkio.throttle.io_service_bytes_recursive", "blkio.throttle.io_serviced_recursive",
	"blkio.bfq.io_service_bytes_recursive", "blkio.bfq.io_serviced_recursive", "uevent",
}

// runFiles are what following a standalone container's run reads, once
// per run, when a metric that depends on it is on (runStartRec,
// instance.go): its processes and their /proc/<pid>/stat start times.
var runFiles = []string{"cgroup.procs", "stat"}

func TestFilesReadOnlyForEnabledMetrics(t *testing.T) {
	run := func(files ...string) []string { return append(files, runFiles...) }
	cases := map[string][]string{
		"container.memory.usage":        {"memory.current", "memory.usage_in_bytes"},
		"container.memory.working_set":  {"memory.current", "memory.usage_in_bytes", "memory.stat"},
		"container.memory.swap":         {"memory.swap.current", "memory.usage_in_bytes", "memory.memsw.usage_in_bytes"},
		"container.memory.limit":        {"memory.max", "memory.limit_in_bytes"},
		"container.memory.oom_kills":    run("memory.events", "memory.oom_control"),
		"container.memory.peak":         {"memory.peak"}, // v2 only: nothing on v1 and hybrid
		"container.paging.faults":       run("memory.stat"),
		"container.cpu.time":            run("cpu.stat", "cpuacct.usage", "cpuacct.usage_user", "cpuacct.usage_sys", "cpuacct.stat"),
		"container.cpu.limit":           {"cpu.max", "cpu.cfs_quota_us", "cpu.cfs_period_us"},
		"container.cpu.shares":          {"cpu.weight", "cpu.shares"},
		"container.pressure.stall_time": run("cpu.pressure", "memory.pressure", "io.pressure"),
		"container.tasks":               {"cgroup.threads", "tasks", "stat"},
		"k8s.pod.memory.oom_kills":      {"memory.events", "memory.oom_control"},
		"k8s.pod.cpu.usage":             {"cpu.stat", "cpuacct.usage", "cpuacct.usage_user", "cpuacct.usage_sys", "cpuacct.stat"},
		"k8s.node.memory.available":     {"memory.usage_in_bytes", "memory.stat", "meminfo"},
		"k8s.node.memory.usage":         {"memory.usage_in_bytes", "memory.stat", "meminfo"},
		"k8s.node.memory.swap":          {"memory.usage_in_bytes", "memory.memsw.usage_in_bytes", "memory.swap.current", "meminfo"},
		"k8s.node.paging.faults":        {"vmstat"},
		"k8s.node.memory.oom_kills":     {"vmstat"},
		"k8s.node.pids.count":           {"loadavg"},
		"k8s.node.pids.limit":           {"pid_max", "threads-max"},
		"container.disk.io":             run(blkioFiles...),
		"k8s.pod.disk.operations":       blkioFiles,
		"k8s.node.disk.io":              {"diskstats", "uevent"},
		// The optional hugetlb and file descriptor families, and container network.
		"container.memory.hugetlb.usage": {"hugetlb.2MB.current", "hugetlb.1GB.current", "hugetlb.2MB.usage_in_bytes", "hugetlb.1GB.usage_in_bytes"},
		"k8s.pod.memory.hugetlb.limit": {
			"hugetlb.2MB.current", "hugetlb.1GB.current", "hugetlb.2MB.usage_in_bytes", "hugetlb.1GB.usage_in_bytes",
			"hugetlb.2MB.max", "hugetlb.1GB.max", "hugetlb.2MB.limit_in_bytes", "hugetlb.1GB.limit_in_bytes",
		},
		"k8s.node.memory.hugetlb.usage":   {"hugetlb.2MB.usage_in_bytes", "hugetlb.1GB.usage_in_bytes"},
		"container.file_descriptor.count": {"cgroup.procs"}, // and /proc/<pid>/fd, a directory
		"container.network.io":            run("net", "dev"),
		// The node's system containers: the cgroups' files only (their
		// processes are looked at in Start, and again once a minute).
		"k8s.node.system_container.cpu.time":           {"cpu.stat", "cpuacct.usage", "cpuacct.usage_user", "cpuacct.usage_sys", "cpuacct.stat"},
		"k8s.node.system_container.memory.usage":       {"memory.current", "memory.usage_in_bytes"},
		"k8s.node.system_container.memory.working_set": {"memory.current", "memory.usage_in_bytes", "memory.stat"},

		// The usage over the limit: CPU time and the quota.
		"k8s.container.cpu.limit.utilization": {
			"cpu.max", "cpu.cfs_quota_us", "cpu.cfs_period_us",
			"cpu.stat", "cpuacct.usage", "cpuacct.usage_user", "cpuacct.usage_sys", "cpuacct.stat",
		},
	}
	for name, allowed := range cases {
		t.Run(name, func(t *testing.T) {
			total := 0
			for _, lt := range layouts {
				got, err := filesRead(t, filepath.Join(fixtures, lt.name), only(t, name))
				require.NoError(t, err, lt.name)
				for _, f := range got {
					assert.Contains(t, allowed, f, "%s: %s read with only %s on", lt.name, f, name)
				}
				total += len(got)
			}
			assert.Positive(t, total, "the metric's own files are read")
		})
	}
	t.Run("nothing enabled reads nothing", func(t *testing.T) {
		for _, lt := range layouts {
			got, err := filesRead(t, filepath.Join(fixtures, lt.name), only(t))
			require.NoError(t, err)
			assert.Empty(t, got, lt.name)
		}
	})
}

// TestDisabledMetricsFileErrorsAreSilent: files that only disabled metrics
// need are broken (a directory where memory.stat should be, garbage in
// memory.events, cpu.max, /proc/meminfo and /proc/vmstat); with only
// container.memory.usage on, the scrape neither reads them nor reports them.
func TestDisabledMetricsFileErrorsAreSilent(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	stat := filepath.Join(root, v2A1Dir, "memory.stat")
	require.NoError(t, os.Remove(stat))
	require.NoError(t, os.Mkdir(stat, 0o755))
	for f, data := range map[string]string{
		v2A1Dir + "/memory.events": "oom_kill lots\n",
		v2A1Dir + "/cpu.max":       "lots 100000\n",
		"proc/meminfo":             "MemTotal: lots kB\n",
		"proc/vmstat":              "oom_kill -1\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte(data), 0o600))
	}
	got, err := filesRead(t, root, only(t, "container.memory.usage"))
	require.NoError(t, err, "no partial error for files of disabled metrics")
	assert.Equal(t, []string{"memory.current"}, got)

	for metric, file := range map[string]string{
		"container.memory.working_set": "memory.stat",
		"container.memory.oom_kills":   "memory.events",
		"container.cpu.limit":          "cpu.max",
		"k8s.node.memory.available":    "meminfo",
		"k8s.node.paging.faults":       "vmstat",
	} {
		_, err = filesRead(t, root, only(t, metric))
		require.Error(t, err, "%s: the broken file is an error once a metric needs it", metric)
		assert.Contains(t, err.Error(), file)
	}
}

// eachMetric calls fn with every metric of the resources with attr=val.
func eachMetric(m pmetric.Metrics, attr, val string, fn func(pmetric.Metric)) {
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		if v, ok := rm.Resource().Attributes().Get(attr); !ok || v.Str() != val {
			continue
		}
		ms := rm.ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			fn(ms.At(j))
		}
	}
}

// dataPoints counts the data points of the resources with attr=val.
func dataPoints(m pmetric.Metrics, attr, val string) int {
	n := 0
	eachMetric(m, attr, val, func(x pmetric.Metric) {
		if x.Type() == pmetric.MetricTypeSum {
			n += x.Sum().DataPoints().Len()
		} else {
			n += x.Gauge().DataPoints().Len()
		}
	})
	return n
}

// TestVanishedCountsEveryPoint: with every metric on, a container whose
// cgroup is removed half-way through its reads costs at least every point
// it had in the scrape before (CPU, memory, throttling, limits, tasks,
// PSI...), not only CPU and memory, and the error names the directory.
func TestVanishedCountsEveryPoint(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	dir := filepath.Join(root, v2A1Dir)
	armed, removed := false, false
	clk := &fakeClock{now: t0}
	s := New(newSettings(), Options{
		Host: testHost(root), NodeName: "node-1", MetricsBuilderConfig: allMetrics(t), Now: clk.Now,
		TraceRead: func(p string) {
			// After the first file of the victim (its CPU), the rest vanishes.
			if armed && !removed && strings.HasPrefix(p, dir+"/") {
				removed = true
				require.NoError(t, os.RemoveAll(dir))
			}
		},
	})
	require.NoError(t, s.Start(context.Background(), nil))
	defer func() { require.NoError(t, s.Shutdown(context.Background())) }()
	_, err := s.Scrape(context.Background())
	require.NoError(t, err)
	clk.now = clk.now.Add(10 * time.Second)
	bumpCPU(t, root)
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	had := dataPoints(m, "container.id", v2Ctr1)
	require.Greater(t, had, 30, "every metric on: the victim has many points")
	st := s.series[seriesKey{kind: kindContainer, id: v2Ctr1}]
	require.Equal(t, 12, lastPts(st, familyOf[*blkioFamily](t, s).slot), "block I/O: 2 devices x 2 metrics x 3 directions")

	armed = true
	clk.now = clk.now.Add(10 * time.Second)
	m, err = s.Scrape(context.Background())
	require.True(t, removed)
	var pe scrapererror.PartialScrapeError
	require.ErrorAs(t, err, &pe)
	assert.GreaterOrEqual(t, pe.Failed, had, "every point the container would have had")
	assert.Equal(t, s.entityPoints(kindContainer, st), pe.Failed)
	assert.Contains(t, err.Error(), "container "+v2Ctr1+": "+dir+": "+cgroupfs.ErrVanished.Error())
	assert.Zero(t, dataPoints(m, "container.id", v2Ctr1))
}

// familyOf returns the scraper's family of type F; it fails the test when
// the scraper has none (no metric of it enabled).
func familyOf[F family](tb testing.TB, s *Scraper) F {
	tb.Helper()
	for _, f := range s.families {
		if x, ok := f.(F); ok {
			return x
		}
	}
	var zero F
	require.Failf(tb, "no such family", "%T", zero)
	return zero
}

// hasFamily reports whether the scraper has a family of type F.
func hasFamily[F family](s *Scraper) bool {
	for _, f := range s.families {
		if _, ok := f.(F); ok {
			return true
		}
	}
	return false
}

// seriesPoints is what the entity kind/id would cost now (entityPoints of
// its series; nil when it has none).
func seriesPoints(s *Scraper, kind cgroupKind, id string) int {
	return s.entityPoints(kind, s.series[seriesKey{kind: kind, id: id}])
}

// Thread lists and /proc/<tid>/stat are read only when a metric needs
// them; the same for pressure files. A malformed stat file and a malformed
// pressure file are partial errors naming the container with defaults, and
// are not read at all with those metrics off.
func TestScrapeReadsOnlyWhatIsEnabled(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc", "2101", "stat"), []byte("garbage"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(root, v2A1Dir, "io.pressure"), []byte("garbage"), 0o600))

	s := scraperWith(t, root, defaultMBC(), &fakeClock{now: t0}, nil)
	m, err := s.Scrape(context.Background())
	require.Error(t, err)
	var pe scrapererror.PartialScrapeError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 7+6, pe.Failed, "6 task states + load average; 3 resources x some/full of the one PSI metric on by default (stall time)")
	assert.Equal(t, familyOf[*tasksFamily](t, s).points(kindContainer, nil)+familyOf[*psiFamily](t, s).points(kindContainer, nil), pe.Failed)
	assert.Contains(t, err.Error(), "container "+v2Ctr1+": threads:")
	assert.Contains(t, err.Error(), filepath.Join("proc", "2101", "stat"))
	assert.Contains(t, err.Error(), "io.pressure")
	a1 := points(m, "container.id", v2Ctr1)
	assert.NotContains(t, a1, "container.tasks/running", "the bad container loses its task points")
	assert.Contains(t, a1, "container.cpu.throttling.periods", "and keeps the rest")
	assert.Contains(t, points(m, "container.id", v2Ctr2), "container.tasks/running", "other containers keep theirs")
	assert.NotContains(t, points(m, "k8s.pod.uid", podUID1), "k8s.pod.tasks/running", "no pod sum with a container missing")
	assert.Contains(t, points(m, "k8s.pod.uid", "3c4d5e6f-0000-4000-8000-00000000000c"), "k8s.pod.tasks/running", "other pods keep theirs")

	off := defaultMBC()
	mm := &off.Metrics
	mm.ContainerTasks.Enabled, mm.ContainerCPULoadAverage10s.Enabled = false, false
	mm.K8sPodTasks.Enabled, mm.K8sPodCPULoadAverage10s.Enabled = false, false
	mm.ContainerPressureStallTime.Enabled = false
	s = scraperWith(t, root, off, &fakeClock{now: t0}, nil)
	m, err = s.Scrape(context.Background())
	require.NoError(t, err, "nothing reads the malformed files")
	assert.False(t, metricNames(m)["container.tasks"])
	assert.True(t, metricNames(m)["k8s.pod.pressure.stall_time"])
}

// TestEntityPointsCoverEveryPoint: with every metric on, in every layout,
// what each entity would cost if it vanished (the sum of its families'
// points) is at least every point it had: no family records points it
// does not count.
func TestEntityPointsCoverEveryPoint(t *testing.T) {
	for _, lt := range layouts {
		t.Run(lt.name, func(t *testing.T) {
			root, clk := copyFixture(t, lt.name), &fakeClock{now: t0}
			s := startScraper(t, root, lt.standalone, clk, func(o *Options) { o.MetricsBuilderConfig = allMetrics(t) })
			m := twoScrapes(t, s, root, clk)
			seen := 0
			for i := 0; i < m.ResourceMetrics().Len(); i++ {
				rm := m.ResourceMetrics().At(i)
				attrs := rm.Resource().Attributes()
				key := seriesKey{kind: kindNode}
				if v, ok := attrs.Get("k8s.node.system_container.name"); ok {
					key = seriesKey{kind: kindSystem, id: v.Str()}
				} else if v, ok := attrs.Get("container.id"); ok {
					key = seriesKey{kind: kindContainer, id: v.Str()}
				} else if v, ok := attrs.Get("k8s.pod.uid"); ok {
					key = seriesKey{kind: kindPod, id: v.Str()}
				}
				had := 0
				ms := rm.ScopeMetrics().At(0).Metrics()
				for j := 0; j < ms.Len(); j++ {
					if x := ms.At(j); x.Type() == pmetric.MetricTypeSum {
						had += x.Sum().DataPoints().Len()
					} else {
						had += x.Gauge().DataPoints().Len()
					}
				}
				assert.GreaterOrEqual(t, seriesPoints(s, key.kind, key.id), had, "%+v", key)
				seen++
			}
			assert.Greater(t, seen, 6, "the node, its system containers, pods and containers")
		})
	}
}

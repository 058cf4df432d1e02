// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package cadvisorcompat checks config/cadvisor-compat.yaml without any real
// component: its transform and filter processors, built from the file by
// contrib's factories exactly as the collector builds them, run on the
// receiver's golden metrics (testdata/golden: fixture host trees with full
// identity), and the test checks the names, labels and values that come
// out against cAdvisor's. The end-to-end test (test/e2e) runs the same file
// in the real collector against the kubernetes-mixin recording rules.
package cadvisorcompat

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/filterprocessor"
	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/transformprocessor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
)

const configFile = "../../config/cadvisor-compat.yaml"

// cadvisorNames are the names the compat view may emit: cAdvisor's
// (google/cadvisor metrics/prometheus.go) for what we measure.
var cadvisorNames = map[string]bool{
	"container_cpu_usage_seconds_total": true, "container_cpu_user_seconds_total": true, "container_cpu_system_seconds_total": true,
	"container_cpu_cfs_periods_total": true, "container_cpu_cfs_throttled_periods_total": true, "container_cpu_cfs_throttled_seconds_total": true,
	"container_spec_cpu_quota": true, "container_spec_cpu_period": true, "container_spec_cpu_shares": true,
	"container_cpu_load_average_10s": true, "container_tasks_state": true,
	"container_memory_usage_bytes": true, "container_memory_working_set_bytes": true, "container_memory_rss": true,
	"container_memory_cache": true, "container_memory_mapped_file": true, "container_memory_swap": true,
	"container_spec_memory_limit_bytes": true, "container_oom_events_total": true,
	"container_threads": true, "container_threads_max": true, "container_start_time_seconds": true,
	"container_network_receive_bytes_total": true, "container_network_transmit_bytes_total": true,
	"container_network_receive_packets_total": true, "container_network_transmit_packets_total": true,
	"container_network_receive_errors_total": true, "container_network_transmit_errors_total": true,
	"container_network_receive_packets_dropped_total": true, "container_network_transmit_packets_dropped_total": true,
	"container_fs_reads_bytes_total": true, "container_fs_writes_bytes_total": true,
	"container_fs_reads_total": true, "container_fs_writes_total": true,
	"container_accelerator_duty_cycle": true, "container_accelerator_memory_used_bytes": true, "container_accelerator_memory_total_bytes": true,
	"container_fs_usage_bytes": true, "container_fs_limit_bytes": true, "container_fs_inodes_total": true, "container_fs_inodes_free": true,
	"container_file_descriptors": true, "container_hugetlb_usage_bytes": true,
}

// Labels a series may carry, resource and point (cAdvisor's, plus job,
// instance, node and metrics_path as Prometheus' kubelet scrape adds them).
var resourceLabels = map[string]bool{
	"namespace": true, "pod": true, "container": true, "image": true, "name": true, "id": true, "node": true,
	"metrics_path": true, "service.name": true, "service.instance.id": true,
	// Allowed container labels (container_labels; the compose project and
	// service in TestCompatStandaloneContainer), standalone cAdvisor's.
	"container_label_com_docker_compose_project": true, "container_label_com_docker_compose_service": true,
}

var pointLabels = map[string]bool{
	"cpu": true, "interface": true, "device": true, "state": true, "acc_id": true, "make": true, "model": true, "pagesize": true,
}

// pipeline builds the config file's transform and filter processors (in the
// pipeline's order) in front of a sink.
func pipeline(tb testing.TB) (consumer.Metrics, *consumertest.MetricsSink) {
	tb.Helper()
	conf, err := confmaptest.LoadConf(configFile)
	require.NoError(tb, err)
	procs, err := conf.Sub("service::pipelines::metrics")
	require.NoError(tb, err)
	order, ok := procs.Get("processors").([]any)
	require.True(tb, ok, "service::pipelines::metrics::processors")
	sink := &consumertest.MetricsSink{}
	var next consumer.Metrics = sink
	factories := map[string]processor.Factory{
		"transform": transformprocessor.NewFactory(),
		"filter":    filterprocessor.NewFactory(),
	}
	var used []string
	for i := len(order) - 1; i >= 0; i-- {
		name := fmt.Sprint(order[i])
		typ, _, _ := strings.Cut(name, "/")
		f, ok := factories[typ]
		if !ok { // memory_limiter, batch: no effect on names and values
			continue
		}
		sub, err := conf.Sub("processors::" + name)
		require.NoError(tb, err)
		cfg := f.CreateDefaultConfig()
		require.NoError(tb, sub.Unmarshal(cfg), "processors::%s", name)
		require.NoError(tb, cfg.(interface{ Validate() error }).Validate(), "processors::%s", name)
		set := processortest.NewNopSettings(f.Type())
		set.ID = component.MustNewIDWithName(f.Type().String(), strings.TrimPrefix(strings.TrimPrefix(name, typ), "/"))
		p, err := f.CreateMetrics(context.Background(), set, cfg, next)
		require.NoError(tb, err, "processors::%s", name)
		require.NoError(tb, p.Start(context.Background(), componenttest.NewNopHost()))
		tb.Cleanup(func() { require.NoError(tb, p.Shutdown(context.Background())) })
		next = p
		used = append(used, name)
	}
	require.ElementsMatch(tb, []string{"transform/cadvisor", "filter/cadvisor_unmapped", "transform/cadvisor_points", "filter/cadvisor"}, used)
	return next, sink
}

// series is one output point flattened: metric name, labels (resource +
// point) and value.
type series struct {
	name   string
	labels map[string]string
	value  float64
	point  pmetric.NumberDataPoint
	kind   pmetric.MetricType
	mono   bool
}

func flatten(md pmetric.Metrics) []series {
	var out []series
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		for j := 0; j < rm.ScopeMetrics().Len(); j++ {
			ms := rm.ScopeMetrics().At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				var dps pmetric.NumberDataPointSlice
				mono := false
				switch m.Type() {
				case pmetric.MetricTypeGauge:
					dps = m.Gauge().DataPoints()
				case pmetric.MetricTypeSum:
					dps = m.Sum().DataPoints()
					mono = m.Sum().IsMonotonic()
				default:
					continue
				}
				for d := 0; d < dps.Len(); d++ {
					dp := dps.At(d)
					l := map[string]string{}
					rm.Resource().Attributes().Range(func(k string, v pcommon.Value) bool { l[k] = v.AsString(); return true })
					dp.Attributes().Range(func(k string, v pcommon.Value) bool { l["point:"+k] = v.AsString(); return true })
					v := dp.DoubleValue()
					if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
						v = float64(dp.IntValue())
					}
					out = append(out, series{name: m.Name(), labels: l, value: v, point: dp, kind: m.Type(), mono: mono})
				}
			}
		}
	}
	return out
}

func run(t *testing.T, in pmetric.Metrics) []series {
	t.Helper()
	p, sink := pipeline(t)
	require.NoError(t, p.ConsumeMetrics(context.Background(), in))
	require.Len(t, sink.AllMetrics(), 1)
	return flatten(sink.AllMetrics()[0])
}

func load(t *testing.T, name string) pmetric.Metrics {
	t.Helper()
	md, err := golden.ReadMetrics(filepath.Join("..", "..", "testdata", "golden", name))
	require.NoError(t, err)
	return md
}

var promName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// TestCompatNamesAndLabels: every output name is a cAdvisor name, every
// label one cAdvisor (or the kubelet scrape) has, on every golden layout.
func TestCompatNamesAndLabels(t *testing.T) {
	for _, g := range []string{"identity-v1-cgroupfs.yaml", "v1-cgroupfs.yaml", "v2-systemd.yaml", "hybrid.yaml", "v2-standalone.yaml", "gpu-consumer.yaml", "filesystem-v2-systemd.yaml", "v1-cgroupfs-extras.yaml"} {
		t.Run(g, func(t *testing.T) {
			out := run(t, load(t, g))
			require.NotEmpty(t, out)
			names := map[string]int{}
			for _, s := range out {
				names[s.name]++
				assert.True(t, cadvisorNames[s.name], "%s is not a cAdvisor name", s.name)
				assert.Regexp(t, promName, s.name)
				for k := range s.labels {
					if pk, ok := strings.CutPrefix(k, "point:"); ok {
						assert.True(t, pointLabels[pk], "%s: point label %q", s.name, pk)
					} else {
						assert.True(t, resourceLabels[k], "%s: resource label %q", s.name, k)
					}
				}
				assert.Equal(t, "cadvisor", s.labels["service.name"], "%s: job", s.name)
				assert.Equal(t, "/metrics/cadvisor", s.labels["metrics_path"], s.name)
				assert.NotEmpty(t, s.labels["id"], "%s: id", s.name)
				assert.NotContains(t, s.labels, "point:cadvisor_drop", s.name)
			}
			keys := make([]string, 0, len(names))
			for k := range names {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			t.Logf("%d series, %d names: %v", len(out), len(names), keys)
		})
	}
}

// TestCompatValues: on the golden with full identity (CRI names and
// images), each cAdvisor series carries the value it must have: CPU total
// = user + system (pods and the node: our total), the directions and modes
// split, devices as /dev/<name>,
// quota/period = our limit, start time = time - uptime; the mixin's
// labels (namespace, pod, container, image != "") on every container.
func TestCompatValues(t *testing.T) {
	in := load(t, "identity-v1-cgroupfs.yaml")
	src := flatten(in)
	cp := pmetric.NewMetrics()
	in.CopyTo(cp) // the processors modify what they are given
	out := run(t, cp)

	type key struct{ id, name string }
	got := map[key][]series{}
	for _, s := range out {
		got[key{s.labels["id"], s.name}] = append(got[key{s.labels["id"], s.name}], s)
	}
	byID := func(id, name string) []series { return got[key{id, name}] }
	sum := func(ss []series, f func(series) bool) (v float64, n int) {
		for _, s := range ss {
			if f == nil || f(s) {
				v += s.value
				n++
			}
		}
		return v, n
	}

	containers := map[string]map[string]string{} // container.id -> resource
	pods := map[string]map[string]string{}       // k8s.pod.uid -> resource
	for _, s := range src {
		if id := s.labels["container.id"]; id != "" {
			containers[id] = s.labels
		} else if uid := s.labels["k8s.pod.uid"]; uid != "" {
			pods[uid] = s.labels
		}
	}
	require.NotEmpty(t, containers)
	require.NotEmpty(t, pods)

	for id, r := range containers {
		ws := byID(id, "container_memory_working_set_bytes")
		require.Len(t, ws, 1, "container %s working set", id)
		l := ws[0].labels
		assert.Equal(t, r["k8s.namespace.name"], l["namespace"], id)
		assert.Equal(t, r["k8s.pod.name"], l["pod"], id)
		assert.Equal(t, r["k8s.container.name"], l["container"], id)
		assert.Equal(t, r["container.name"], l["name"], id)
		assert.Equal(t, r["k8s.node.name"], l["node"], id)
		assert.Equal(t, r["k8s.node.name"], l["service.instance.id"], id)
		wantImage := r["container.image.name"]
		if tags := r["container.image.tags"]; tags != "" { // the string array, as JSON: ["1.27.1"]
			var tt []string
			require.NoError(t, json.Unmarshal([]byte(tags), &tt))
			require.Len(t, tt, 1, id)
			wantImage += ":" + tt[0]
		}
		assert.Equal(t, wantImage, l["image"], id)

		// CPU: total = user + system, one point, cpu="total".
		var user, system float64
		for _, s := range src {
			if s.labels["container.id"] == id && s.name == "container.cpu.time" {
				switch s.labels["point:cpu.mode"] {
				case "user":
					user = s.value
				case "system":
					system = s.value
				}
			}
		}
		tot := byID(id, "container_cpu_usage_seconds_total")
		require.Len(t, tot, 1, id)
		assert.InDelta(t, user+system, tot[0].value, 1e-9, id)
		assert.Equal(t, "total", tot[0].labels["point:cpu"])
		assert.True(t, tot[0].mono && tot[0].kind == pmetric.MetricTypeSum, "counter")
		u := byID(id, "container_cpu_user_seconds_total")
		require.Len(t, u, 1)
		assert.Equal(t, user, u[0].value)
		sys := byID(id, "container_cpu_system_seconds_total")
		require.Len(t, sys, 1)
		assert.Equal(t, system, sys[0].value)

		// Start time = time - uptime.
		for _, s := range src {
			if s.labels["container.id"] == id && s.name == "container.uptime" {
				st := byID(id, "container_start_time_seconds")
				require.Len(t, st, 1, id)
				want := float64(s.point.Timestamp().AsTime().UnixMilli())/1000 - s.value
				assert.InDelta(t, want, st[0].value, 1e-6, id)
			}
			if s.labels["container.id"] == id && s.name == "container.cpu.limit" {
				q, p := byID(id, "container_spec_cpu_quota"), byID(id, "container_spec_cpu_period")
				require.Len(t, q, 1)
				require.Len(t, p, 1)
				assert.Equal(t, 100000.0, p[0].value)
				assert.InDelta(t, s.value, q[0].value/p[0].value, 1e-9, id)
			}
			if s.labels["container.id"] == id && s.name == "container.disk.io" {
				dev := "/dev/" + s.labels["point:system.device"]
				name := map[string]string{"read": "container_fs_reads_bytes_total", "write": "container_fs_writes_bytes_total"}[s.labels["point:disk.io.direction"]]
				require.NotEmpty(t, name, "read and write only: discards are container.disk.discard.*")
				v, n := sum(byID(id, name), func(o series) bool { return o.labels["point:device"] == dev })
				assert.Equal(t, 1, n, "%s %s %s", id, name, dev)
				assert.Equal(t, s.value, v, "%s %s %s", id, name, dev)
			}
		}
		for ours, theirs := range map[string]string{
			"container.memory.rss": "container_memory_rss", "container.memory.cache": "container_memory_cache",
			"container.memory.usage": "container_memory_usage_bytes", "container.memory.limit": "container_spec_memory_limit_bytes",
			"container.pids.count": "container_threads", "container.memory.oom_kills": "container_oom_events_total",
			"container.cpu.throttling.periods": "container_cpu_cfs_periods_total",
		} {
			for _, s := range src {
				if s.labels["container.id"] == id && s.name == ours {
					o := byID(id, theirs)
					require.Len(t, o, 1, "%s %s", id, theirs)
					assert.Equal(t, s.value, o[0].value, "%s %s", id, theirs)
				}
			}
		}
	}

	// Network: per pod and interface, receive and transmit apart; on the
	// pod's series (no container, no image), as cAdvisor's sandbox.
	nNet := 0
	for _, s := range src {
		if s.name != "k8s.pod.network.io" {
			continue
		}
		uid := s.labels["k8s.pod.uid"]
		name := "container_network_" + s.labels["point:network.io.direction"] + "_bytes_total"
		var hit []series
		for _, o := range byID(uid, name) {
			if o.labels["point:interface"] == s.labels["point:network.interface.name"] {
				hit = append(hit, o)
			}
		}
		require.Len(t, hit, 1, "%s %s %s", uid, name, s.labels["point:network.interface.name"])
		assert.Equal(t, s.value, hit[0].value)
		assert.Equal(t, s.labels["k8s.pod.name"], hit[0].labels["pod"])
		assert.Equal(t, s.labels["k8s.namespace.name"], hit[0].labels["namespace"])
		assert.NotContains(t, hit[0].labels, "container")
		assert.NotContains(t, hit[0].labels, "image")
		nNet++
	}
	assert.Positive(t, nNet)

	// Pods and the node: CPU time is the total only (k8s.pod.cpu.time and
	// k8s.node.cpu.time have no cpu.mode, as the conventions define them):
	// container_cpu_usage_seconds_total with our value, no user or system
	// series.
	nCPU := 0
	for _, s := range src {
		var id string
		switch s.name {
		case "k8s.pod.cpu.time":
			id = s.labels["k8s.pod.uid"]
		case "k8s.node.cpu.time":
			id = "/"
		default:
			continue
		}
		tot := byID(id, "container_cpu_usage_seconds_total")
		require.Len(t, tot, 1, id)
		assert.Equal(t, s.value, tot[0].value, id)
		assert.Empty(t, byID(id, "container_cpu_user_seconds_total"), id)
		assert.Empty(t, byID(id, "container_cpu_system_seconds_total"), id)
		nCPU++
	}
	assert.Positive(t, nCPU)

	// The mixin's container selector image!="" holds for every container
	// and for no pod or node series.
	for _, s := range out {
		_, isContainer := containers[s.labels["id"]]
		assert.Equal(t, isContainer, s.labels["image"] != "", "%s id=%s image=%q", s.name, s.labels["id"], s.labels["image"])
	}
	// Node (root cgroup) series: id="/".
	_, n := sum(byID("/", "container_memory_working_set_bytes"), nil)
	assert.Equal(t, 1, n, "node working set as id=\"/\"")
	assert.False(t, math.IsNaN(out[0].value))
}

// BenchmarkCompat: the cost of the view's transform and filter processors
// per container, on the identity golden's container and pod resources
// replicated to ~500 containers (each copy with its own container ID and
// pod UID; the node's once), i.e. one scrape of a 500-container node.
func BenchmarkCompat(b *testing.B) {
	base, err := golden.ReadMetrics(filepath.Join("..", "..", "testdata", "golden", "identity-v1-cgroupfs.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	const copies = 167 // x3 containers = 501
	big := pmetric.NewMetrics()
	containers := 0
	for c := 0; c < copies; c++ {
		rms := base.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			ra := rms.At(i).Resource().Attributes()
			_, isContainer := ra.Get("container.id")
			_, isPod := ra.Get("k8s.pod.uid")
			if c > 0 && !isContainer && !isPod {
				continue // the node (and GPUs) once
			}
			rm := big.ResourceMetrics().AppendEmpty()
			rms.At(i).CopyTo(rm)
			a := rm.Resource().Attributes()
			if v, ok := a.Get("container.id"); ok {
				a.PutStr("container.id", fmt.Sprintf("%s-%d", v.Str(), c))
				containers++
			}
			if v, ok := a.Get("k8s.pod.uid"); ok {
				a.PutStr("k8s.pod.uid", fmt.Sprintf("%s-%d", v.Str(), c))
			}
		}
	}
	p, sink := pipeline(b)
	points := big.DataPointCount()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		in := pmetric.NewMetrics()
		big.CopyTo(in)
		sink.Reset()
		b.StartTimer()
		if err := p.ConsumeMetrics(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(containers), "ns/container")
	b.ReportMetric(float64(points), "points_in")
}

// TestCompatAccelerator: a container's accelerator metrics carry
// cAdvisor's acc_id, make and model labels from the points' hw.id,
// hw.vendor and hw.model, with our values.
func TestCompatAccelerator(t *testing.T) {
	in := load(t, "gpu-h100.yaml")
	src := flatten(in)
	out := run(t, in)
	n := 0
	for _, s := range src {
		theirs, ok := map[string]string{
			"container.accelerator.duty_cycle":   "container_accelerator_duty_cycle",
			"container.accelerator.memory.used":  "container_accelerator_memory_used_bytes",
			"container.accelerator.memory.total": "container_accelerator_memory_total_bytes",
		}[s.name]
		if !ok {
			continue
		}
		var hit []series
		for _, o := range out {
			if o.name == theirs && o.labels["id"] == s.labels["container.id"] && o.labels["point:acc_id"] == s.labels["point:hw.id"] {
				hit = append(hit, o)
			}
		}
		require.Len(t, hit, 1, "%s %s", theirs, s.labels["point:hw.id"])
		assert.Equal(t, s.value, hit[0].value, theirs)
		assert.Equal(t, s.labels["point:hw.vendor"], hit[0].labels["point:make"], theirs)
		assert.Equal(t, s.labels["point:hw.model"], hit[0].labels["point:model"], theirs)
		n++
	}
	assert.Positive(t, n)
}

// TestCompatFilesystemAndExtras: the writable layer, the node filesystem,
// open descriptors and hugetlb usage come out under cAdvisor's names with
// our values, on the series of the same container (or the root cgroup).
func TestCompatFilesystemAndExtras(t *testing.T) {
	for _, c := range []struct {
		golden string
		ours   map[string]string // our name -> cAdvisor's
		point  string            // a point attribute carried over, ours -> cAdvisor's
	}{
		{"filesystem-v2-systemd.yaml", map[string]string{
			"container.filesystem.usage":      "container_fs_usage_bytes",
			"k8s.node.filesystem.usage":       "container_fs_usage_bytes",
			"k8s.node.filesystem.capacity":    "container_fs_limit_bytes",
			"k8s.node.filesystem.inode.count": "container_fs_inodes_total",
			"k8s.node.filesystem.inode.free":  "container_fs_inodes_free",
		}, ""},
		{"v1-cgroupfs-extras.yaml", map[string]string{
			"container.file_descriptor.count": "container_file_descriptors",
			"container.memory.hugetlb.usage":  "container_hugetlb_usage_bytes",
			"k8s.pod.memory.hugetlb.usage":    "container_hugetlb_usage_bytes",
		}, "hugepage.size:pagesize"},
	} {
		t.Run(c.golden, func(t *testing.T) {
			in := load(t, c.golden)
			before := flatten(in)
			out := run(t, in)
			// One key per series: the cAdvisor name, id, and the carried point attribute.
			key := func(name, id, pt string) string { return name + "|" + id + "|" + pt }
			got := map[string]float64{}
			for _, s := range out {
				pt := ""
				if c.point != "" {
					_, theirs, _ := strings.Cut(c.point, ":")
					pt = s.labels["point:"+theirs]
				}
				got[key(s.name, s.labels["id"], pt)] = s.value
			}
			checked := 0
			for _, s := range before {
				theirs, ok := c.ours[s.name]
				if !ok {
					continue
				}
				id := s.labels["container.id"]
				if id == "" {
					id = s.labels["k8s.pod.uid"]
				}
				if id == "" {
					id = "/"
				}
				pt := ""
				if c.point != "" {
					ours, _, _ := strings.Cut(c.point, ":")
					pt = s.labels["point:"+ours]
					if strings.Contains(s.name, "hugetlb") {
						require.NotEmpty(t, pt, "%s has no %s", s.name, ours)
					}
				}
				v, ok := got[key(theirs, id, pt)]
				if assert.True(t, ok, "%s (id %s %s) not out as %s", s.name, id, pt, theirs) {
					assert.Equal(t, s.value, v, "%s (id %s %s) as %s", s.name, id, pt, theirs)
					checked++
				}
			}
			require.GreaterOrEqual(t, checked, len(c.ours), "series checked")
			t.Logf("%d series checked", checked)
		})
	}
}

// TestCompatStandaloneContainer: a Docker or Podman host's container, as
// the Engine API names it (hybrid's /docker/<id>, with a compose
// project's names and the receiver's allowed labels), gets cAdvisor
// standalone's labels: name, image and container_label_<key> with dots as
// underscores, so a compose stack's dashboards keep selecting it; the node
// keeps none of them.
func TestCompatStandaloneContainer(t *testing.T) {
	const docker = "1818181818181818181818181818181818181818181818181818181818181818"
	in := load(t, "hybrid.yaml")
	found := false
	for i := 0; i < in.ResourceMetrics().Len(); i++ {
		a := in.ResourceMetrics().At(i).Resource().Attributes()
		if v, ok := a.Get("container.id"); ok && v.Str() == docker {
			a.PutStr("container.name", "shop_web_1")
			a.PutStr("container.image.name", "localhost/shop/web")
			a.PutEmptySlice("container.image.tags").AppendEmpty().SetStr("2.4")
			a.PutStr("container.label.com.docker.compose.project", "shop")
			a.PutStr("container.label.com.docker.compose.service", "web")
			found = true
		}
	}
	require.True(t, found, "the hybrid golden's docker container")
	out := run(t, in)
	n := 0
	for _, s := range out {
		if s.labels["id"] != docker {
			assert.NotContains(t, s.labels, "container_label_com_docker_compose_project", s.name)
			continue
		}
		n++
		delete(s.labels, "point:cpu")
		delete(s.labels, "point:interface")
		delete(s.labels, "point:device")
		delete(s.labels, "point:state")
		assert.Equal(t, map[string]string{
			"id": docker, "name": "shop_web_1", "image": "localhost/shop/web:2.4",
			"container_label_com_docker_compose_project": "shop", "container_label_com_docker_compose_service": "web",
			"node": "node-1", "service.instance.id": "node-1", "service.name": "cadvisor", "metrics_path": "/metrics/cadvisor",
		}, s.labels, s.name)
	}
	assert.Positive(t, n, "the container's series")
}

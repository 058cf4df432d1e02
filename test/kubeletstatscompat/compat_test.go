// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package kubeletstatscompat checks config/kubeletstats-compat.yaml without
// any real component: its transform processor, built from the file by
// contrib's factory exactly as the collector builds it, runs on every
// golden of the receiver (testdata/golden), and the test checks what comes
// out against contrib's kubeletstats receiver v0.165.1 (its metadata.yaml,
// written out below): every metric of kubeletstats we have a counterpart
// for comes out under kubeletstats' name, with its attributes and the
// Prometheus name and type kubeletstats' gets, with our values; everything
// else comes out unchanged. The cluster test (test/e2e, make kube-test)
// runs the same processor in its gateway and evaluates
// kubernetes-mixin-otel's own queries on what it writes (docs/dashboards.md).
package kubeletstatscompat

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
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
	"go.opentelemetry.io/collector/processor/processortest"
)

const (
	configFile = "../../config/kubeletstats-compat.yaml"
	deployFile = "../../deploy/config.yaml"
	// processorName is the file's one processor of its own.
	processorName = "transform/kubeletstats"
)

// kind is a metric's type as Prometheus sees it, and in OTLP.
type kind string

const (
	gauge   kind = "gauge"   // OTLP gauge
	counter kind = "counter" // OTLP monotonic sum
	updown  kind = "updown"  // OTLP non-monotonic sum: a gauge in Prometheus
)

func (k kind) prometheus() string {
	if k == counter {
		return "counter"
	}
	return "gauge"
}

// kubeletstatsMetric is one metric of kubeletstats' metadata.yaml.
type kubeletstatsMetric struct {
	kind  kind
	unit  string
	attrs []string // its point attributes
}

// kubeletstats is every metric of contrib's kubeletstats receiver v0.165.1
// (receiver/kubeletstatsreceiver/metadata.yaml): kind, unit, point
// attributes. Its volume metrics are on a resource of their own that
// carries k8s.volume.name and k8s.volume.type (ours: point attributes;
// either way labels in Prometheus): volumeLabels.
var kubeletstats = map[string]kubeletstatsMetric{
	"container.cpu.time":                           {counter, "s", nil},
	"container.cpu.usage":                          {gauge, "{cpu}", nil},
	"container.filesystem.available":               {gauge, "By", nil},
	"container.filesystem.capacity":                {gauge, "By", nil},
	"container.filesystem.usage":                   {gauge, "By", nil},
	"container.memory.available":                   {gauge, "By", nil},
	"container.memory.major_page_faults":           {gauge, "1", nil},
	"container.memory.page_faults":                 {gauge, "1", nil},
	"container.memory.rss":                         {gauge, "By", nil},
	"container.memory.usage":                       {gauge, "By", nil},
	"container.memory.working_set":                 {gauge, "By", nil},
	"container.uptime":                             {counter, "s", nil},
	"k8s.container.cpu.node.utilization":           {gauge, "1", nil},
	"k8s.container.cpu_limit_utilization":          {gauge, "1", nil},
	"k8s.container.cpu_request_utilization":        {gauge, "1", nil},
	"k8s.container.ephemeral_storage.usage":        {updown, "By", []string{"fs.type"}},
	"k8s.container.memory.node.utilization":        {gauge, "1", nil},
	"k8s.container.memory_limit_utilization":       {gauge, "1", nil},
	"k8s.container.memory_request_utilization":     {gauge, "1", nil},
	"k8s.node.cpu.time":                            {counter, "s", nil},
	"k8s.node.cpu.usage":                           {gauge, "{cpu}", nil},
	"k8s.node.filesystem.available":                {gauge, "By", nil},
	"k8s.node.filesystem.capacity":                 {gauge, "By", nil},
	"k8s.node.filesystem.inode.count":              {updown, "{inode}", nil},
	"k8s.node.filesystem.inode.free":               {updown, "{inode}", nil},
	"k8s.node.filesystem.usage":                    {gauge, "By", nil},
	"k8s.node.memory.available":                    {gauge, "By", nil},
	"k8s.node.memory.major_page_faults":            {gauge, "1", nil},
	"k8s.node.memory.page_faults":                  {gauge, "1", nil},
	"k8s.node.memory.rss":                          {gauge, "By", nil},
	"k8s.node.memory.usage":                        {gauge, "By", nil},
	"k8s.node.memory.working_set":                  {gauge, "By", nil},
	"k8s.node.network.errors":                      {counter, "1", []string{"interface", "direction"}},
	"k8s.node.network.io":                          {counter, "By", []string{"interface", "direction"}},
	"k8s.node.pid.limit":                           {updown, "{thread}", nil},
	"k8s.node.pid.usage":                           {updown, "{thread}", nil},
	"k8s.node.system_container.cpu.time":           {counter, "s", nil},
	"k8s.node.system_container.cpu.usage":          {gauge, "{cpu}", nil},
	"k8s.node.system_container.memory.usage":       {gauge, "By", nil},
	"k8s.node.system_container.memory.working_set": {gauge, "By", nil},
	"k8s.node.uptime":                              {counter, "s", nil},
	"k8s.pod.cpu.node.utilization":                 {gauge, "1", nil},
	"k8s.pod.cpu.time":                             {counter, "s", nil},
	"k8s.pod.cpu.usage":                            {gauge, "{cpu}", nil},
	"k8s.pod.cpu_limit_utilization":                {gauge, "1", nil},
	"k8s.pod.cpu_request_utilization":              {gauge, "1", nil},
	"k8s.pod.filesystem.available":                 {gauge, "By", nil},
	"k8s.pod.filesystem.capacity":                  {gauge, "By", nil},
	"k8s.pod.filesystem.usage":                     {gauge, "By", nil},
	"k8s.pod.memory.available":                     {gauge, "By", nil},
	"k8s.pod.memory.major_page_faults":             {gauge, "1", nil},
	"k8s.pod.memory.node.utilization":              {gauge, "1", nil},
	"k8s.pod.memory.page_faults":                   {gauge, "1", nil},
	"k8s.pod.memory.rss":                           {gauge, "By", nil},
	"k8s.pod.memory.usage":                         {gauge, "By", nil},
	"k8s.pod.memory.working_set":                   {gauge, "By", nil},
	"k8s.pod.memory_limit_utilization":             {gauge, "1", nil},
	"k8s.pod.memory_request_utilization":           {gauge, "1", nil},
	"k8s.pod.network.errors":                       {counter, "1", []string{"interface", "direction"}},
	"k8s.pod.network.io":                           {counter, "By", []string{"interface", "direction"}},
	"k8s.pod.uptime":                               {counter, "s", nil},
	"k8s.pod.volume.usage":                         {updown, "By", nil},
	"k8s.volume.available":                         {gauge, "By", nil},
	"k8s.volume.capacity":                          {gauge, "By", nil},
	"k8s.volume.inodes":                            {gauge, "1", nil},
	"k8s.volume.inodes.free":                       {gauge, "1", nil},
	"k8s.volume.inodes.used":                       {gauge, "1", nil},
}

// notOurs: kubeletstats' metrics we have no counterpart for (they need the
// pod spec's requests or the node's capacity from the API, or are a
// division of two of ours: docs/kubeletstats.md), so none comes out.
var notOurs = map[string]bool{
	"k8s.container.cpu.node.utilization": true, "k8s.container.cpu_request_utilization": true,
	"k8s.container.memory.node.utilization": true, "k8s.container.memory_limit_utilization": true,
	"k8s.container.memory_request_utilization": true, "k8s.pod.cpu.node.utilization": true,
	"k8s.pod.cpu_limit_utilization": true, "k8s.pod.cpu_request_utilization": true,
	"k8s.pod.memory.node.utilization": true, "k8s.pod.memory_limit_utilization": true,
	"k8s.pod.memory_request_utilization": true,
}

// volumeLabels: kubeletstats' volume metrics carry these on their resource.
var volumeLabels = map[string]bool{"k8s.volume.name": true, "k8s.volume.type": true}

func isVolume(name string) bool {
	return strings.HasPrefix(name, "k8s.volume.") || name == "k8s.pod.volume.usage"
}

// renamed: our metric -> kubeletstats' name for it, the same points
// (point attributes renamed by pointRenames).
var renamed = map[string]string{
	"k8s.pod.network.io":                    "k8s.pod.network.io",
	"k8s.pod.network.errors":                "k8s.pod.network.errors",
	"k8s.node.network.io":                   "k8s.node.network.io",
	"k8s.node.network.errors":               "k8s.node.network.errors",
	"k8s.container.ephemeral_storage.usage": "k8s.container.ephemeral_storage.usage",
	"k8s.container.cpu.limit.utilization":   "k8s.container.cpu_limit_utilization",
	"container.uptime":                      "container.uptime",
	"k8s.pod.uptime":                        "k8s.pod.uptime",
	"k8s.node.uptime":                       "k8s.node.uptime",
	"k8s.pod.volume.available":              "k8s.volume.available",
	"k8s.pod.volume.capacity":               "k8s.volume.capacity",
	"k8s.pod.volume.inode.count":            "k8s.volume.inodes",
	"k8s.pod.volume.inode.free":             "k8s.volume.inodes.free",
	"k8s.pod.volume.inode.used":             "k8s.volume.inodes.used",
	"k8s.node.pids.count":                   "k8s.node.pid.usage",
	"k8s.node.pids.limit":                   "k8s.node.pid.limit",
}

// pointRenames: our point attribute -> kubeletstats', on the renamed
// metrics that have it.
var pointRenames = map[string]string{
	"network.io.direction":                    "direction",
	"network.interface.name":                  "interface",
	"k8s.container.ephemeral_storage.fs_type": "fs.type",
}

// pageFaults: our paging faults (kept) -> kubeletstats' two page fault
// metrics made from them.
var pageFaults = map[string][2]string{
	"container.paging.faults": {"container.memory.page_faults", "container.memory.major_page_faults"},
	"k8s.pod.paging.faults":   {"k8s.pod.memory.page_faults", "k8s.pod.memory.major_page_faults"},
	"k8s.node.paging.faults":  {"k8s.node.memory.page_faults", "k8s.node.memory.major_page_faults"},
}

// promName is the name Prometheus gives an OTLP metric (the
// prometheus_remote_write and prometheus exporters' default,
// UnderscoreEscapingWithSuffixes; github.com/prometheus/otlptranslator):
// dots to underscores, the unit's suffix (By: bytes, s: seconds, 1: ratio
// on a gauge only, {annotations}: none), _total on a counter. Only the
// units of these metrics.
func promName(t *testing.T, name, unit string, k kind) string {
	t.Helper()
	n := strings.ReplaceAll(name, ".", "_")
	switch {
	case unit == "By":
		n += "_bytes"
	case unit == "s":
		n += "_seconds"
	case unit == "1" && k.prometheus() == "gauge":
		n += "_ratio"
	case unit == "1", strings.HasPrefix(unit, "{") && strings.HasSuffix(unit, "}"):
	default:
		t.Fatalf("%s: unit %q: not one promName knows", name, unit)
	}
	if k == counter {
		n += "_total"
	}
	return n
}

func TestPromName(t *testing.T) {
	assert.Equal(t, "k8s_pod_network_io_bytes_total", promName(t, "k8s.pod.network.io", "By", counter))
	assert.Equal(t, "k8s_pod_network_errors_total", promName(t, "k8s.pod.network.errors", "1", counter))
	assert.Equal(t, "k8s_volume_inodes_ratio", promName(t, "k8s.volume.inodes", "1", gauge))
	assert.Equal(t, "k8s_pod_volume_inode_count", promName(t, "k8s.pod.volume.inode.count", "{inode}", updown))
	assert.Equal(t, "container_uptime_seconds", promName(t, "container.uptime", "s", gauge))
}

// pipeline builds the config file's transform processor in front of a
// sink, checking that it is the only processor of the file's pipeline
// that is not memory_limiter or batch (which change no name or value).
func pipeline(tb testing.TB) (consumer.Metrics, *consumertest.MetricsSink) {
	tb.Helper()
	conf, err := confmaptest.LoadConf(configFile)
	require.NoError(tb, err)
	order, ok := conf.Get("service::pipelines::metrics::processors").([]any)
	require.True(tb, ok, "service::pipelines::metrics::processors")
	var own []string
	for _, p := range order {
		if n := fmt.Sprint(p); n != "memory_limiter" && n != "batch" {
			own = append(own, n)
		}
	}
	require.Equal(tb, []string{processorName}, own, "the file's pipeline")
	f := transformprocessor.NewFactory()
	sub, err := conf.Sub("processors::" + processorName)
	require.NoError(tb, err)
	cfg := f.CreateDefaultConfig()
	require.NoError(tb, sub.Unmarshal(cfg))
	require.NoError(tb, cfg.(interface{ Validate() error }).Validate())
	set := processortest.NewNopSettings(f.Type())
	set.ID = component.MustNewIDWithName(f.Type().String(), "kubeletstats")
	sink := &consumertest.MetricsSink{}
	p, err := f.CreateMetrics(context.Background(), set, cfg, sink)
	require.NoError(tb, err)
	require.NoError(tb, p.Start(context.Background(), componenttest.NewNopHost()))
	tb.Cleanup(func() { require.NoError(tb, p.Shutdown(context.Background())) })
	return p, sink
}

// TestFileIsDeployConfigPlusProcessor: the file is deploy/config.yaml (the
// DaemonSet's config: same receiver, exporter, extension, memory limiter
// and batch) with the processor added to the pipeline before batch and
// nothing else changed, so the DaemonSet's manifest runs it as it is.
func TestFileIsDeployConfigPlusProcessor(t *testing.T) {
	compat, err := confmaptest.LoadConf(configFile)
	require.NoError(t, err)
	deploy, err := confmaptest.LoadConf(deployFile)
	require.NoError(t, err)
	const procs = "service::pipelines::metrics::processors"
	for _, k := range deploy.AllKeys() {
		if k == procs {
			continue
		}
		assert.Equal(t, deploy.Get(k), compat.Get(k), "%s differs from deploy/config.yaml's", k)
	}
	for _, k := range compat.AllKeys() {
		if k != procs && !strings.HasPrefix(k, "processors::"+processorName+"::") {
			assert.True(t, deploy.IsSet(k), "%s is not in deploy/config.yaml", k)
		}
	}
	var want []any
	for _, p := range deploy.Get(procs).([]any) {
		if p == "batch" {
			want = append(want, processorName)
		}
		want = append(want, p)
	}
	assert.Equal(t, want, compat.Get(procs))
}

// point is one data point, flattened.
type point struct {
	res, name string
	unit      string
	kind      kind
	cumul     bool // cumulative temporality (sums)
	attrs     map[string]string
	value     float64
	start, ts pcommon.Timestamp
}

func (p point) key() string { return p.res + "|" + p.name + "|" + attrKey(p.attrs) }

func attrKey(m map[string]string) string {
	ks := make([]string, 0, len(m))
	for k, v := range m {
		ks = append(ks, k+"="+v)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

func flatten(t *testing.T, md pmetric.Metrics) []point {
	t.Helper()
	var out []point
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		ra := map[string]string{}
		rm.Resource().Attributes().Range(func(k string, v pcommon.Value) bool { ra[k] = v.AsString(); return true })
		res := attrKey(ra)
		for j := 0; j < rm.ScopeMetrics().Len(); j++ {
			ms := rm.ScopeMetrics().At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				var dps pmetric.NumberDataPointSlice
				var kd kind
				cumul := false
				switch m.Type() {
				case pmetric.MetricTypeGauge:
					dps, kd = m.Gauge().DataPoints(), gauge
				case pmetric.MetricTypeSum:
					dps, kd = m.Sum().DataPoints(), updown
					if m.Sum().IsMonotonic() {
						kd = counter
					}
					cumul = m.Sum().AggregationTemporality() == pmetric.AggregationTemporalityCumulative
				default:
					t.Fatalf("%s: a %s: no golden metric is one", m.Name(), m.Type())
				}
				for d := 0; d < dps.Len(); d++ {
					dp := dps.At(d)
					a := map[string]string{}
					dp.Attributes().Range(func(k string, v pcommon.Value) bool { a[k] = v.AsString(); return true })
					v := dp.DoubleValue()
					if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
						v = float64(dp.IntValue())
					}
					out = append(out, point{
						res: res, name: m.Name(), unit: m.Unit(), kind: kd, cumul: cumul,
						attrs: a, value: v, start: dp.StartTimestamp(), ts: dp.Timestamp(),
					})
				}
			}
		}
	}
	return out
}

func goldens(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "golden", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

func run(t *testing.T, file string) (in, out []point) {
	t.Helper()
	md, err := golden.ReadMetrics(file)
	require.NoError(t, err)
	in = flatten(t, md)
	p, sink := pipeline(t)
	require.NoError(t, p.ConsumeMetrics(context.Background(), md)) // md is changed in place
	require.Len(t, sink.AllMetrics(), 1)
	return in, flatten(t, sink.AllMetrics()[0])
}

// TestKubeletstatsView: on every golden, each point that comes out is
// accounted for by one rule of the file and carries the value that rule
// gives, and no point of ours is lost:
//   - a metric kubeletstats names otherwise (renamed): its points under
//     kubeletstats' name with kubeletstats' attribute names, same values;
//   - container.cpu.time: one point per container, the sum of its modes,
//     no attribute (kubeletstats' total);
//   - our paging faults, kept, and kubeletstats' page_faults (major +
//     minor, the kernel's pgfault) and major_page_faults (major) from them:
//     one point each, gauges of unit 1;
//   - every other point unchanged (name, unit, kind, attributes, value).
func TestKubeletstatsView(t *testing.T) {
	counts := map[string]int{}
	for _, g := range goldens(t) {
		t.Run(filepath.Base(g), func(t *testing.T) {
			in, out := run(t, g)
			got := map[string]point{}
			for _, p := range out {
				_, dup := got[p.key()]
				require.False(t, dup, "two points %s", p.key())
				got[p.key()] = p
			}
			used := map[string]bool{}
			take := func(p point) (point, bool) {
				t.Helper()
				o, ok := got[p.key()]
				if !assert.True(t, ok, "no point %s out", p.key()) {
					return o, false
				}
				assert.False(t, used[p.key()], "point %s accounted for twice", p.key())
				used[p.key()] = true
				return o, true
			}
			cpu := map[string]float64{}       // resource -> sum of modes
			cpuPoint := map[string]point{}    // resource -> one of its points
			faults := map[string][2]float64{} // resource|our name -> all, major
			faultPoint := map[string]point{}
			for _, p := range in {
				switch {
				case renamed[p.name] != "":
					want := p
					want.name = renamed[p.name]
					want.attrs = map[string]string{}
					for k, v := range p.attrs {
						if r, ok := pointRenames[k]; ok {
							k = r
						}
						want.attrs[k] = v
					}
					if o, ok := take(want); ok {
						assert.Equal(t, p.value, o.value, "%s as %s", p.key(), want.name)
						assert.Equal(t, p.ts, o.ts, "%s", p.key())
						counts["renamed "+p.name]++
					}
				case p.name == "container.cpu.time":
					assert.Contains(t, []string{"user", "system"}, p.attrs["cpu.mode"], p.key())
					cpu[p.res] += p.value
					cpuPoint[p.res] = p
				default:
					if _, ok := pageFaults[p.name]; ok {
						k := p.res + "|" + p.name
						f := faults[k]
						f[0] += p.value
						switch p.attrs["system.paging.fault.type"] {
						case "major":
							f[1] += p.value
						case "minor":
						default:
							t.Errorf("%s: fault type %q", p.key(), p.attrs["system.paging.fault.type"])
						}
						faults[k] = f
						faultPoint[k] = p
					}
					// Unchanged.
					if o, ok := take(p); ok {
						assert.Equal(t, p, o, "%s changed", p.key())
						counts["unchanged"]++
					}
				}
			}
			for res, v := range cpu {
				want := cpuPoint[res]
				want.attrs = map[string]string{}
				if o, ok := take(want); ok {
					assert.InDelta(t, v, o.value, 1e-9, "%s: the sum of the modes", want.key())
					assert.Equal(t, counter, o.kind)
					assert.True(t, o.cumul)
					counts["container.cpu.time summed"]++
				}
			}
			for k, f := range faults {
				src := faultPoint[k]
				for i, name := range pageFaults[src.name] {
					want := src
					want.name = name
					want.attrs = map[string]string{}
					if o, ok := take(want); ok {
						assert.Equal(t, f[i], o.value, "%s", want.key())
						assert.Equal(t, gauge, o.kind, "%s", want.key())
						assert.Equal(t, "1", o.unit, "%s", want.key())
						counts["made "+name]++
					}
				}
			}
			for _, p := range out {
				assert.True(t, used[p.key()], "point %s out, from no rule", p.key())
			}
		})
	}
	// Each rule met points in the goldens, so that none is untested.
	for ours := range renamed {
		assert.Positive(t, counts["renamed "+ours], "no golden has %s", ours)
	}
	for _, pf := range pageFaults {
		for _, name := range pf {
			assert.Positive(t, counts["made "+name], "no golden gave %s", name)
		}
	}
	assert.Positive(t, counts["container.cpu.time summed"])
	assert.Positive(t, counts["unchanged"])
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%s: %d points", k, counts[k])
	}
}

// TestKubeletstatsNames: every metric that comes out under one of
// kubeletstats' names has kubeletstats' point attributes (its volume
// metrics: k8s.volume.name and k8s.volume.type, its resource's), and the
// Prometheus name and type kubeletstats' gets (what queries written for it
// select); none of our conventions' network or ephemeral storage
// attributes is left on them; and every kubeletstats metric we have a
// counterpart for comes out of some golden.
func TestKubeletstatsNames(t *testing.T) {
	seen := map[string]int{}
	for _, g := range goldens(t) {
		_, out := run(t, g)
		for _, p := range out {
			def, ok := kubeletstats[p.name]
			if !ok {
				continue
			}
			seen[p.name]++
			assert.False(t, notOurs[p.name], "%s out, which we have no counterpart for", p.name)
			assert.Equal(t, promName(t, p.name, def.unit, def.kind), promName(t, p.name, p.unit, p.kind), "%s: Prometheus name (unit %q, %s)", p.name, p.unit, p.kind)
			assert.Equal(t, def.kind.prometheus(), p.kind.prometheus(), "%s: Prometheus type", p.name)
			if isVolume(p.name) {
				assert.NotEmpty(t, p.attrs["k8s.volume.name"], "%s: %v", p.name, p.attrs)
				for k := range p.attrs {
					assert.True(t, volumeLabels[k], "%s: attribute %s", p.name, k)
				}
				continue
			}
			keys := make([]string, 0, len(p.attrs))
			for k := range p.attrs {
				keys = append(keys, k)
			}
			assert.ElementsMatch(t, def.attrs, keys, "%s (%s): point attributes", p.name, filepath.Base(g))
			if def.attrs != nil {
				for _, k := range def.attrs {
					assert.NotEmpty(t, p.attrs[k], "%s: %s", p.name, k)
				}
			}
			if p.name == "k8s.pod.network.io" || p.name == "k8s.node.network.io" {
				assert.Contains(t, []string{"receive", "transmit"}, p.attrs["direction"], "kubeletstats' enum")
			}
		}
	}
	var missing []string
	for name := range kubeletstats {
		if !notOurs[name] && seen[name] == 0 {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	assert.Empty(t, missing, "kubeletstats metrics we have a counterpart for that no golden gave under kubeletstats' name")
	t.Logf("%d of kubeletstats' %d metrics out under its names (%d it has that we do not)", len(seen), len(kubeletstats), len(notOurs))
}

// TestConventionsKeptElsewhere: the conventions' network attributes stay on
// the metrics kubeletstats does not have (our packet counts and drops, a
// container's network, a GPU's PCIe and NVLink I/O): the rename is
// kubeletstats' metrics' only.
func TestConventionsKeptElsewhere(t *testing.T) {
	n := 0
	for _, g := range goldens(t) {
		_, out := run(t, g)
		for _, p := range out {
			if _, ok := kubeletstats[p.name]; ok {
				for ours := range pointRenames {
					assert.NotContains(t, p.attrs, ours, "%s", p.name)
				}
				continue
			}
			if strings.Contains(p.name, ".network.") || p.name == "hw.gpu.io" {
				assert.NotEmpty(t, p.attrs["network.io.direction"], "%s: %v", p.name, p.attrs)
				assert.NotContains(t, p.attrs, "direction", p.name)
				n++
			}
		}
	}
	assert.Positive(t, n)
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// recorderTables are every family's recorder table (family.go): the one
// place a family names its metrics.
var recorderTables = map[string]any{
	"cpuRec": cpuRec, "memoryRec": memoryRec, "memoryPeakRec": memoryPeakRec, "bandwidthRec": bandwidthRec,
	"tasksRec": tasksRec, "psiRec": psiRec, "pidsRec": pidsRec, "netRec": netRec, "blkioRec": blkioRec,
	"hugetlbRec": hugetlbRec, "fdRec": fdRec, "filesystemRec": filesystemRec, "uptimeRec": uptimeRec,
	"acceleratorRec": acceleratorRec,
}

// recorders are the function names of the non-nil recorders in v (a
// table: arrays and structs of method expressions), by where each sits.
func recorders(v reflect.Value, at string, out map[string]string) {
	switch v.Kind() {
	case reflect.Array:
		for i := range v.Len() {
			recorders(v.Index(i), at+"["+string(rune('0'+i))+"]", out)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			recorders(v.Field(i), at+"."+v.Type().Field(i).Name, out)
		}
	case reflect.Func:
		if !v.IsNil() {
			out[at] = runtime.FuncForPC(v.Pointer()).Name()
		}
	}
}

func metricsConfig(t *testing.T, set string) *metadata.MetricsConfig {
	t.Helper()
	cfg := allMetrics(t)
	if set == "all" {
		return &cfg.Metrics
	}
	m := &cfg.Metrics
	v := reflect.ValueOf(m).Elem()
	for i := range v.NumField() {
		v.Field(i).FieldByName("Enabled").SetBool(false)
	}
	return m
}

// Every recorder of every table records a configured metric, which
// enabled reports on when the metric is on and off when it is off; and
// every metric but the GPU devices' hw.* (recorded per device by gpuState,
// not per entity) is in exactly one table entry per kind: a family names
// its metrics in its table only.
func TestRecorderTables(t *testing.T) {
	require.NoError(t, checkRecorders(), "Start's check that recorders resolve in this build")
	all, none := metricsConfig(t, "all"), metricsConfig(t, "none")
	recs := map[string]string{}
	for name, table := range recorderTables {
		recorders(reflect.ValueOf(table), name, recs)
	}
	require.NotEmpty(t, recs)
	seen := map[string][]string{}
	for at, fn := range recs {
		field, ok := recordedField(fn)
		if !assert.True(t, ok, "%s: %s is not a MetricsBuilder recorder", at, fn) {
			continue
		}
		assert.True(t, recorderEnabled(all, fn), "%s (%s): not enabled with every metric on", at, field)
		assert.False(t, recorderEnabled(none, fn), "%s (%s): enabled with every metric off", at, field)
		seen[field] = append(seen[field], at)
	}
	typ := reflect.TypeFor[metadata.MetricsConfig]()
	for i := range typ.NumField() {
		field := typ.Field(i).Name
		if strings.HasPrefix(field, "Hw") {
			assert.Empty(t, seen[field], "hw.* device metrics are recorded by gpuState")
			continue
		}
		assert.Len(t, seen[field], 1, "%s (%s) must be in exactly one table entry: %v",
			field, typ.Field(i).Tag.Get("mapstructure"), seen[field])
	}
	// What enabled cannot resolve is never enabled.
	assert.True(t, enabled(all, memoryRec[kindPod].usage))
	assert.False(t, enabled(none, memoryRec[kindPod].usage))
	assert.False(t, enabled(all, func(*metadata.MetricsBuilder) {}))
	assert.False(t, enabled(all, gaugeFn(nil)))
	assert.False(t, enabled(all, nil))
}

// A value one family hands another (handoff) is read by its producer
// before its consumer reads it: the producer comes first in familyOrder.
func TestHandoffOrder(t *testing.T) {
	at := func(mk newFamily) int {
		i := slices.IndexFunc(familyOrder[:], func(f newFamily) bool {
			return reflect.ValueOf(f).Pointer() == reflect.ValueOf(mk).Pointer()
		})
		require.GreaterOrEqual(t, i, 0, "not in familyOrder")
		return i
	}
	for _, h := range []struct {
		field    string
		from, to newFamily
	}{
		{"cpuUsage", newCPUFamily, newTasksFamily},
		{"cpuCores", newCPUFamily, newBandwidthFamily},
		{"oomKills", newMemoryFamily, newEventsFamily},
	} {
		assert.Less(t, at(h.from), at(h.to), "handoff.%s: its producer must come before its consumer", h.field)
	}
}

// runStartRec is exactly container.uptime and the container's monotonic
// sums in metadata.yaml: the metrics whose points depend on a run.
func TestRunStartRec(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "metadata.yaml"))
	require.NoError(t, err)
	var md struct {
		Metrics map[string]struct {
			Sum *struct {
				Monotonic bool `yaml:"monotonic"`
			} `yaml:"sum"`
		} `yaml:"metrics"`
	}
	require.NoError(t, yaml.Unmarshal(data, &md))
	want := []string{"container.uptime"}
	for name, m := range md.Metrics {
		if strings.HasPrefix(name, "container.") && m.Sum != nil && m.Sum.Monotonic {
			want = append(want, name)
		}
	}
	tags := map[string]string{} // MetricsConfig field -> metric name
	typ := reflect.TypeFor[metadata.MetricsConfig]()
	for i := range typ.NumField() {
		tags[typ.Field(i).Name] = typ.Field(i).Tag.Get("mapstructure")
	}
	var got []string
	for _, rec := range runStartRec {
		field, ok := recordedField(runtime.FuncForPC(reflect.ValueOf(rec).Pointer()).Name())
		require.True(t, ok)
		got = append(got, tags[field])
	}
	assert.ElementsMatch(t, want, got)
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"fmt"
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

// recorderTables are every family's recorder table built from m
// (family.go): the one place a family names its metrics.
func recorderTables(m *metadata.MetricsConfig) map[string]any {
	return map[string]any{
		"cpuTable": cpuTable(m), "memoryTable": memoryTable(m), "memoryPeakTable": memoryPeakTable(m),
		"bandwidthTable": bandwidthTable(m), "tasksTable": tasksTable(m), "psiTable": psiTable(m),
		"pidsTable": pidsTable(m), "netTable": netTable(m), "blkioTable": blkioTable(m),
		"hugetlbTable": hugetlbTable(m), "fdTable": fdTable(m), "filesystemTable": filesystemTable(m),
		"uptimeTable": uptimeTable(m), "acceleratorTable": acceleratorTable(m),
	}
}

// row is a recorder found in a table: where it sits, the MetricsConfig
// field its method records, and whether the table has it on.
type row struct {
	at, field string
	on        bool
}

// rows are the recorders of v (a table: arrays, slices and structs of
// recorder[F]), the zero ones (a kind without the metric) left out.
func rows(t *testing.T, v reflect.Value, at string, out *[]row) {
	t.Helper()
	switch v.Kind() {
	case reflect.Array, reflect.Slice:
		for i := range v.Len() {
			rows(t, v.Index(i), fmt.Sprintf("%s[%d]", at, i), out)
		}
	case reflect.Struct:
		if strings.HasPrefix(v.Type().Name(), "recorder[") {
			fn := v.FieldByName("record")
			if fn.IsNil() {
				require.False(t, v.FieldByName("on").Bool(), "%s: on without a recorder", at)
				return
			}
			name := runtime.FuncForPC(fn.Pointer()).Name()
			field, ok := recordedField(name)
			require.True(t, ok, "%s: %s is not a MetricsBuilder recorder", at, name)
			*out = append(*out, row{at: at, field: field, on: v.FieldByName("on").Bool()})
			return
		}
		for i := range v.NumField() {
			rows(t, v.Field(i), at+"."+v.Type().Field(i).Name, out)
		}
	}
}

// recordedField is the MetricsConfig field of the metric that the
// MetricsBuilder method fn (its full name, as runtime.FuncForPC gives it)
// records: RecordK8sNodeMemoryUsageDataPoint records K8sNodeMemoryUsage
// (mdatagen's naming).
func recordedField(fn string) (string, bool) {
	const recv = "metadata.(*MetricsBuilder).Record"
	i := strings.LastIndex(fn, recv)
	if i < 0 {
		return "", false
	}
	return strings.CutSuffix(fn[i+len(recv):], "DataPoint")
}

// tableRows are the recorders of every table built from m.
func tableRows(t *testing.T, m *metadata.MetricsConfig) []row {
	t.Helper()
	var out []row
	for name, table := range recorderTables(m) {
		rows(t, reflect.ValueOf(table), name, &out)
	}
	return out
}

// onlyMetric is a MetricsConfig with the one field named on and every other off.
func onlyMetric(t *testing.T, field string) *metadata.MetricsConfig {
	t.Helper()
	m := metricsConfig(t, "none")
	if field != "" {
		m2 := *m
		reflect.ValueOf(&m2).Elem().FieldByName(field).FieldByName("Enabled").SetBool(true)
		return &m2
	}
	return m
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

// Every row of every table pairs a metric's Enabled with the method that
// records that very metric: with one metric on, exactly the rows of its
// method are on. Every metric but the GPU devices' hw.* (recorded per
// device by gpuState, not per entity) is in exactly one row per kind: a
// family names its metrics in its table only.
func TestRecorderTables(t *testing.T) {
	all := tableRows(t, metricsConfig(t, "all"))
	require.NotEmpty(t, all)
	seen := map[string][]string{}
	for _, r := range all {
		assert.True(t, r.on, "%s (%s): off with every metric on", r.at, r.field)
		seen[r.field] = append(seen[r.field], r.at)
	}
	for _, r := range tableRows(t, metricsConfig(t, "none")) {
		assert.False(t, r.on, "%s (%s): on with every metric off", r.at, r.field)
	}
	typ := reflect.TypeFor[metadata.MetricsConfig]()
	for i := range typ.NumField() {
		field := typ.Field(i).Name
		if strings.HasPrefix(field, "Hw") {
			assert.Empty(t, seen[field], "hw.* device metrics are recorded by gpuState")
			continue
		}
		assert.Len(t, seen[field], 1, "%s (%s) must be in exactly one table row: %v",
			field, typ.Field(i).Tag.Get("mapstructure"), seen[field])
		for _, r := range tableRows(t, onlyMetric(t, field)) {
			assert.Equal(t, r.field == field, r.on, "with only %s on, %s records %s: its row must hold its own metric's Enabled",
				field, r.at, r.field)
		}
	}
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

// runStartOn is on for exactly container.uptime and the container's
// monotonic sums in metadata.yaml: the metrics whose points depend on a
// run. Each metric is turned on alone.
func TestRunStartOn(t *testing.T) {
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
	var got []string
	typ := reflect.TypeFor[metadata.MetricsConfig]()
	for i := range typ.NumField() {
		if runStartOn(onlyMetric(t, typ.Field(i).Name)) {
			got = append(got, typ.Field(i).Tag.Get("mapstructure"))
		}
	}
	assert.ElementsMatch(t, want, got)
	assert.False(t, runStartOn(onlyMetric(t, "")), "no metric on: no run followed")
}

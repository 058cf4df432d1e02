// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package e2e

import (
	"bytes"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/require"
)

// promSample is one sample of the Prometheus text format.
type promSample struct {
	labels map[string]string
	value  float64
	at     time.Time // zero: no timestamp
}

// parseExposition parses the Prometheus text format (the kubelet's
// /metrics/resource and /metrics/cadvisor, cAdvisor's own) into counter, gauge and untyped
// samples by metric name.
func parseExposition(t *testing.T, b []byte) map[string][]promSample {
	t.Helper()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	require.NoError(t, err)
	out := map[string][]promSample{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			s := promSample{labels: map[string]string{}}
			for _, l := range m.GetLabel() {
				s.labels[l.GetName()] = l.GetValue()
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				s.value = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				s.value = m.GetGauge().GetValue()
			case dto.MetricType_UNTYPED:
				s.value = m.GetUntyped().GetValue()
			default:
				continue
			}
			if m.TimestampMs != nil {
				s.at = time.UnixMilli(m.GetTimestampMs())
			}
			out[name] = append(out[name], s)
		}
	}
	return out
}

// find returns the one sample of name whose labels include want.
func find(m map[string][]promSample, name string, want map[string]string) (promSample, bool) {
	var out []promSample
	for _, s := range m[name] {
		ok := true
		for k, v := range want {
			ok = ok && s.labels[k] == v
		}
		if ok {
			out = append(out, s)
		}
	}
	if len(out) != 1 {
		return promSample{}, false
	}
	return out[0], true
}

func TestParseExposition(t *testing.T) {
	m := parseExposition(t, []byte(`# HELP container_cpu_usage_seconds_total [STABLE] x
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="burn",namespace="workloads",pod="cpu-burner-1"} 12.5 1700000000123
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 4.2e+08 1700000000456
`))
	s, ok := find(m, "container_cpu_usage_seconds_total", map[string]string{"container": "burn"})
	require.True(t, ok)
	require.Equal(t, 12.5, s.value)
	require.Equal(t, "cpu-burner-1", s.labels["pod"])
	require.Equal(t, time.UnixMilli(1700000000123), s.at)
	s, ok = find(m, "node_memory_working_set_bytes", nil)
	require.True(t, ok)
	require.Equal(t, 4.2e8, s.value)
	_, ok = find(m, "container_cpu_usage_seconds_total", map[string]string{"container": "nope"})
	require.False(t, ok)
}

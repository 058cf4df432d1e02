// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// mergeEqualResources merges the resource entries of md whose attributes
// are equal into the first of them: a scope the first lacks moves over, a
// metric it lacks too, and the points of a metric both have are appended
// to the first's, each keeping its own start time. gpuState.scrape emits every
// GPU device as an entry of its own (its cumulative points start when the
// device was first seen), while the devices' hw.* attributes are on the
// points: devices of one owner (none: the node's resource) would otherwise
// repeat a resource, which a resource may not do in one batch.
func mergeEqualResources(md pmetric.Metrics) {
	rms := md.ResourceMetrics()
	if rms.Len() < 2 {
		return
	}
	first := make(map[string]pmetric.ResourceMetrics, rms.Len())
	var b strings.Builder
	rms.RemoveIf(func(rm pmetric.ResourceMetrics) bool {
		k := resourceKey(&b, rm.Resource().Attributes())
		dst, ok := first[k]
		if !ok {
			first[k] = rm
			return false
		}
		mergeScopes(dst.ScopeMetrics(), rm.ScopeMetrics())
		return true
	})
}

// resourceKey is attrs as a string that equal attribute sets share: the
// sorted keys with their values.
func resourceKey(b *strings.Builder, attrs pcommon.Map) string {
	keys := make([]string, 0, attrs.Len())
	for k := range attrs.All() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b.Reset()
	for _, k := range keys {
		v, _ := attrs.Get(k)
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(v.Type().String())
		b.WriteByte(0)
		b.WriteString(v.AsString())
		b.WriteByte(0)
	}
	return b.String()
}

// mergeScopes moves src's scopes, metrics and points into dst.
func mergeScopes(dst, src pmetric.ScopeMetricsSlice) {
	for i := 0; i < src.Len(); i++ {
		s := src.At(i)
		d, ok := findScope(dst, s.Scope())
		if !ok {
			s.MoveTo(dst.AppendEmpty())
			continue
		}
		for j := 0; j < s.Metrics().Len(); j++ {
			mergeMetric(d.Metrics(), s.Metrics().At(j))
		}
	}
}

func findScope(sms pmetric.ScopeMetricsSlice, sc pcommon.InstrumentationScope) (pmetric.ScopeMetrics, bool) {
	for i := 0; i < sms.Len(); i++ {
		if s := sms.At(i).Scope(); s.Name() == sc.Name() && s.Version() == sc.Version() {
			return sms.At(i), true
		}
	}
	return pmetric.ScopeMetrics{}, false
}

// mergeMetric moves m into ms: its points into the metric of the same name
// and type, else the whole metric.
func mergeMetric(ms pmetric.MetricSlice, m pmetric.Metric) {
	for i := 0; i < ms.Len(); i++ {
		d := ms.At(i)
		if d.Name() != m.Name() || d.Type() != m.Type() {
			continue
		}
		switch m.Type() {
		case pmetric.MetricTypeGauge:
			m.Gauge().DataPoints().MoveAndAppendTo(d.Gauge().DataPoints())
			return
		case pmetric.MetricTypeSum:
			m.Sum().DataPoints().MoveAndAppendTo(d.Sum().DataPoints())
			return
		}
	}
	m.MoveTo(ms.AppendEmpty())
}

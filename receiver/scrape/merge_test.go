// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// TestMergeEqualResources: entries with equal attributes (in any order)
// become the first one; a metric both have gets both points, each with its
// own start time; a metric one lacks moves over; other resources stay.
func TestMergeEqualResources(t *testing.T) {
	md := pmetric.NewMetrics()
	add := func(attrs map[string]any, name string, start pcommon.Timestamp, v int64) {
		rm := md.ResourceMetrics().AppendEmpty()
		require.NoError(t, rm.Resource().Attributes().FromRaw(attrs))
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName("s")
		m := sm.Metrics().AppendEmpty()
		m.SetName(name)
		dp := m.SetEmptySum().DataPoints().AppendEmpty()
		dp.SetStartTimestamp(start)
		dp.SetIntValue(v)
	}
	node := map[string]any{"k8s.node.name": "n"}
	owner := map[string]any{"k8s.node.name": "n", "container.id": "c"}
	add(node, "k8s.node.memory.usage", 1, 10)
	add(node, "hw.energy", 2, 20)
	add(owner, "hw.energy", 3, 30)
	add(map[string]any{"container.id": "c", "k8s.node.name": "n"}, "hw.energy", 4, 40)
	add(node, "hw.energy", 5, 50)

	mergeEqualResources(md)
	require.Equal(t, 2, md.ResourceMetrics().Len())
	got := map[string][][2]int64{} // resource's container.id/metric -> (start, value)
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		require.Equal(t, 1, rm.ScopeMetrics().Len())
		c, _ := rm.Resource().Attributes().Get("container.id")
		ms := rm.ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			dps := ms.At(j).Sum().DataPoints()
			for k := 0; k < dps.Len(); k++ {
				key := c.Str() + "/" + ms.At(j).Name()
				got[key] = append(got[key], [2]int64{int64(dps.At(k).StartTimestamp()), dps.At(k).IntValue()})
			}
		}
	}
	assert.Equal(t, map[string][][2]int64{
		"/k8s.node.memory.usage": {{1, 10}},
		"/hw.energy":             {{2, 20}, {5, 50}},
		"c/hw.energy":            {{3, 30}, {4, 40}},
	}, got)
}

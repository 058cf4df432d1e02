// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// points collects the values of one resource's metrics, keyed by metric name
// and, for cpu.time and paging.faults, "name/attribute value".
func points(m pmetric.Metrics, attr, val string) map[string]float64 {
	out := map[string]float64{}
	eachMetric(m, attr, val, func(mt pmetric.Metric) {
		var dps pmetric.NumberDataPointSlice
		if mt.Type() == pmetric.MetricTypeSum {
			dps = mt.Sum().DataPoints()
		} else {
			dps = mt.Gauge().DataPoints()
		}
		for k := 0; k < dps.Len(); k++ {
			dp := dps.At(k)
			key := mt.Name()
			dp.Attributes().Range(func(_ string, v pcommon.Value) bool {
				key += "/" + v.AsString()
				return true
			})
			v := dp.DoubleValue()
			if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
				v = float64(dp.IntValue())
			}
			out[key] = v
		}
	})
	return out
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package calc // import "github.com/containerstats/containerstatsreceiver/internal/calc"

import "time"

// Sample is a cumulative counter read at a time.
type Sample struct {
	Value uint64
	At    time.Time
}

// Rate returns the counter's increase per second between prev and cur, over
// the real elapsed time between the two reads. ok is false when there is no
// meaningful rate: no elapsed time, or the counter went backwards (the
// cgroup was recreated under the same name).
func Rate(prev, cur Sample) (perSecond float64, ok bool) {
	dt := cur.At.Sub(prev.At)
	if dt <= 0 || cur.Value < prev.Value {
		return 0, false
	}
	return float64(cur.Value-prev.Value) / dt.Seconds(), true
}

// CPUCores turns two readings of a nanosecond CPU-time counter into the
// average number of cores used between them.
func CPUCores(prev, cur Sample) (float64, bool) {
	r, ok := Rate(prev, cur)
	return r / 1e9, ok
}

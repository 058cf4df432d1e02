// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package calc // import "github.com/containerstats/containerstatsreceiver/internal/calc"

import (
	"math"
	"time"
)

// LoadWindow is the time constant of the load average: cAdvisor's
// container_cpu_load_average_10s.
const LoadWindow = 10 * time.Second

// LoadAverage is an exponentially smoothed count of running threads, as
// cAdvisor computes container_cpu_load_average_10s but over the real time
// between samples (cAdvisor freezes the interval at start-up) and unscaled
// (cAdvisor's stats API exports it x1000). The zero value has no sample.
type LoadAverage struct {
	value float64
	at    time.Time
	ok    bool
}

// Update feeds the running-thread count n observed at time at and returns
// the new load. The first sample initializes the load to n; after that
// load = load*d + n*(1-d) with d = exp(-Δt/LoadWindow), Δt the time since
// the previous sample. A sample at or before the previous one (a clock
// step back) leaves the load unchanged and does not move its time.
func (l *LoadAverage) Update(n float64, at time.Time) float64 {
	if !l.ok {
		l.value, l.at, l.ok = n, at, true
		return l.value
	}
	dt := at.Sub(l.at)
	if dt <= 0 {
		return l.value
	}
	d := math.Exp(-dt.Seconds() / LoadWindow.Seconds())
	l.value = l.value*d + n*(1-d)
	l.at = at
	return l.value
}

// Value returns the current load and whether there was any sample.
func (l *LoadAverage) Value() (float64, bool) { return l.value, l.ok }

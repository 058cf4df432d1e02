// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/containerstats/containerstatsreceiver/internal/calc"
)

// seriesKey identifies one reported entity across scrapes.
type seriesKey struct {
	kind cgroupKind
	id   string // pod UID or container ID; "" for the node
}

type cgroupKind uint8

const (
	kindNode cgroupKind = iota
	kindPod
	kindContainer
)

// series is what the scraper remembers about an entity between scrapes.
type series struct {
	start pcommon.Timestamp // start time of its cumulative points
	// runtimeStart: start came from the runtime (it is never replaced).
	runtimeStart bool
	lastCPU      calc.Sample // previous total CPU time, for the usage rate
	hasCPU       bool
	load         calc.LoadAverage // running threads smoothed over 10 s (containers)
	threads      *threadStates    // thread states of the last read (containers; tasks.go)
	oom          *oomTree         // v1 pods: per-cgroup OOM kill counters of the subtree
	seen         uint64           // generation of the last scrape that saw it
}

// get returns the state of key, creating it with start time start.
func (s *Scraper) get(key seriesKey, start pcommon.Timestamp) *series {
	st, ok := s.series[key]
	if !ok {
		st = &series{start: start}
		s.series[key] = st
	}
	st.seen = s.gen
	return st
}

// evict forgets entities the last scrape did not see, so state stays
// bounded on a node where containers come and go.
func (s *Scraper) evict() {
	for k, st := range s.series {
		if st.seen != s.gen {
			delete(s.series, k)
		}
	}
}

// recorderCache holds each entity kind's bound MetricsBuilder methods.
type recorderCache struct {
	cpu       [3]*cpuRecorders
	bandwidth [3]*bandwidthRecorders
	memory    [3]*memoryRecorders
	psi       [3]*psiRecorders
}

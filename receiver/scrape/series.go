// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/calc"
	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
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
	cpuSplit     calc.CPUSplit    // CPU time by mode last reported (cpu.go)
	load         calc.LoadAverage // running threads smoothed over 10 s (containers)
	threads      *threadStates    // thread states of the last read (containers; tasks.go)
	oom          *oomTree         // v1 pods: per-cgroup OOM kill counters of the subtree
	seen         uint64           // generation of the last scrape that saw it
	ioPts        int              // block I/O points of the last scrape (a device count the plan cannot know; blkio.go)
	rel          string           // cgroup path when last seen, for eviction
}

// get returns the state of key at cgroup path rel, creating it with start
// time start.
func (s *Scraper) get(key seriesKey, rel string, start pcommon.Timestamp) *series {
	st, ok := s.series[key]
	if !ok {
		st = &series{start: start}
		s.series[key] = st
	}
	st.seen, st.rel = s.gen, rel
	return st
}

// evict forgets entities the last scrape did not see, so state stays
// bounded on a node where containers come and go. An entity below a
// directory discovery could not list was not seen, but is not gone: it
// keeps its state (start time, last CPU sample), and its points count in
// that directory's partial error.
func (s *Scraper) evict(tree *cgroupfs.Tree, errs *scrapererror.ScrapeErrors) {
	lost := make([]int, len(tree.Unlisted))
	for k, st := range s.series {
		if st.seen == s.gen {
			continue
		}
		if i := tree.UnlistedAbove(st.rel); i >= 0 {
			lost[i] += s.plan[k.kind].points()
			continue
		}
		delete(s.series, k)
	}
	for i, u := range tree.Unlisted {
		errs.AddPartial(lost[i], u)
	}
}

// mbT is the MetricsBuilder as a method receiver: the recorder tables
// (cpuRec, bandwidthRec, memoryRec, psiRec) hold its methods as method
// expressions, indexed by entity kind, the way kubeletstats'
// internal/metadata/metrics.go does: static, no binding per scraper, no
// allocation per call.
type mbT = *metadata.MetricsBuilder

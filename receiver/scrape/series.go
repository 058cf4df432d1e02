// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
)

// seriesKey identifies one reported entity across scrapes.
type seriesKey struct {
	kind cgroupKind
	id   string // pod UID or container ID; "" for the node; a system container's name
}

type cgroupKind uint8

const (
	kindNode cgroupKind = iota
	kindPod
	kindContainer
	// kindSystem is one of the node's system containers (system.go): the
	// kubelet's, the runtime's, the pods' root and misc cgroups. Only the
	// CPU and memory families have metrics for it; every other family's
	// tables have no entry at its index, so it records and costs nothing
	// there.
	kindSystem
)

// series is what the scraper remembers about an entity between scrapes:
// its start time and when it was seen, and each family's state (fam, by the
// family's slot; family.go).
type series struct {
	start pcommon.Timestamp // start time of its cumulative points
	// runtimeStart: start came from the runtime (it is never replaced).
	runtimeStart bool
	seen         uint64 // generation of the last scrape that saw it
	// inst is a standalone container's cgroup instance (its directory's
	// inode, cgroupfs.Reader.Instance; 0: not tracked) and runStart the
	// start of that run, when /proc told it (instance.go).
	inst     uint64
	runStart time.Time
	rel      string     // cgroup path when last seen, for eviction
	fam      []famState // per family, by slot
}

// get returns the state of key at cgroup path rel, creating it with start
// time start.
func (s *Scraper) get(key seriesKey, rel string, start pcommon.Timestamp) *series {
	st, ok := s.series[key]
	if !ok {
		st = &series{start: start, fam: make([]famState, len(s.families))}
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
			lost[i] += s.entityPoints(k.kind, st)
			continue
		}
		delete(s.series, k)
	}
	for i, u := range tree.Unlisted {
		errs.AddPartial(lost[i], u)
	}
}

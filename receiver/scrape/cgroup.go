// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
)

// entity is one thing a scrape reports: the node, a pod or a container.
type entity struct {
	kind cgroupKind
	rel  string  // cgroup path relative to the hierarchy root
	name string  // for errors: "node", "pod <uid>", "container <id>"
	pod  string  // pod UID of a pod or of a container in one, else ""
	st   *series // state kept between scrapes
}

// stats is everything read for one entity in one scrape.
type stats struct {
	cpu    cgroupfs.CPUStat
	cpuErr error
	mem    cgroupfs.MemoryStat
	memErr error
	cpuExt cpuExtra // throttling, limits, thread states, PSI (cpu.go, tasks.go, psi.go)
	pids   pidsRead // pids.go
	net    netRead  // network.go
}

// scrapeCgroup reads an entity's cgroup files, then records its points.
// Everything is read before anything is recorded, so a cgroup that vanishes
// half-way leaves nothing in the builder. It returns false when the cgroup
// vanished: its points are dropped and reported as a partial error. Other
// read errors cost the points of the group they belong to only.
func (s *Scraper) scrapeCgroup(now time.Time, e entity, errs *scrapererror.ScrapeErrors) bool {
	var st stats
	st.cpu, st.cpuErr = s.reader.CPU(e.rel)
	st.mem, st.memErr = s.readMemory(e)
	s.readCPUExtra(e, &st.cpuExt)
	s.readPids(e, &st.pids)
	s.readNet(e, &st.net)
	if errors.Is(st.cpuErr, cgroupfs.ErrVanished) || errors.Is(st.memErr, cgroupfs.ErrVanished) || st.cpuExt.vanished() {
		errs.AddPartial(cpuPoints+memoryPoints, fmt.Errorf("%s: %w", e.name, cgroupfs.ErrVanished))
		return false
	}
	ts := pcommon.NewTimestampFromTime(now)
	if st.cpuErr != nil {
		errs.AddPartial(cpuPoints, fmt.Errorf("%s: %w", e.name, st.cpuErr))
	} else {
		s.recordCPU(ts, now, e, st.cpu)
	}
	if st.memErr != nil {
		errs.AddPartial(memoryPoints, fmt.Errorf("%s: %w", e.name, st.memErr))
	} else {
		s.recordMemory(ts, e, st.mem, errs)
	}
	s.recordCPUExtra(ts, now, e, &st.cpuExt, errs)
	s.recordPids(ts, e, &st.pids, errs)
	s.recordNet(ts, e, &st.net, errs)
	return true
}

func clampInt64(v uint64) int64 {
	if v > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(v)
}

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
	// standalone: a container in no pod (neither its path nor the runtime
	// names one); only those can have container-level network (network.go).
	standalone bool
}

// stats is everything read for one entity in one scrape.
type stats struct {
	cpu    cgroupfs.CPUStat
	cpuErr error
	mem    cgroupfs.MemoryStat
	memErr error
	cpuExt cpuExtra    // throttling, limits, thread states, PSI (cpu.go, tasks.go, psi.go)
	pids   pidsRead    // pids.go
	net    netRead     // network.go
	io     ioRead      // blkio.go
	huge   hugetlbRead // hugetlb.go
	fds    fdRead      // fds.go
}

// scrapeCgroup reads an entity's cgroup files, then records its points.
// What it reads is the kind's plan (plan.go): the files its enabled metrics
// need, nothing else. Everything is read before anything is recorded, so a
// cgroup that vanishes half-way leaves nothing in the builder. It returns
// false when the cgroup vanished: every point the entity would have had is
// dropped and counted in one partial error naming what vanished. Other read
// errors cost the points of the group they belong to only.
func (s *Scraper) scrapeCgroup(now time.Time, e entity, errs *scrapererror.ScrapeErrors) bool {
	p := &s.plan[e.kind]
	var st stats
	if p.cpu {
		st.cpu, st.cpuErr = s.reader.CPU(e.rel)
	}
	if p.mem.Any() {
		st.mem, st.memErr = s.readMemory(e, p.mem)
	}
	if p.cpu && st.cpuErr == nil {
		st.cpuExt.cpuUsage = st.cpu.Usage // lets the thread-state read skip idle containers (tasks.go)
	}
	s.readCPUExtra(e, p, &st.cpuExt)
	s.readPids(e, &st.pids)
	s.readNet(e, &st.net)
	s.readIO(e, &st.io)
	s.readHugetlb(e, &st.huge)
	s.readFDs(e, &st.fds)
	if err := st.vanished(); err != nil {
		errs.AddPartial(p.points()+e.st.ioPts+s.extraPoints(e.kind), fmt.Errorf("%s: %w", e.name, err))
		return false
	}
	ts := pcommon.NewTimestampFromTime(now)
	switch {
	case st.cpuErr != nil:
		errs.AddPartial(p.cpuPts, fmt.Errorf("%s: %w", e.name, st.cpuErr))
	case p.cpu:
		s.recordCPU(ts, now, e, st.cpu)
	}
	switch {
	case st.memErr != nil:
		errs.AddPartial(p.memPts, fmt.Errorf("%s: %w", e.name, st.memErr))
	case p.mem.Any() || e.kind == kindNode:
		s.recordMemory(ts, e, p, st.mem, errs)
	}
	s.recordCPUExtra(ts, now, e, p, &st.cpuExt, errs)
	s.recordPids(ts, e, &st.pids, errs)
	s.recordNet(ts, e, &st.net, errs)
	s.recordIO(ts, e, &st.io, errs)
	s.recordHugetlb(ts, e, &st.huge, errs)
	s.recordFDs(ts, e, &st.fds, errs)
	return true
}

// vanished returns the first error that says the cgroup is gone (it names
// the directory or file), or nil.
func (st *stats) vanished() error {
	for _, err := range [...]error{st.cpuErr, st.memErr, st.cpuExt.bwErr, st.cpuExt.tasksErr, st.cpuExt.psiErr, st.fds.err} {
		if errors.Is(err, cgroupfs.ErrVanished) {
			return err
		}
	}
	return nil
}

func clampInt64(v uint64) int64 {
	if v > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(v)
}

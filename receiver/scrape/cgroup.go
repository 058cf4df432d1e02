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
	"github.com/containerstats/containerstatsreceiver/internal/identity"
)

// entity is one thing a scrape reports: the node, a pod or a container.
type entity struct {
	kind cgroupKind
	rel  string  // cgroup path relative to the hierarchy root
	name string  // for errors: "node", "pod <uid>", "container <id>"
	id   string  // container ID of a container, pod UID of a pod, "" for the node
	pod  string  // pod UID of a pod or of a container in one, else ""
	st   *series // state kept between scrapes
	// standalone: a container in no pod (neither its path nor the runtime
	// names one); only those can have container-level network (network.go).
	standalone bool
	// ct is a container's identity (nil for the node and pods); cg its
	// cgroup (nil for the node and pods).
	ct *identity.Container
	cg *cgroupfs.Cgroup
	// podStart is a pod's creation time as the runtime gives it (its
	// sandbox's); zero when unknown and for other kinds.
	podStart time.Time

	now  time.Time         // the scrape's time
	ts   pcommon.Timestamp // now as the points' timestamp
	pass *pass             // the scrape's scratch (env.go)
	// hand is what the entity's families hand one another (env.go).
	hand handoff
}

// scrapeCgroup reads an entity through every family, then records its
// points (family.go). Each family reads only what the kind's enabled
// metrics need. Everything is read before anything is recorded, so a
// cgroup that vanishes half-way leaves nothing in the builder. It returns
// false when the cgroup vanished: every point the entity would have had is
// dropped and counted in one partial error naming what vanished. Other read
// errors cost the points of their family only.
func (s *Scraper) scrapeCgroup(p *pass, ent entity, errs *scrapererror.ScrapeErrors) bool {
	// The families get the entity by pointer: the pass's copy, which a
	// pointer to the argument would move to the heap once per entity.
	p.ent = ent
	e := &p.ent
	e.now, e.ts, e.pass = p.now, pcommon.NewTimestampFromTime(p.now), p
	if len(e.st.fam) != len(s.families) {
		e.st.fam = make([]famState, len(s.families))
	}
	for _, f := range s.families {
		f.read(e)
	}
	for _, f := range s.families {
		if err := f.readErr(); errors.Is(err, cgroupfs.ErrVanished) {
			errs.AddPartial(s.entityPoints(e.kind, e.st), fmt.Errorf("%s: %w", e.name, err))
			return false
		}
	}
	for _, f := range s.families {
		f.record(e, errs)
	}
	return true
}

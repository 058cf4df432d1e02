// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/containerevents"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// Container events (OOM kills, restarts; docs/logs.md, "Events") are a
// family of the scrape: internal/containerevents' Detector finds them in
// what the scrape observes (the tree it discovered, the OOM kill counters
// it read: the memory family's read of container.memory.oom_kills is
// reused, not read again; the runtime's listing), and the scrape publishes
// one scrape's records to Options.Events (the configuration's
// containerevents.Hub). With only a logs pipeline, the logs receiver runs
// this same scrape with every metric off (containerevents.Receiver). With
// only a metrics pipeline the sink is not Active and nothing is detected
// or kept.

// EventSink receives the scrape's events (containerevents.Hub). Active is
// asked once, in Start: false (no logs pipeline takes events from this
// configuration) turns detection off. Publish must not block.
type EventSink interface {
	Active() bool
	Publish(ld plog.Logs)
}

// startEvents turns detection on when the sink is active. Called in Start.
func (s *Scraper) startEvents() {
	s.env.events = nil
	if s.opts.Events == nil || !s.opts.Events.Active() {
		return
	}
	s.env.events = containerevents.NewDetector(containerevents.Config{
		NodeName:           s.opts.NodeName,
		ResourceAttributes: s.opts.MetricsBuilderConfig.ResourceAttributes,
		ScopeVersion:       s.set.BuildInfo.Version,
		Filter:             s.opts.Filter,
		PodLabels:          s.podLabels,
	})
}

// eventsFamily reads each container's OOM kill counter for the events
// (reusing the memory family's read when container.memory.oom_kills is
// enabled) and hands it to the detection. It has no points.
type eventsFamily struct {
	noSums
	v   *env
	cur cgroupfs.U64
	err error
}

func newEventsFamily(v *env, _ *metadata.MetricsConfig, _ int) family {
	if v.events == nil {
		return nil
	}
	return &eventsFamily{v: v}
}

func (f *eventsFamily) read(e *entity) {
	f.cur, f.err = cgroupfs.U64{}, nil
	if e.kind != kindContainer {
		return
	}
	if e.hand.oomTried {
		f.cur = e.hand.oomKills // a failed read is the memory family's to report
		return
	}
	mem, err := f.v.reader.Memory(e.rel, cgroupfs.MemoryWant{OOM: true})
	f.cur, f.err = mem.OOMKills, err
}

func (f *eventsFamily) readErr() error { return f.err }

func (f *eventsFamily) points(cgroupKind, *series) int { return 0 }

func (f *eventsFamily) record(e *entity, errs *scrapererror.ScrapeErrors) {
	if e.kind != kindContainer || e.cg == nil || e.ct == nil {
		return
	}
	if f.err != nil {
		errs.AddPartial(0, fmt.Errorf("%s: OOM kill events: %w", e.name, f.err))
		return
	}
	e.pass.oomCounters = append(e.pass.oomCounters, containerevents.Counter{Cgroup: *e.cg, Identity: *e.ct, OOMKills: f.cur})
}

// detectEvents hands the detection what this scrape observed and
// publishes the records it returns. Called at the end of every scrape
// that discovered the tree.
func (s *Scraper) detectEvents(p *pass, tree *cgroupfs.Tree) {
	if s.env.events == nil {
		return
	}
	ld := s.env.events.Observe(containerevents.Scrape{Now: p.now, Tree: tree, Counters: p.oomCounters, Listed: true, Instances: s.env.ident.Instances()})
	if ld.LogRecordCount() > 0 {
		s.opts.Events.Publish(ld)
	}
}

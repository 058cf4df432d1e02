// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerstatsreceiver // import "github.com/containerstats/containerstatsreceiver"

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver"
	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/receiver/scrape"
)

// Container events (OOM kills, restarts; receiver/scrape/events.go,
// docs/logs.md "Events") travel from the scrape that detects them to the
// logs receiver of the same configuration through its eventHub, one per
// configuration (sharedIdentity.events):
//
//   - metrics and logs pipelines: the metrics receiver's scrape detects
//     (it reads the cgroup tree and the OOM kill counters anyway) and
//     publishes; the logs receiver only drains. Nothing is read twice.
//   - only a logs pipeline: the logs receiver runs a scraper of its own
//     (scrape.Options.EventsOnly: discovery and the OOM kill counters, no
//     metric) every collection_interval, and drains.
//   - only a metrics pipeline: no logs receiver takes events, the hub is
//     not Active, and the scrape detects nothing.
//
// Which case holds is known at Start: the collector creates every
// component before it starts any, and each create function tells the hub
// (setFeeder, setConsumer).

// eventQueue is how many scrapes' events wait for the logs pipeline; more
// are dropped (and logged).
const eventQueue = 64

type eventHub struct {
	logger *zap.Logger
	ch     chan plog.Logs

	mu       sync.Mutex
	feeder   bool // a metrics receiver of this configuration detects
	consumer bool // a logs receiver of this configuration takes events
	dropping bool
}

func newEventHub(logger *zap.Logger) *eventHub {
	return &eventHub{logger: logger, ch: make(chan plog.Logs, eventQueue)}
}

func (h *eventHub) setFeeder() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.feeder = true
}

func (h *eventHub) setConsumer() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.consumer = true
}

func (h *eventHub) hasFeeder() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.feeder
}

// Active is scrape.EventSink's: a logs receiver takes the events.
func (h *eventHub) Active() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.consumer
}

// Publish queues one scrape's events without blocking the scrape: when
// the logs pipeline is eventQueue scrapes behind, they are dropped, logged
// at warn once until the queue takes events again.
func (h *eventHub) Publish(ld plog.Logs) {
	select {
	case h.ch <- ld:
		h.mu.Lock()
		if h.dropping {
			h.logger.Info("Container events are queued again")
		}
		h.dropping = false
		h.mu.Unlock()
	default:
		h.mu.Lock()
		if !h.dropping {
			h.logger.Warn("The logs pipeline does not take container events fast enough: events dropped",
				zap.Int("records", ld.LogRecordCount()))
		}
		h.dropping = true
		h.mu.Unlock()
	}
}

// eventsReceiver is the events part of the logs receiver: it drains the
// hub into the logs pipeline and, when no metrics receiver of the
// configuration detects, runs its own events-only scraper.
type eventsReceiver struct {
	logger       *zap.Logger
	hub          *eventHub
	next         consumer.Logs
	interval     time.Duration
	initialDelay time.Duration
	// newScraper builds the own scraper (called in Start, only when no
	// metrics receiver feeds the hub).
	newScraper func() *scrape.Scraper
	// optional: the log files are read too (logs.enabled); then an own
	// scraper that cannot start (no cgroup tree under root_path) turns the
	// events off with a warning instead of failing the log files.
	optional bool

	mu     sync.Mutex
	own    *scrape.Scraper
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// scrapes counts the own scraper's scrapes (tests wait on it).
	scrapes atomic.Int64
}

func (r *eventsReceiver) Start(ctx context.Context, host component.Host) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		return nil
	}
	if !r.hub.hasFeeder() {
		s := r.newScraper()
		if err := s.Start(ctx, host); err != nil {
			err = errors.Join(fmt.Errorf("events: %w", err), s.Shutdown(ctx))
			if !r.optional {
				return err
			}
			r.logger.Warn("Container events are off: their scrape cannot start (log files are still read)", zap.Error(err))
			return nil
		}
		r.own = s
	}
	rctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.wg.Add(1)
	go r.drain(rctx)
	if r.own != nil {
		r.wg.Add(1)
		go r.poll(rctx)
	}
	return nil
}

// Shutdown stops the goroutines and the own scraper; safe twice and
// without Start. Events still queued are dropped.
func (r *eventsReceiver) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		r.cancel()
		r.wg.Wait()
		r.cancel = nil
	}
	if r.own == nil {
		return nil
	}
	s := r.own
	r.own = nil
	return s.Shutdown(ctx)
}

func (r *eventsReceiver) drain(ctx context.Context) {
	defer r.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case ld := <-r.hub.ch:
			if err := r.next.ConsumeLogs(ctx, ld); err != nil {
				r.logger.Warn("The logs pipeline refused container events", zap.Int("records", ld.LogRecordCount()), zap.Error(err))
			}
		}
	}
}

// poll scrapes with the own scraper every interval after initialDelay; a
// scrape error is logged at warn when it starts or changes, at info when
// a scrape succeeds again.
func (r *eventsReceiver) poll(ctx context.Context) {
	defer r.wg.Done()
	t := time.NewTimer(r.initialDelay)
	defer t.Stop()
	last := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sctx, cancel := context.WithTimeout(ctx, r.interval)
		_, err := r.own.Scrape(sctx)
		cancel()
		r.scrapes.Add(1)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		switch {
		case msg == last:
		case err != nil:
			r.logger.Warn("Container events: the scrape failed in part", zap.Error(err))
		default:
			r.logger.Info("Container events: the scrape succeeds again")
		}
		last = msg
		t.Reset(r.interval)
	}
}

// newEventsReceiver is the events part of c's logs receiver; the hub
// learns that a logs receiver takes events.
func newEventsReceiver(set receiver.Settings, c *Config, next consumer.Logs, ids *sharedIdentities) (*eventsReceiver, error) {
	filter, err := c.Filters.compile()
	if err != nil {
		return nil, fmt.Errorf("filters: %w", err)
	}
	// The own scraper's identity user (it starts and stops it), taken now
	// so that the scraper publishes to this very hub.
	ident := ids.get(c, set.Logger)
	hub := ident.shared.events
	hub.setConsumer()
	return &eventsReceiver{
		logger: set.Logger, hub: hub, next: next, optional: c.Logs.Enabled,
		interval: c.CollectionInterval, initialDelay: c.InitialDelay,
		newScraper: func() *scrape.Scraper {
			var discovered func(*cgroupfs.Tree)
			if c.Logs.Enabled {
				discovered = ident.shared.cgroups.Update // the log files' index reuses this discovery
			}
			return scrape.New(set, scrape.Options{
				RootPath:             c.RootPath,
				Host:                 ident.shared.host,
				NodeName:             c.NodeName,
				StandaloneContainers: c.StandaloneContainers,
				MetricsBuilderConfig: c.MetricsBuilderConfig,
				Discovered:           discovered,
				Identity:             ident,
				Filter:               filter,
				IncludeSandboxes:     c.Runtime.IncludeSandboxes,
				PodLabels:            c.PodLabels,
				Events:               hub,
				EventsOnly:           true,
			})
		},
	}, nil
}

// logsParts is a logs receiver made of parts (the file tailer, the
// events): started in order, shut down in reverse. A part that fails to
// start fails Start; the collector then shuts every part down (each
// part's Shutdown is safe without its Start).
type logsParts []component.Component

func (p logsParts) Start(ctx context.Context, host component.Host) error {
	for _, c := range p {
		if err := c.Start(ctx, host); err != nil {
			return err
		}
	}
	return nil
}

func (p logsParts) Shutdown(ctx context.Context) error {
	var errs []error
	for i := len(p) - 1; i >= 0; i-- {
		errs = append(errs, p[i].Shutdown(ctx))
	}
	return errors.Join(errs...)
}

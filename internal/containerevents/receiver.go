// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerevents // import "github.com/containerstats/containerstatsreceiver/internal/containerevents"

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"
)

// Scraper is the scrape a logs receiver runs for the events when no
// metrics receiver of its configuration scrapes: receiver/scrape's
// Scraper with every metric off, publishing to the Hub (its metrics, none,
// are dropped).
type Scraper interface {
	Start(ctx context.Context, host component.Host) error
	Shutdown(ctx context.Context) error
	Scrape(ctx context.Context) (pmetric.Metrics, error)
}

// Options of a Receiver.
type Options struct {
	// Hub is the configuration's; the receiver's create function has
	// called its SetConsumer.
	Hub *Hub
	// Interval and InitialDelay pace the own scrapes (the configuration's
	// collection_interval and initial_delay).
	Interval     time.Duration
	InitialDelay time.Duration
	// NewScraper builds the own scrape (called in Start, only when no
	// metrics receiver feeds the hub).
	NewScraper func() Scraper
	// Optional: the log files are read too (logs.enabled); then an own
	// scrape that cannot start (no cgroup tree under root_path) turns the
	// events off with a warning instead of failing the log files.
	Optional bool
}

// Receiver is the events part of the logs receiver: it drains the Hub
// into the logs pipeline and, with no metrics receiver of the
// configuration, runs the scrape that feeds it.
type Receiver struct {
	logger *zap.Logger
	next   consumer.Logs
	o      Options

	mu     sync.Mutex
	own    Scraper
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// scrapes counts the own scrapes.
	scrapes atomic.Int64
}

// NewReceiver returns the receiver; nothing runs before Start.
func NewReceiver(logger *zap.Logger, next consumer.Logs, o Options) *Receiver {
	return &Receiver{logger: logger, next: next, o: o}
}

// Scrapes is how many scrapes the own scrape has made.
func (r *Receiver) Scrapes() int64 { return r.scrapes.Load() }

// Start starts the own scrape when no metrics receiver feeds the hub,
// then the draining (and scraping) goroutines. Safe twice.
func (r *Receiver) Start(ctx context.Context, host component.Host) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		return nil
	}
	if !r.o.Hub.HasFeeder() {
		s := r.o.NewScraper()
		if err := s.Start(ctx, host); err != nil {
			err = errors.Join(fmt.Errorf("events: %w", err), s.Shutdown(ctx))
			if !r.o.Optional {
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

// Shutdown stops the goroutines and the own scrape; safe twice and
// without Start. Events still queued are dropped.
func (r *Receiver) Shutdown(ctx context.Context) error {
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

func (r *Receiver) drain(ctx context.Context) {
	defer r.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case ld := <-r.o.Hub.Events():
			if err := r.next.ConsumeLogs(ctx, ld); err != nil {
				r.logger.Warn("The logs pipeline refused container events", zap.Int("records", ld.LogRecordCount()), zap.Error(err))
			}
		}
	}
}

// poll scrapes with the own scrape every interval after initialDelay; an
// error is logged at warn when it starts or changes, at info when a
// scrape succeeds again.
func (r *Receiver) poll(ctx context.Context) {
	defer r.wg.Done()
	t := time.NewTimer(r.o.InitialDelay)
	defer t.Stop()
	last := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sctx, cancel := context.WithTimeout(ctx, r.o.Interval)
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
		t.Reset(r.o.Interval)
	}
}

// Scraping reports whether the receiver runs its own scrape (started, and
// no metrics receiver feeds the hub).
func (r *Receiver) Scraping() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.own != nil
}

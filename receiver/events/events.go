// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package events is the events part of the logs receiver (docs/logs.md,
// "Events"): it drains its configuration's node.EventHub into the logs
// pipeline and, when no metrics receiver of the configuration detects
// the events, observes for them itself (Observer: the cgroup tree, the
// OOM kill counters, the runtime's listing; no metric; node/events.go
// says who detects when).
package events // import "github.com/containerstats/containerstatsreceiver/receiver/events"

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/node"
)

// Options of a Receiver.
type Options struct {
	// Hub is the configuration's; the receiver's create function has
	// called its SetConsumer.
	Hub *node.EventHub
	// Interval and InitialDelay pace the own observations (the
	// configuration's collection_interval and initial_delay).
	Interval     time.Duration
	InitialDelay time.Duration
	// NewObserver builds the own observer (called in Start, only when no
	// metrics receiver feeds the hub); it publishes to Hub.
	NewObserver func() *Observer
	// Optional: the log files are read too (logs.enabled); then an own
	// observer that cannot start (no cgroup tree under root_path) turns
	// the events off with a warning instead of failing the log files.
	Optional bool
}

// Receiver drains the hub into the logs pipeline.
type Receiver struct {
	logger *zap.Logger
	next   consumer.Logs
	o      Options

	mu     sync.Mutex
	own    *Observer
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// observations counts the own observer's observations.
	observations atomic.Int64
}

// New returns the receiver; nothing runs before Start.
func New(logger *zap.Logger, next consumer.Logs, o Options) *Receiver {
	return &Receiver{logger: logger, next: next, o: o}
}

// Observations is how many observations the own observer has made.
func (r *Receiver) Observations() int64 { return r.observations.Load() }

// Start starts the own observer when no metrics receiver feeds the hub,
// then the draining (and polling) goroutines. Safe twice.
func (r *Receiver) Start(ctx context.Context, _ component.Host) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		return nil
	}
	if !r.o.Hub.HasFeeder() {
		s := r.o.NewObserver()
		if err := s.Start(ctx); err != nil {
			err = errors.Join(fmt.Errorf("events: %w", err), s.Shutdown(ctx))
			if !r.o.Optional {
				return err
			}
			r.logger.Warn("Container events are off: their observer cannot start (log files are still read)", zap.Error(err))
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

// Shutdown stops the goroutines and the own observer; safe twice and
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

// poll observes with the own observer every interval after initialDelay;
// an error is logged at warn when it starts or changes, at info when an
// observation succeeds again.
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
		err := r.own.Observe(sctx)
		cancel()
		r.observations.Add(1)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		switch {
		case msg == last:
		case err != nil:
			r.logger.Warn("Container events: the observation failed in part", zap.Error(err))
		default:
			r.logger.Info("Container events: the observation succeeds again")
		}
		last = msg
		t.Reset(r.o.Interval)
	}
}

// Observing reports whether the receiver runs its own observer (started,
// and no metrics receiver feeds the hub).
func (r *Receiver) Observing() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.own != nil
}

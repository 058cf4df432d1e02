// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package node

import (
	"sync"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"
)

// Container events (OOM kills, restarts; internal/containerevents,
// docs/logs.md "Events") travel from the scrape that detects them to the
// logs receiver of the same configuration through its EventHub (one per
// State):
//
//   - metrics and logs pipelines: the metrics receiver's scrape detects
//     (it reads the cgroup tree and the OOM kill counters anyway) and
//     publishes; the logs receiver (receiver/events) only drains. Nothing
//     is read twice.
//   - only a logs pipeline: the logs receiver observes for them itself
//     every collection_interval (receiver/events' Observer: discovery, the
//     OOM kill counters and the runtime's listing, no metric), and
//     drains.
//   - only a metrics pipeline: no logs receiver takes events, the hub is
//     not Active, and the scrape detects nothing.
//
// Which case holds is known at Start: the collector creates every
// component before it starts any, and each create function tells the hub
// (SetFeeder, SetConsumer).

// EventQueue is how many scrapes' events wait for the logs pipeline; more
// are dropped (and logged).
const EventQueue = 64

// EventHub is one configuration's queue of container events.
type EventHub struct {
	logger *zap.Logger
	ch     chan plog.Logs

	mu       sync.Mutex
	feeder   bool // a metrics receiver of this configuration detects
	consumer bool // a logs receiver of this configuration takes events
	dropping bool
}

// NewEventHub returns an empty hub, neither fed nor consumed.
func NewEventHub(logger *zap.Logger) *EventHub {
	return &EventHub{logger: logger, ch: make(chan plog.Logs, EventQueue)}
}

// SetFeeder: a metrics receiver of the configuration detects events.
func (h *EventHub) SetFeeder() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.feeder = true
}

// SetConsumer: a logs receiver of the configuration takes events.
func (h *EventHub) SetConsumer() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.consumer = true
}

// HasFeeder reports whether a metrics receiver detects events.
func (h *EventHub) HasFeeder() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.feeder
}

// Active is containerevents.Sink's: a logs receiver takes the events.
func (h *EventHub) Active() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.consumer
}

// Events is what the logs receiver drains.
func (h *EventHub) Events() <-chan plog.Logs { return h.ch }

// Publish queues one scrape's events without blocking the scrape: when
// the logs pipeline is EventQueue scrapes behind, they are dropped, logged
// at warn once until the queue takes events again.
func (h *EventHub) Publish(ld plog.Logs) {
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

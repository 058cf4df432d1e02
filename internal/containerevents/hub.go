// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerevents // import "github.com/containerstats/containerstatsreceiver/internal/containerevents"

import (
	"sync"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"
)

// Container events travel from the scrape that detects them to the logs
// receiver of the same configuration through its Hub (one per
// configuration, in its node state):
//
//   - metrics and logs pipelines: the metrics receiver's scrape detects
//     (it reads the cgroup tree and the OOM kill counters anyway) and
//     publishes; the logs receiver (Receiver) only drains. Nothing is
//     read twice.
//   - only a logs pipeline: the logs receiver runs a scrape of its own
//     every collection_interval (the same scrape, every metric off: only
//     its events family reads), which publishes, and drains.
//   - only a metrics pipeline: no logs receiver takes events, the hub is
//     not Active, and the scrape detects nothing.
//
// Which case holds is known at Start: the collector creates every
// component before it starts any, and each create function tells the hub
// (SetFeeder, SetConsumer).

// Queue is how many scrapes' events wait for the logs pipeline; more are
// dropped (and logged).
const Queue = 64

// Hub is one configuration's queue of container events.
type Hub struct {
	logger *zap.Logger
	ch     chan plog.Logs

	mu       sync.Mutex
	feeder   bool // a metrics receiver of this configuration detects
	consumer bool // a logs receiver of this configuration takes events
	dropping bool
}

// NewHub returns an empty hub, neither fed nor consumed; a nil logger
// logs nothing.
func NewHub(logger *zap.Logger) *Hub {
	if logger == nil {
		logger = zap.NewNop()
	}
	return &Hub{logger: logger, ch: make(chan plog.Logs, Queue)}
}

// SetFeeder: a metrics receiver of the configuration detects events.
func (h *Hub) SetFeeder() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.feeder = true
}

// SetConsumer: a logs receiver of the configuration takes events.
func (h *Hub) SetConsumer() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.consumer = true
}

// HasFeeder reports whether a metrics receiver detects events.
func (h *Hub) HasFeeder() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.feeder
}

// Active reports whether a logs receiver takes the events: the scrape
// detects only then (asked at its Start).
func (h *Hub) Active() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.consumer
}

// Events is what the logs receiver drains.
func (h *Hub) Events() <-chan plog.Logs { return h.ch }

// Publish queues one scrape's events without blocking the scrape: when
// the logs pipeline is Queue scrapes behind, they are dropped, logged at
// warn once until the queue takes events again.
func (h *Hub) Publish(ld plog.Logs) {
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

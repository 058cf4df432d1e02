//go:build cgo

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package gpu // import "github.com/containerstats/containerstatsreceiver/internal/gpu"

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// eventWaitMs bounds one nvmlEventSetWait, so that the watcher sees its
// context's cancellation within about a second.
const eventWaitMs = 1000

// stopWait bounds how long Close waits for the watcher to leave a wait.
const stopWait = 3 * time.Second

// xidWatcher counts NVML's critical XID events per GPU and XID code in a
// goroutine of its own. Scrapes only read the counts under mu, which the
// goroutine never holds while it waits.
type xidWatcher struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	counts map[string]map[uint64]uint64 // GPU UUID -> XID -> events
	err    error                        // the wait's last failure, reported once
}

// startXID registers every GPU (by UUID) for XID events and starts the
// watcher. GPUs that do not support XID events are left out silently; with
// none supported no goroutine is started. Errors are returned for the
// caller to report; they never stop the collector.
func (c *Collector) startXID(gpus map[string]nvml.Device) []error {
	set, ret := c.opts.Library.EventSetCreate()
	if ret != nvml.SUCCESS {
		if ret == nvml.ERROR_NOT_SUPPORTED {
			return nil
		}
		return []error{fmt.Errorf("nvml event set: %w", ret)}
	}
	var errs []error
	uuids := map[nvml.Device]string{}
	for u, h := range gpus {
		switch ret := h.RegisterEvents(nvml.EventTypeXidCriticalError, set); ret {
		case nvml.SUCCESS:
			uuids[h] = u
		case nvml.ERROR_NOT_SUPPORTED:
		default:
			errs = append(errs, fmt.Errorf("gpu %s: register XID events: %w", u, ret))
		}
	}
	if len(uuids) == 0 {
		_ = set.Free()
		return errs
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &xidWatcher{cancel: cancel, done: make(chan struct{}), counts: map[string]map[uint64]uint64{}}
	for _, u := range uuids {
		w.counts[u] = map[uint64]uint64{}
	}
	c.xid = w
	go w.run(ctx, set, uuids)
	return errs
}

func (w *xidWatcher) run(ctx context.Context, set nvml.EventSet, uuids map[nvml.Device]string) {
	defer close(w.done)
	defer func() { _ = set.Free() }() // nothing to do about a failed free at the watcher's end
	for ctx.Err() == nil {
		ev, ret := set.Wait(eventWaitMs)
		switch ret {
		case nvml.SUCCESS:
		case nvml.ERROR_TIMEOUT:
			continue
		default:
			// GPU_IS_LOST and the like: keep the error for the next scrape
			// and back off, rather than spin.
			w.mu.Lock()
			w.err = fmt.Errorf("nvml XID event wait: %w", ret)
			w.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		if ev.EventType&nvml.EventTypeXidCriticalError == 0 {
			continue
		}
		u, ok := uuids[ev.Device]
		if !ok && ev.Device != nil {
			u, _ = ev.Device.GetUUID()
		}
		w.mu.Lock()
		if m := w.counts[u]; m != nil {
			m[ev.EventData]++
		}
		w.mu.Unlock()
	}
}

// read copies one GPU's counts (nil for a GPU not watched) and takes the
// pending wait error.
func (w *xidWatcher) read(uuid string) map[uint64]uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.counts[uuid]
	if m == nil {
		return nil
	}
	out := make(map[uint64]uint64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (w *xidWatcher) takeErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.err
	w.err = nil
	return err
}

// stop cancels the watcher and waits for it to leave its wait, at most
// stopWait; it reports whether the watcher ended.
func (w *xidWatcher) stop() bool { return cancelAndWait(w.cancel, w.done) }

// cancelAndWait cancels a background goroutine and waits for it to close
// done, at most stopWait; it reports whether it ended.
func cancelAndWait(cancel context.CancelFunc, done <-chan struct{}) bool {
	cancel()
	select {
	case <-done:
		return true
	case <-time.After(stopWait):
		return false
	}
}

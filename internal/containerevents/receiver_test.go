// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerevents

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// fakeScraper publishes one record to hub on every scrape; startErr fails
// its Start, scrapeErr its scrapes.
type fakeScraper struct {
	hub       *Hub
	startErr  error
	scrapeErr error

	mu            sync.Mutex
	starts, stops int
	scrapes       atomic.Int64
}

func (f *fakeScraper) Start(context.Context, component.Host) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts++
	return f.startErr
}

func (f *fakeScraper) Shutdown(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stops++
	return nil
}

func (f *fakeScraper) Scrape(context.Context) (pmetric.Metrics, error) {
	f.scrapes.Add(1)
	f.hub.Publish(oneRecord())
	return pmetric.NewMetrics(), f.scrapeErr
}

func oneRecord() plog.Logs {
	ld := plog.NewLogs()
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().SetEventName(EventOOMKill)
	return ld
}

func newReceiver(t *testing.T, hub *Hub, f *fakeScraper, logger *zap.Logger, optional bool) (*Receiver, *consumertest.LogsSink) {
	t.Helper()
	sink := new(consumertest.LogsSink)
	built := 0
	r := NewReceiver(logger, sink, Options{
		Hub: hub, Interval: 5 * time.Millisecond, InitialDelay: time.Millisecond, Optional: optional,
		NewScraper: func() Scraper { built++; return f },
	})
	t.Cleanup(func() {
		require.NoError(t, r.Shutdown(context.Background()))
		if f != nil && f.starts > 0 {
			assert.Equal(t, 1, built, "one own scrape")
		}
	})
	return r, sink
}

// Without a metrics receiver the receiver runs its own scrape every
// interval and drains what it publishes; Shutdown stops the scrape once.
func TestReceiverOwnScrape(t *testing.T) {
	hub := NewHub(nil)
	hub.SetConsumer()
	f := &fakeScraper{hub: hub}
	r, sink := newReceiver(t, hub, f, zap.NewNop(), false)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()), "twice")
	assert.True(t, r.Scraping())
	require.Eventually(t, func() bool { return r.Scrapes() >= 3 && sink.LogRecordCount() >= 3 }, 10*time.Second, time.Millisecond)
	require.NoError(t, r.Shutdown(context.Background()))
	require.NoError(t, r.Shutdown(context.Background()), "twice")
	assert.Equal(t, 1, f.starts)
	assert.Equal(t, 1, f.stops)
	assert.False(t, r.Scraping())
}

// With a metrics receiver feeding the hub the receiver only drains: no
// own scrape is built.
func TestReceiverDrainsFeeder(t *testing.T) {
	hub := NewHub(nil)
	hub.SetConsumer()
	hub.SetFeeder()
	r, sink := newReceiver(t, hub, nil, zap.NewNop(), false)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	assert.False(t, r.Scraping())
	hub.Publish(oneRecord())
	hub.Publish(oneRecord())
	require.Eventually(t, func() bool { return sink.LogRecordCount() == 2 }, 10*time.Second, time.Millisecond)
	assert.Zero(t, r.Scrapes())
}

// An own scrape that cannot start fails Start, unless the log files are
// read too (Optional): then the events are off, with a warning.
func TestReceiverScrapeCannotStart(t *testing.T) {
	for _, optional := range []bool{false, true} {
		hub := NewHub(nil)
		hub.SetConsumer()
		f := &fakeScraper{hub: hub, startErr: errors.New(`root_path "/x": no cgroup filesystem`)}
		core, logs := observer.New(zapcore.WarnLevel)
		r, _ := newReceiver(t, hub, f, zap.New(core), optional)
		err := r.Start(context.Background(), componenttest.NewNopHost())
		if optional {
			require.NoError(t, err)
			assert.Equal(t, 1, logs.FilterMessageSnippet("Container events are off").Len())
		} else {
			require.ErrorContains(t, err, `events: root_path "/x"`)
		}
		assert.False(t, r.Scraping())
		assert.Equal(t, 1, f.stops, "a scrape that failed Start is shut down")
	}
}

// A scrape error is logged at warn once while it lasts.
func TestReceiverScrapeErrorLoggedOnce(t *testing.T) {
	hub := NewHub(nil)
	hub.SetConsumer()
	f := &fakeScraper{hub: hub, scrapeErr: errors.New("container c1: OOM kill events: bad file")}
	core, logs := observer.New(zapcore.WarnLevel)
	r, _ := newReceiver(t, hub, f, zap.New(core), false)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	require.Eventually(t, func() bool { return r.Scrapes() >= 4 }, 10*time.Second, time.Millisecond)
	require.NoError(t, r.Shutdown(context.Background()))
	assert.Equal(t, 1, logs.FilterMessageSnippet("the scrape failed in part").Len())
}

// The hub: not Active until a logs receiver consumes; a full queue drops
// (warn once) without blocking, and says when it queues again.
func TestHub(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	hub := NewHub(zap.New(core))
	assert.False(t, hub.Active())
	assert.False(t, hub.HasFeeder())
	hub.SetConsumer()
	hub.SetFeeder()
	assert.True(t, hub.Active())
	assert.True(t, hub.HasFeeder())
	for range Queue + 3 {
		hub.Publish(oneRecord())
	}
	assert.Len(t, hub.Events(), Queue)
	assert.Equal(t, 1, logs.FilterMessageSnippet("events dropped").Len())
	<-hub.Events()
	hub.Publish(oneRecord())
	assert.Equal(t, 1, logs.FilterMessageSnippet("queued again").Len())
}

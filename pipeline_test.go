// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package containerstatsreceiver

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// scrapeSummary is what a pipeline test keeps of one scrape: kept small so
// that a soak's heap measures the receiver, not the test's records.
type scrapeSummary struct {
	At       time.Time                    // the scrape's timestamp (data points)
	Received time.Time                    // when the consumer got it (scrape done)
	Ctrs     map[string]map[string]string // container.id -> resource attributes (strings)
}

// Took is the scrape's duration: from its timestamp to delivery.
func (s scrapeSummary) Took() time.Duration { return s.Received.Sub(s.At) }

// summarize reduces a scrape to its containers' string attributes.
func summarize(m pmetric.Metrics, received time.Time) scrapeSummary {
	s := scrapeSummary{Received: received, Ctrs: map[string]map[string]string{}}
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		if s.At.IsZero() {
			s.At = firstTimestamp(rm)
		}
		attrs := rm.Resource().Attributes()
		id, ok := attrs.Get("container.id")
		if !ok {
			continue
		}
		a := make(map[string]string, attrs.Len())
		attrs.Range(func(k string, v pcommon.Value) bool {
			a[k] = v.AsString()
			return true
		})
		s.Ctrs[id.Str()] = a
	}
	return s
}

func firstTimestamp(rm pmetric.ResourceMetrics) time.Time {
	for i := 0; i < rm.ScopeMetrics().Len(); i++ {
		ms := rm.ScopeMetrics().At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			switch m.Type() {
			case pmetric.MetricTypeGauge:
				if m.Gauge().DataPoints().Len() > 0 {
					return m.Gauge().DataPoints().At(0).Timestamp().AsTime()
				}
			case pmetric.MetricTypeSum:
				if m.Sum().DataPoints().Len() > 0 {
					return m.Sum().DataPoints().At(0).Timestamp().AsTime()
				}
			}
		}
	}
	return time.Time{}
}

// pipeline runs the receiver as a collector would: the real factory, the
// scraper controller on its own ticker, and a consumer at the end.
type pipeline struct {
	mu      sync.Mutex
	scrapes []scrapeSummary
	onScr   func(scrapeSummary) // called under mu for each scrape
	stopped bool
	stop    func()
}

// startPipeline creates and starts the receiver from cfg. With onScrape set
// scrapes are handed to it and only their times are kept.
func startPipeline(t *testing.T, cfg *Config, logger *zap.Logger, onScrape func(scrapeSummary)) *pipeline {
	t.Helper()
	require.NoError(t, cfg.Validate())
	p := &pipeline{onScr: onScrape}
	next, err := consumer.NewMetrics(func(_ context.Context, m pmetric.Metrics) error {
		s := summarize(m, time.Now())
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.onScr != nil {
			p.onScr(s)
			s.Ctrs = nil // times only: a soak's memory must not grow with it
		}
		p.scrapes = append(p.scrapes, s)
		return nil
	})
	require.NoError(t, err)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = logger
	r, err := NewFactory().CreateMetrics(context.Background(), set, cfg, next)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	p.stop = func() {
		p.mu.Lock()
		done := p.stopped
		p.stopped = true
		p.mu.Unlock()
		if !done {
			require.NoError(t, r.Shutdown(context.Background()))
		}
	}
	t.Cleanup(p.stop)
	return p
}

// Shutdown stops the receiver (idempotent; Cleanup calls it too).
func (p *pipeline) Shutdown() { p.stop() }

// Scrapes returns the scrapes kept so far.
func (p *pipeline) Scrapes() []scrapeSummary {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]scrapeSummary(nil), p.scrapes...)
}

// waitScrapes waits until n scrapes arrived after since.
func (p *pipeline) waitScrapes(t *testing.T, since time.Time, n int, within time.Duration) []scrapeSummary {
	t.Helper()
	var got []scrapeSummary
	require.Eventually(t, func() bool {
		got = got[:0]
		for _, s := range p.Scrapes() {
			if s.At.After(since) {
				got = append(got, s)
			}
		}
		return len(got) >= n
	}, within, 20*time.Millisecond, "%d scrapes after %s", n, since)
	return got
}

// pipelineConfig is the default config with the real node's root, the
// given interval, and a fixed node name.
func pipelineConfig(interval time.Duration) *Config {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.CollectionInterval = interval
	cfg.RootPath = "/"
	cfg.NodeName = "node-pipeline"
	return cfg
}

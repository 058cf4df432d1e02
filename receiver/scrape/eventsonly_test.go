// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/containerevents"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// countingHost is a host handle that counts the trees it is handed.
type countingHost struct {
	Host
	trees int
}

func (h *countingHost) Discovered(t *cgroupfs.Tree) {
	h.trees++
	h.Host.Discovered(t)
}

// The logs-only case: the scrape with every metric off (the zero
// MetricsConfig), no pod or node series, reads for the events only. It
// emits no metric; the first scrape is the baseline, an OOM kill increase
// is one record with the container's resource; every discovered tree goes
// to the host handle.
func TestEventsOnlyScrape(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	clk := &fakeClock{now: t0}
	sink := &eventSink{active: true}
	host := &countingHost{Host: testHost(root)}
	s := eventScraper(t, root, clk, sink, fullIdentity(), func(o *Options) {
		o.Host = host
		o.MetricsBuilderConfig = metadata.MetricsBuilderConfig{ResourceAttributes: metadata.DefaultResourceAttributesConfig()}
		o.NoPodSeries, o.NoNodeSeries = true, true
	})
	m := scrapeAt(t, s, clk, t0)
	assert.Zero(t, m.DataPointCount())
	assert.Empty(t, sink.drain(), "the first scrape is the baseline")

	setOOM(t, root, "v2-systemd", oomFiles["v2-systemd"].a1, 5)
	m = scrapeAt(t, s, clk, t0.Add(10*time.Second))
	assert.Zero(t, m.DataPointCount())
	got := sink.drain()
	require.Len(t, got, 1)
	assert.Equal(t, containerevents.EventOOMKill, got[0].lr.EventName())
	assert.Equal(t, int64(3), withoutUID(t, got[0].lr)[containerevents.AttrOOMKillCount])
	id, _ := got[0].res.Get("container.id")
	assert.Equal(t, v2Ctr1, id.Str())
	assert.Equal(t, 2, host.trees)

	scrapeAt(t, s, clk, t0.Add(20*time.Second))
	assert.Empty(t, sink.drain(), "an unchanged counter: no record")
}

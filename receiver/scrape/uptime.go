// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"time"

	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// uptimeFamily is container.uptime: the time since the runtime created the
// container, from its identity; nothing is read.
type uptimeFamily struct{ s *Scraper }

func newUptimeFamily(s *Scraper, m *metadata.MetricsConfig, _ int) family {
	if !m.ContainerUptime.Enabled {
		return nil
	}
	return uptimeFamily{s: s}
}

func (uptimeFamily) read(*entity)   {}
func (uptimeFamily) readErr() error { return nil }

func (uptimeFamily) points(k cgroupKind, _ *series) int { return count(k == kindContainer) }

// record records the container's uptime in whole seconds, as a double (the
// semantic conventions' value type); nothing when no runtime named it (the
// first-seen time is not a start time) or the clocks disagree (creation in
// the future).
func (f uptimeFamily) record(e *entity, _ *scrapererror.ScrapeErrors) {
	if e.ct == nil || e.ct.StartTime.IsZero() {
		return
	}
	if d := e.now.Sub(e.ct.StartTime); d >= 0 {
		f.s.mb.RecordContainerUptimeDataPoint(e.ts, float64(d/time.Second))
	}
}

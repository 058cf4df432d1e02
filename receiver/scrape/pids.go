// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
)

// pidsPoints is what a failed pids read costs: count and limit.
const pidsPoints = 2

// pidsRead is the pids controller's view of one entity in one scrape.
type pidsRead struct {
	st  cgroupfs.PidsStat
	err error
}

// wantPids reports whether a pids metric of kind is enabled. The node has
// none: the root cgroup has no pids.current on v1 and older v2 kernels.
func (s *Scraper) wantPids(k cgroupKind) bool {
	m := &s.opts.MetricsBuilderConfig.Metrics
	switch k {
	case kindPod:
		return m.K8sPodPidsCount.Enabled || m.K8sPodPidsLimit.Enabled
	case kindContainer:
		return m.ContainerPidsCount.Enabled || m.ContainerPidsLimit.Enabled
	}
	return false
}

// readPids reads pids.current and pids.max when one of the kind's pids
// metrics is enabled; otherwise it opens nothing.
func (s *Scraper) readPids(e entity, p *pidsRead) {
	if !s.wantPids(e.kind) {
		return
	}
	p.st, p.err = s.reader.Pids(e.rel)
}

// recordPids records the task count and a finite limit; "max" (unlimited)
// and absent files give no point. A read error costs these points only.
func (s *Scraper) recordPids(ts pcommon.Timestamp, e entity, p *pidsRead, errs *scrapererror.ScrapeErrors) {
	if p.err != nil {
		errs.AddPartial(pidsPoints, fmt.Errorf("%s: %w", e.name, p.err))
		return
	}
	cur, lim := p.st.Current, p.st.Max
	switch e.kind {
	case kindPod:
		if cur.OK {
			s.mb.RecordK8sPodPidsCountDataPoint(ts, clampInt64(cur.V))
		}
		if lim.Finite() {
			s.mb.RecordK8sPodPidsLimitDataPoint(ts, clampInt64(lim.V))
		}
	case kindContainer:
		if cur.OK {
			s.mb.RecordContainerPidsCountDataPoint(ts, clampInt64(cur.V))
		}
		if lim.Finite() {
			s.mb.RecordContainerPidsLimitDataPoint(ts, clampInt64(lim.V))
		}
	}
}

// recordUptime records the time since the runtime created the container,
// in whole seconds; nothing when no runtime named it (the first-seen time
// is not a start time) or the clocks disagree (creation in the future).
func (s *Scraper) recordUptime(ts pcommon.Timestamp, now time.Time, ct *identity.Container) {
	if !s.opts.MetricsBuilderConfig.Metrics.ContainerUptime.Enabled || ct.StartTime.IsZero() {
		return
	}
	if d := now.Sub(ct.StartTime); d >= 0 {
		s.mb.RecordContainerUptimeDataPoint(ts, int64(d/time.Second))
	}
}

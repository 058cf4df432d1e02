// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// pidsRecorders are the pids metrics of pods or containers, as method
// expressions. The node has none: the root cgroup has no pids.current on
// v1 and older v2 kernels.
type pidsRecorders struct {
	count, limit func(*metadata.MetricsBuilder, pcommon.Timestamp, int64)
}

var pidsRec = [...]pidsRecorders{
	kindPod:       {mbT.RecordK8sPodPidsCountDataPoint, mbT.RecordK8sPodPidsLimitDataPoint},
	kindContainer: {mbT.RecordContainerPidsCountDataPoint, mbT.RecordContainerPidsLimitDataPoint},
}

// pidsFamily is the pids controller: tasks (processes and threads) charged
// to the cgroup and its limit, pids.current and pids.max.
type pidsFamily struct {
	s   *Scraper
	pts [numKinds]int
	cur cgroupfs.PidsStat
	err error
}

func newPidsFamily(s *Scraper, m *metadata.MetricsConfig, _ int) family {
	f := &pidsFamily{s: s}
	f.pts[kindPod] = count(m.K8sPodPidsCount.Enabled, m.K8sPodPidsLimit.Enabled)
	f.pts[kindContainer] = count(m.ContainerPidsCount.Enabled, m.ContainerPidsLimit.Enabled)
	if f.pts == [numKinds]int{} {
		return nil
	}
	return f
}

func (f *pidsFamily) read(e *entity) {
	f.cur, f.err = cgroupfs.PidsStat{}, nil
	if f.pts[e.kind] > 0 {
		f.cur, f.err = f.s.reader.Pids(e.rel)
	}
}

func (f *pidsFamily) readErr() error { return f.err }

func (f *pidsFamily) points(k cgroupKind, _ *series) int { return f.pts[k] }

// record records the task count and a finite limit; "max" (unlimited)
// and absent files give no point. A read error costs these points only.
func (f *pidsFamily) record(e *entity, errs *scrapererror.ScrapeErrors) {
	if f.pts[e.kind] == 0 {
		return
	}
	if f.err != nil {
		errs.AddPartial(f.pts[e.kind], fmt.Errorf("%s: %w", e.name, f.err))
		return
	}
	rec := &pidsRec[e.kind]
	if f.cur.Current.OK {
		rec.count(f.s.mb, e.ts, clampInt64(f.cur.Current.V))
	}
	if f.cur.Max.Finite() {
		rec.limit(f.s.mb, e.ts, clampInt64(f.cur.Max.V))
	}
}

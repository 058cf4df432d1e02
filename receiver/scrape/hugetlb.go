// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
)

// hugetlbState is what hugetlb keeps across scrapes: the node's huge page
// sizes (read once at Start, only when a hugetlb metric is enabled) and a
// reused buffer.
type hugetlbState struct {
	sizes []cgroupfs.HugePageSize
	buf   []cgroupfs.Hugetlb
}

// hugetlbRead is one entity's hugetlb accounting in one scrape. pages is
// the scraper's buffer: valid until the next entity's read.
type hugetlbRead struct {
	pages []cgroupfs.Hugetlb
	err   error
}

// wantHugetlb reports which hugetlb metrics of kind are enabled. The node
// has no limit (the root cgroup has none).
func (s *Scraper) wantHugetlb(k cgroupKind) (usage, limit bool) {
	m := &s.opts.MetricsBuilderConfig.Metrics
	switch k {
	case kindNode:
		return m.K8sNodeMemoryHugetlbUsage.Enabled, false
	case kindPod:
		return m.K8sPodMemoryHugetlbUsage.Enabled, m.K8sPodMemoryHugetlbLimit.Enabled
	}
	return m.ContainerMemoryHugetlbUsage.Enabled, m.ContainerMemoryHugetlbLimit.Enabled
}

// startHugetlb lists the node's huge page sizes when a hugetlb metric is
// enabled; a node without any has no hugetlb points.
func (s *Scraper) startHugetlb() {
	s.huge = hugetlbState{}
	any := false
	for k := kindNode; k <= kindContainer; k++ {
		u, l := s.wantHugetlb(k)
		any = any || u || l
	}
	if !any {
		return
	}
	sizes, err := cgroupfs.HugePageSizes(s.opts.RootPath)
	if err != nil {
		s.logger.Warn("Cannot list the node's huge page sizes: no hugetlb metrics", zap.Error(err))
		return
	}
	if len(sizes) == 0 {
		s.logger.Info("The node has no huge page sizes (no sys/kernel/mm/hugepages under root_path): no hugetlb metrics")
	}
	s.huge.sizes = sizes
}

// readHugetlb reads usage (and limit) per page size when one of the kind's
// hugetlb metrics is enabled.
func (s *Scraper) readHugetlb(e entity, r *hugetlbRead) {
	usage, limit := s.wantHugetlb(e.kind)
	if !usage && !limit || len(s.huge.sizes) == 0 {
		return
	}
	r.pages, r.err = s.reader.Hugetlb(e.rel, s.huge.sizes, limit, s.huge.buf)
	s.huge.buf = r.pages[:0]
}

// recordHugetlb records usage per page size and finite limits; absent
// files give no point. A read error costs these points only.
func (s *Scraper) recordHugetlb(ts pcommon.Timestamp, e entity, r *hugetlbRead, errs *scrapererror.ScrapeErrors) {
	usage, limit := s.wantHugetlb(e.kind)
	if r.err != nil {
		errs.AddPartial(len(s.huge.sizes)*count(usage, limit), fmt.Errorf("%s: hugetlb: %w", e.name, r.err))
		return
	}
	rec, recLimit := s.mb.RecordContainerMemoryHugetlbUsageDataPoint, s.mb.RecordContainerMemoryHugetlbLimitDataPoint
	switch e.kind {
	case kindNode:
		rec = s.mb.RecordK8sNodeMemoryHugetlbUsageDataPoint
	case kindPod:
		rec, recLimit = s.mb.RecordK8sPodMemoryHugetlbUsageDataPoint, s.mb.RecordK8sPodMemoryHugetlbLimitDataPoint
	}
	for i := range r.pages {
		p := &r.pages[i]
		if usage && p.Usage.OK {
			rec(ts, clampInt64(p.Usage.V), p.Size)
		}
		if limit && p.Limit.Finite() {
			recLimit(ts, clampInt64(p.Limit.V), p.Size)
		}
	}
}

// extraPoints is what the optional hugetlb and file descriptor metrics of
// kind would have given an entity: part of what a vanished cgroup costs
// (cgroup.go). Every enabled metric counts once per page size, limits
// included (an upper bound: unlimited limits have no point).
func (s *Scraper) extraPoints(k cgroupKind) int {
	usage, limit := s.wantHugetlb(k)
	n := len(s.huge.sizes) * count(usage, limit)
	if k == kindContainer && s.opts.MetricsBuilderConfig.Metrics.ContainerFileDescriptorCount.Enabled {
		n++
	}
	return n
}

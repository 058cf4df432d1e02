// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/calc"
	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

type hugetlbRecorder = func(*metadata.MetricsBuilder, pcommon.Timestamp, int64, string)

// hugetlbRecorders are the hugetlb metrics of one entity kind; the node
// has no limit (the root cgroup has none).
type hugetlbRecorders struct {
	usage, limit recorder[hugetlbRecorder]
}

func hugetlbTable(m *metadata.MetricsConfig) [numKinds]hugetlbRecorders {
	return [numKinds]hugetlbRecorders{
		kindNode: {usage: rec(m.K8sNodeMemoryHugetlbUsage.Enabled, mbT.RecordK8sNodeMemoryHugetlbUsageDataPoint)},
		kindPod: {
			usage: rec(m.K8sPodMemoryHugetlbUsage.Enabled, mbT.RecordK8sPodMemoryHugetlbUsageDataPoint),
			limit: rec(m.K8sPodMemoryHugetlbLimit.Enabled, mbT.RecordK8sPodMemoryHugetlbLimitDataPoint),
		},
		kindContainer: {
			usage: rec(m.ContainerMemoryHugetlbUsage.Enabled, mbT.RecordContainerMemoryHugetlbUsageDataPoint),
			limit: rec(m.ContainerMemoryHugetlbLimit.Enabled, mbT.RecordContainerMemoryHugetlbLimitDataPoint),
		},
	}
}

// hugetlbFamily is huge pages charged to the cgroup per page size, and
// their limits: hugetlb.<size>.usage_in_bytes / limit_in_bytes (v1),
// hugetlb.<size>.current / max (v2). The node's page sizes are listed once,
// at Start.
type hugetlbFamily struct {
	noSums
	v     *env
	rec   [numKinds]hugetlbRecorders
	sizes []cgroupfs.HugePageSize
	buf   []cgroupfs.Hugetlb // reused across entities

	cur []cgroupfs.Hugetlb // the family's buffer: valid until the next read
	err error
}

// newHugetlbFamily lists the node's huge page sizes when a hugetlb metric
// is enabled; a node without any has no hugetlb points.
func newHugetlbFamily(v *env, m *metadata.MetricsConfig, _ int) family {
	f := &hugetlbFamily{v: v, rec: hugetlbTable(m)}
	on := false
	for k := range f.rec {
		on = on || f.wants(cgroupKind(k))
	}
	if !on {
		return nil
	}
	sizes, err := cgroupfs.HugePageSizes(v.rootPath)
	if err != nil {
		v.logger.Warn("Cannot list the node's huge page sizes: no hugetlb metrics", zap.Error(err))
		return nil
	}
	if len(sizes) == 0 {
		v.logger.Info("The node has no huge page sizes (no sys/kernel/mm/hugepages under root_path): no hugetlb metrics")
		return nil
	}
	f.sizes = sizes
	return f
}

func (f *hugetlbFamily) wants(k cgroupKind) bool { return f.rec[k].usage.on || f.rec[k].limit.on }

// read reads usage (and limit) per page size when one of the kind's
// hugetlb metrics is enabled.
func (f *hugetlbFamily) read(e *entity) {
	f.cur, f.err = nil, nil
	if !f.wants(e.kind) {
		return
	}
	f.cur, f.err = f.v.reader.Hugetlb(e.rel, f.sizes, f.rec[e.kind].limit.on, f.buf)
	f.buf = f.cur[:0]
}

func (f *hugetlbFamily) readErr() error { return f.err }

// points counts every enabled metric once per page size, limits included
// (an upper bound: unlimited limits have no point).
func (f *hugetlbFamily) points(k cgroupKind, _ *series) int {
	return len(f.sizes) * count(f.rec[k].usage.on, f.rec[k].limit.on)
}

// record records usage per page size and finite limits; absent files give
// no point. A read error costs these points only.
func (f *hugetlbFamily) record(e *entity, errs *scrapererror.ScrapeErrors) {
	if !f.wants(e.kind) {
		return
	}
	if f.err != nil {
		errs.AddPartial(f.points(e.kind, nil), fmt.Errorf("%s: hugetlb: %w", e.name, f.err))
		return
	}
	rec, mb := &f.rec[e.kind], f.v.mb
	for i := range f.cur {
		p := &f.cur[i]
		if rec.usage.on && p.Usage.OK {
			rec.usage.record(mb, e.ts, calc.ClampInt64(p.Usage.V), p.Size)
		}
		if rec.limit.on && p.Limit.Finite() {
			rec.limit.record(mb, e.ts, calc.ClampInt64(p.Limit.V), p.Size)
		}
	}
}

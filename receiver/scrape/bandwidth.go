// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/calc"
	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// bandwidthRecorders are the CFS bandwidth metrics of pods or containers
// (the root cgroup has no quota), as method expressions.
type bandwidthRecorders struct {
	periods, throttledPeriods recorder[func(*metadata.MetricsBuilder, pcommon.Timestamp, int64)]
	throttledTime, limit      recorder[func(*metadata.MetricsBuilder, pcommon.Timestamp, float64)]
	shares, weight            recorder[func(*metadata.MetricsBuilder, pcommon.Timestamp, int64)]
	// utilization is the usage over the limit; containers only (the
	// semantic conventions define it for k8s.container).
	utilization recorder[func(*metadata.MetricsBuilder, pcommon.Timestamp, float64)]
}

func bandwidthTable(m *metadata.MetricsConfig) [numKinds]bandwidthRecorders {
	return [numKinds]bandwidthRecorders{
		kindPod: {
			periods:          rec(m.K8sPodCPUThrottlingPeriods.Enabled, mbT.RecordK8sPodCPUThrottlingPeriodsDataPoint),
			throttledPeriods: rec(m.K8sPodCPUThrottlingThrottledPeriods.Enabled, mbT.RecordK8sPodCPUThrottlingThrottledPeriodsDataPoint),
			throttledTime:    rec(m.K8sPodCPUThrottlingThrottledTime.Enabled, mbT.RecordK8sPodCPUThrottlingThrottledTimeDataPoint),
			limit:            rec(m.K8sPodCPULimit.Enabled, mbT.RecordK8sPodCPULimitDataPoint),
			shares:           rec(m.K8sPodCPUShares.Enabled, mbT.RecordK8sPodCPUSharesDataPoint),
			weight:           rec(m.K8sPodCPUWeight.Enabled, mbT.RecordK8sPodCPUWeightDataPoint),
		},
		kindContainer: {
			periods:          rec(m.ContainerCPUThrottlingPeriods.Enabled, mbT.RecordContainerCPUThrottlingPeriodsDataPoint),
			throttledPeriods: rec(m.ContainerCPUThrottlingThrottledPeriods.Enabled, mbT.RecordContainerCPUThrottlingThrottledPeriodsDataPoint),
			throttledTime:    rec(m.ContainerCPUThrottlingThrottledTime.Enabled, mbT.RecordContainerCPUThrottlingThrottledTimeDataPoint),
			limit:            rec(m.ContainerCPULimit.Enabled, mbT.RecordContainerCPULimitDataPoint),
			shares:           rec(m.ContainerCPUShares.Enabled, mbT.RecordContainerCPUSharesDataPoint),
			weight:           rec(m.ContainerCPUWeight.Enabled, mbT.RecordContainerCPUWeightDataPoint),
			utilization:      rec(m.K8sContainerCPULimitUtilization.Enabled, mbT.RecordK8sContainerCPULimitUtilizationDataPoint),
		},
	}
}

// bandwidthFamily is CFS bandwidth control: CPU throttling counters, the
// CPU limit and shares (v1) or weight (v2) of pods and containers, from
// cpu.stat (the v2 one the CPU family read is reused), cpu.max /
// cpu.cfs_quota_us + cpu.cfs_period_us, cpu.shares / cpu.weight
// (cgroupfs.Reader.CPUBandwidth). Its tests: bandwidth_test.go here and
// in internal/cgroupfs.
type bandwidthFamily struct {
	noSums
	v    *env
	rec  [numKinds]bandwidthRecorders
	want [numKinds]cgroupfs.CPUWant
	pts  [numKinds]int
	cur  cgroupfs.CPUBandwidth
	err  error
}

func newBandwidthFamily(v *env, m *metadata.MetricsConfig, _ int) family {
	f := &bandwidthFamily{v: v, rec: bandwidthTable(m)}
	for k := range f.rec {
		r := &f.rec[k]
		f.want[k] = cgroupfs.CPUWant{
			Throttling: r.periods.on || r.throttledPeriods.on || r.throttledTime.on,
			Limit:      r.limit.on || r.utilization.on,
			Shares:     r.shares.on || r.weight.on,
		}
		f.pts[k] = count(r.periods.on, r.throttledPeriods.on, r.throttledTime.on, r.limit.on, r.shares.on, r.weight.on, r.utilization.on)
	}
	if f.pts == [numKinds]int{} {
		return nil
	}
	return f
}

func (f *bandwidthFamily) read(e *entity) {
	f.cur, f.err = cgroupfs.CPUBandwidth{}, nil
	if f.want[e.kind].Any() {
		f.cur, f.err = f.v.reader.CPUBandwidth(e.rel, f.want[e.kind])
	}
}

func (f *bandwidthFamily) readErr() error { return f.err }

func (f *bandwidthFamily) points(k cgroupKind, _ *series) int { return f.pts[k] }

// record records throttling counters (time in seconds on v1 and v2), the
// limit in cores only when a finite quota is set, a container's usage over
// that limit when the CPU family computed its usage in this scrape (it
// records first), and the raw shares (v1) or weight (v2), each only when
// its file or key exists.
func (f *bandwidthFamily) record(e *entity, errs *scrapererror.ScrapeErrors) {
	switch {
	case f.err != nil:
		errs.AddPartial(f.pts[e.kind], fmt.Errorf("%s: %w", e.name, f.err))
		return
	case !f.want[e.kind].Any():
		return
	}
	rec, mb, bw, ts := &f.rec[e.kind], f.v.mb, &f.cur, e.ts
	if bw.Periods.OK {
		rec.periods.record(mb, ts, calc.ClampInt64(bw.Periods.V))
	}
	if bw.ThrottledPeriods.OK {
		rec.throttledPeriods.record(mb, ts, calc.ClampInt64(bw.ThrottledPeriods.V))
	}
	if bw.ThrottledTime.OK {
		rec.throttledTime.record(mb, ts, float64(bw.ThrottledTime.V)/1e9)
	}
	if cores, ok := bw.CPULimitCores(); ok {
		rec.limit.record(mb, ts, cores) // no-ops for a metric that is off
		if rec.utilization.on && e.hand.cpuCoresOK {
			rec.utilization.record(mb, ts, e.hand.cpuCores/cores)
		}
	}
	if bw.Shares.OK {
		rec.shares.record(mb, ts, calc.ClampInt64(bw.Shares.V))
	}
	if bw.Weight.OK {
		rec.weight.record(mb, ts, calc.ClampInt64(bw.Weight.V))
	}
}

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

// cpuRecorders are the CPU metrics of one entity kind, as method
// expressions of the MetricsBuilder: the node, pods and containers share
// one recording path, and a static table needs no binding and no cache.
// Containers have CPU time by mode (modeTime); the node, pods and system
// containers have the total (time), as the semantic conventions define
// k8s.node.cpu.time, k8s.pod.cpu.time and
// k8s.node.system_container.cpu.time: without cpu.mode.
type cpuRecorders struct {
	modeTime recorder[func(*metadata.MetricsBuilder, pcommon.Timestamp, float64, metadata.AttributeCPUMode)]
	time     recorder[func(*metadata.MetricsBuilder, pcommon.Timestamp, float64)]
	usage    recorder[func(*metadata.MetricsBuilder, pcommon.Timestamp, float64)]
}

func cpuTable(m *metadata.MetricsConfig) [numKinds]cpuRecorders {
	return [numKinds]cpuRecorders{
		kindNode: {
			time:  rec(m.K8sNodeCPUTime.Enabled, mbT.RecordK8sNodeCPUTimeDataPoint),
			usage: rec(m.K8sNodeCPUUsage.Enabled, mbT.RecordK8sNodeCPUUsageDataPoint),
		},
		kindPod: {
			time:  rec(m.K8sPodCPUTime.Enabled, mbT.RecordK8sPodCPUTimeDataPoint),
			usage: rec(m.K8sPodCPUUsage.Enabled, mbT.RecordK8sPodCPUUsageDataPoint),
		},
		kindContainer: {
			modeTime: rec(m.ContainerCPUTime.Enabled, mbT.RecordContainerCPUTimeDataPoint),
			usage:    rec(m.ContainerCPUUsage.Enabled, mbT.RecordContainerCPUUsageDataPoint),
		},
		kindSystem: {
			time:  rec(m.K8sNodeSystemContainerCPUTime.Enabled, mbT.RecordK8sNodeSystemContainerCPUTimeDataPoint),
			usage: rec(m.K8sNodeSystemContainerCPUUsage.Enabled, mbT.RecordK8sNodeSystemContainerCPUUsageDataPoint),
		},
	}
}

// cpuFamily is CPU time (by mode for containers) and usage:
// cpuacct.usage* / cpuacct.stat (v1), cpu.stat (v2).
type cpuFamily struct {
	noSums
	v    *env
	slot int
	rec  [numKinds]cpuRecorders
	on   [numKinds]bool // a CPU metric of the kind is enabled
	pts  [numKinds]int
	cur  cgroupfs.CPUStat
	err  error
}

// cpuSeries is what the CPU family keeps of an entity between scrapes.
type cpuSeries struct {
	last     calc.Sample   // previous total CPU time, for the usage rate
	hasLast  bool          // last is set
	cpuSplit calc.CPUSplit // a container's CPU time by mode last reported
}

func newCPUFamily(v *env, m *metadata.MetricsConfig, slot int) family {
	f := &cpuFamily{v: v, slot: slot, rec: cpuTable(m)}
	for k := range f.rec {
		r := &f.rec[k]
		f.on[k] = r.modeTime.on || r.time.on || r.usage.on
		// The time is one point, the total, but a container's two: user
		// and system.
		f.pts[k] = count(r.time.on, r.usage.on) + 2*count(r.modeTime.on)
	}
	// The limit utilization (bandwidth.go) is the usage rate over the
	// limit: the CPU time is read for it too (its point is the bandwidth
	// family's).
	f.on[kindContainer] = f.on[kindContainer] || bandwidthTable(m)[kindContainer].utilization.on
	if f.on == [numKinds]bool{} {
		return nil
	}
	return f
}

func (f *cpuFamily) read(e *entity) {
	f.cur, f.err = cgroupfs.CPUStat{}, nil
	if !f.on[e.kind] {
		return
	}
	f.cur, f.err = f.v.reader.CPU(e.rel)
	if f.err == nil {
		e.hand.cpuUsage = f.cur.Usage // lets the thread-state read skip idle containers (tasks.go)
	}
}

func (f *cpuFamily) readErr() error { return f.err }

func (f *cpuFamily) points(k cgroupKind, _ *series) int { return f.pts[k] }

// record records CPU time (a container's by mode, the node's and a pod's
// total) and, from the second scrape of the entity on, the usage in cores
// over the real time elapsed since the last.
func (f *cpuFamily) record(e *entity, errs *scrapererror.ScrapeErrors) {
	switch {
	case f.err != nil:
		errs.AddPartial(f.pts[e.kind], fmt.Errorf("%s: %w", e.name, f.err))
		return
	case !f.on[e.kind]:
		return
	}
	rec, mb, cpu, st := &f.rec[e.kind], f.v.mb, f.cur, stateOf[cpuSeries](e.st, f.slot)
	if rec.modeTime.on {
		f.recordModes(e, rec, &cpu, st)
	} else if rec.time.on && cpu.Usage.OK {
		rec.time.record(mb, e.ts, float64(cpu.Usage.V)/1e9)
	}
	if !cpu.Usage.OK {
		st.hasLast = false
		return
	}
	cur := calc.Sample{Value: cpu.Usage.V, At: e.now}
	if st.hasLast {
		if cores, ok := calc.CPUCores(st.last, cur); ok {
			if rec.usage.on {
				rec.usage.record(mb, e.ts, cores)
			}
			e.hand.cpuCores, e.hand.cpuCoresOK = cores, true
		}
	}
	st.last, st.hasLast = cur, true
}

// recordModes records a container's CPU time by mode, the modes as a split
// of the precise total (calc.AdjustCPUSplit: v1's are tick-sampled and do
// not sum to it).
func (f *cpuFamily) recordModes(e *entity, rec *cpuRecorders, cpu *cgroupfs.CPUStat, st *cpuSeries) {
	if cpu.Usage.OK && cpu.User.OK && cpu.System.OK {
		st.cpuSplit = calc.AdjustCPUSplit(st.cpuSplit, cpu.Usage.V, cpu.User.V, cpu.System.V)
		cpu.User.V, cpu.System.V = st.cpuSplit.User, st.cpuSplit.System
	}
	if cpu.User.OK {
		rec.modeTime.record(f.v.mb, e.ts, float64(cpu.User.V)/1e9, metadata.AttributeCPUModeUser)
	}
	if cpu.System.OK {
		rec.modeTime.record(f.v.mb, e.ts, float64(cpu.System.V)/1e9, metadata.AttributeCPUModeSystem)
	}
}

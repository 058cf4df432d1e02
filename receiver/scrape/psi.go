// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// psiResources are the pressure files read, with their attribute values.
var psiResources = [...]struct {
	name string
	attr metadata.AttributePressureResource
}{
	{cgroupfs.PSICPU, metadata.AttributePressureResourceCPU},
	{cgroupfs.PSIMemory, metadata.AttributePressureResourceMemory},
	{cgroupfs.PSIIO, metadata.AttributePressureResourceIo},
}

type psiRecorder = func(*metadata.MetricsBuilder, pcommon.Timestamp, float64, metadata.AttributePressureResource, metadata.AttributePressureStallType)

// psiRecorders are the PSI metrics of one entity kind.
type psiRecorders struct {
	stall, avg10, avg60, avg300 recorder[psiRecorder]
}

func psiTable(m *metadata.MetricsConfig) [numKinds]psiRecorders {
	return [numKinds]psiRecorders{
		kindNode: {
			stall:  rec(m.K8sNodePressureStallTime.Enabled, mbT.RecordK8sNodePressureStallTimeDataPoint),
			avg10:  rec(m.K8sNodePressureAvg10.Enabled, mbT.RecordK8sNodePressureAvg10DataPoint),
			avg60:  rec(m.K8sNodePressureAvg60.Enabled, mbT.RecordK8sNodePressureAvg60DataPoint),
			avg300: rec(m.K8sNodePressureAvg300.Enabled, mbT.RecordK8sNodePressureAvg300DataPoint),
		},
		kindPod: {
			stall:  rec(m.K8sPodPressureStallTime.Enabled, mbT.RecordK8sPodPressureStallTimeDataPoint),
			avg10:  rec(m.K8sPodPressureAvg10.Enabled, mbT.RecordK8sPodPressureAvg10DataPoint),
			avg60:  rec(m.K8sPodPressureAvg60.Enabled, mbT.RecordK8sPodPressureAvg60DataPoint),
			avg300: rec(m.K8sPodPressureAvg300.Enabled, mbT.RecordK8sPodPressureAvg300DataPoint),
		},
		kindContainer: {
			stall:  rec(m.ContainerPressureStallTime.Enabled, mbT.RecordContainerPressureStallTimeDataPoint),
			avg10:  rec(m.ContainerPressureAvg10.Enabled, mbT.RecordContainerPressureAvg10DataPoint),
			avg60:  rec(m.ContainerPressureAvg60.Enabled, mbT.RecordContainerPressureAvg60DataPoint),
			avg300: rec(m.ContainerPressureAvg300.Enabled, mbT.RecordContainerPressureAvg300DataPoint),
		},
	}
}

// psiFamily is pressure stall information: stall time and (optional)
// averages of cpu, memory and io pressure, from the cgroup's files in the
// unified tree (on hybrid nodes too), for the node the root cgroup's or
// /proc/pressure.
type psiFamily struct {
	noSums
	v           *env
	rec         [numKinds]psiRecorders
	on          [numKinds]bool
	pts         [numKinds]int
	unavailable bool // PSI unavailability was logged (once per receiver)
	cur         [len(psiResources)]cgroupfs.PSI
	err         error
}

func newPSIFamily(v *env, m *metadata.MetricsConfig, _ int) family {
	f := &psiFamily{v: v, rec: psiTable(m)}
	for k := range f.rec {
		r := &f.rec[k]
		n := count(r.stall.on, r.avg10.on, r.avg60.on, r.avg300.on)
		f.on[k] = n > 0
		f.pts[k] = len(psiResources) * 2 * n // some and full per resource
	}
	if f.on == [numKinds]bool{} {
		return nil
	}
	return f
}

func (f *psiFamily) readErr() error { return f.err }

func (f *psiFamily) points(k cgroupKind, _ *series) int { return f.pts[k] }

// read reads the entity's cpu, memory and io pressure. The first error
// wins; a missing or unsupported file is no data, logged once per receiver.
func (f *psiFamily) read(e *entity) {
	f.cur, f.err = [len(psiResources)]cgroupfs.PSI{}, nil
	if !f.on[e.kind] {
		return
	}
	v := f.v
	for i, r := range psiResources {
		var p cgroupfs.PSI
		var err error
		if e.kind == kindNode {
			p, err = v.reader.NodePressure(r.name)
		} else {
			p, err = v.reader.Pressure(e.rel, r.name)
		}
		if err != nil {
			if f.err == nil {
				f.err = fmt.Errorf("%s pressure: %w", r.name, err)
			}
			continue
		}
		f.cur[i] = p
		if !p.OK && !f.unavailable {
			f.unavailable = true
			v.logger.Info("Pressure stall information (PSI) is unavailable for some cgroups: no pressure points for them. "+
				"PSI needs a unified (v2) cgroup tree and a kernel with CONFIG_PSI and without psi=0; this is logged once",
				zap.String("first", e.name), zap.String("resource", r.name), zap.Stringer("mode", v.layout.Mode))
		}
	}
}

// record records stall time in seconds (the kernel's total is in µs) and
// the averages as ratios 0-1 (the kernel prints percentages), for each line
// the file has. A pressure read error costs the entity's PSI points only.
func (f *psiFamily) record(e *entity, errs *scrapererror.ScrapeErrors) {
	if !f.on[e.kind] {
		return
	}
	if f.err != nil {
		errs.AddPartial(f.pts[e.kind], fmt.Errorf("%s: %w", e.name, f.err))
	}
	rec, mb, ts := &f.rec[e.kind], f.v.mb, e.ts
	for i, r := range psiResources {
		p := f.cur[i]
		if !p.OK {
			continue
		}
		for _, l := range [...]struct {
			line cgroupfs.PSILine
			attr metadata.AttributePressureStallType
		}{{p.Some, metadata.AttributePressureStallTypeSome}, {p.Full, metadata.AttributePressureStallTypeFull}} {
			if !l.line.OK {
				continue
			}
			rec.stall.record(mb, ts, float64(l.line.Total)/1e6, r.attr, l.attr)
			rec.avg10.record(mb, ts, l.line.Avg10/100, r.attr, l.attr)
			rec.avg60.record(mb, ts, l.line.Avg60/100, r.attr, l.attr)
			rec.avg300.record(mb, ts, l.line.Avg300/100, r.attr, l.attr)
		}
	}
}

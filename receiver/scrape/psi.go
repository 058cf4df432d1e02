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

type psiRecorder func(*metadata.MetricsBuilder, pcommon.Timestamp, float64, metadata.AttributePressureResource, metadata.AttributePressureStallType)

// psiRecorders are the PSI metrics of one entity kind, as method
// expressions.
type psiRecorders struct {
	stall, avg10, avg60, avg300 psiRecorder
}

var psiRec = [...]psiRecorders{
	kindNode: {mbT.RecordK8sNodePressureStallTimeDataPoint, mbT.RecordK8sNodePressureAvg10DataPoint,
		mbT.RecordK8sNodePressureAvg60DataPoint, mbT.RecordK8sNodePressureAvg300DataPoint},
	kindPod: {mbT.RecordK8sPodPressureStallTimeDataPoint, mbT.RecordK8sPodPressureAvg10DataPoint,
		mbT.RecordK8sPodPressureAvg60DataPoint, mbT.RecordK8sPodPressureAvg300DataPoint},
	kindContainer: {mbT.RecordContainerPressureStallTimeDataPoint, mbT.RecordContainerPressureAvg10DataPoint,
		mbT.RecordContainerPressureAvg60DataPoint, mbT.RecordContainerPressureAvg300DataPoint},
}

// psiFamily is pressure stall information: stall time and (optional)
// averages of cpu, memory and io pressure, from the cgroup's files in the
// unified tree (on hybrid nodes too), for the node the root cgroup's or
// /proc/pressure.
type psiFamily struct {
	noSums
	v           *env
	on          [numKinds]bool
	pts         [numKinds]int
	unavailable bool // PSI unavailability was logged (once per receiver)
	cur         [len(psiResources)]cgroupfs.PSI
	err         error
}

func newPSIFamily(v *env, m *metadata.MetricsConfig, _ int) family {
	f := &psiFamily{v: v}
	for k := range psiRec {
		r := &psiRec[k]
		n := countOn(m, r.stall, r.avg10, r.avg60, r.avg300)
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
	rec, mb, ts := &psiRec[e.kind], f.v.mb, e.ts
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
			rec.stall(mb, ts, float64(l.line.Total)/1e6, r.attr, l.attr)
			rec.avg10(mb, ts, l.line.Avg10/100, r.attr, l.attr)
			rec.avg60(mb, ts, l.line.Avg60/100, r.attr, l.attr)
			rec.avg300(mb, ts, l.line.Avg300/100, r.attr, l.attr)
		}
	}
}

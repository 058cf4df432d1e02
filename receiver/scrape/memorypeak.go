// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"fmt"

	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/calc"
	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// memoryPeakTable is container.memory.peak and k8s.pod.memory.peak; the
// root cgroup has no memory.peak.
func memoryPeakTable(m *metadata.MetricsConfig) [numKinds]recorder[gaugeFn] {
	return [numKinds]recorder[gaugeFn]{
		kindPod:       rec(m.K8sPodMemoryPeak.Enabled, mbT.RecordK8sPodMemoryPeakDataPoint),
		kindContainer: rec(m.ContainerMemoryPeak.Enabled, mbT.RecordContainerMemoryPeakDataPoint),
	}
}

// memoryPeakFamily is the highest memory usage of pods and containers,
// cgroup v2 memory.peak. On a v1 or hybrid node it does not exist: no
// point, never a 0.
type memoryPeakFamily struct {
	noSums
	v   *env
	rec [numKinds]recorder[gaugeFn]
	cur cgroupfs.U64
	err error
}

func newMemoryPeakFamily(v *env, m *metadata.MetricsConfig, _ int) family {
	f := &memoryPeakFamily{v: v, rec: memoryPeakTable(m)}
	if !f.rec[kindPod].on && !f.rec[kindContainer].on || v.layout.StatsV1() {
		return nil
	}
	return f
}

func (f *memoryPeakFamily) read(e *entity) {
	f.cur, f.err = cgroupfs.U64{}, nil
	if f.rec[e.kind].on {
		f.cur, f.err = f.v.reader.MemoryPeak(e.rel)
	}
}

func (f *memoryPeakFamily) readErr() error { return f.err }

func (f *memoryPeakFamily) points(k cgroupKind, _ *series) int { return count(f.rec[k].on) }

func (f *memoryPeakFamily) record(e *entity, errs *scrapererror.ScrapeErrors) {
	switch {
	case f.err != nil:
		errs.AddPartial(1, fmt.Errorf("%s: %w", e.name, f.err))
	case f.cur.OK:
		f.rec[e.kind].record(f.v.mb, e.ts, calc.ClampInt64(f.cur.V))
	}
}

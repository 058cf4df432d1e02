// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/containerstats/containerstatsreceiver/internal/calc"
	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// cpuPoints is what a failed CPU read costs: user time, system time, usage.
const cpuPoints = 3

// cpuRecorders are the CPU metrics of one entity kind, so the node, pods and
// containers share one recording path and one set of definitions.
type cpuRecorders struct {
	time  func(pcommon.Timestamp, float64, metadata.AttributeCPUMode)
	usage func(pcommon.Timestamp, float64)
}

func (s *Scraper) cpuRecordersFor(k cgroupKind) cpuRecorders {
	mb := s.mb
	switch k {
	case kindNode:
		return cpuRecorders{mb.RecordK8sNodeCPUTimeDataPoint, mb.RecordK8sNodeCPUUsageDataPoint}
	case kindPod:
		return cpuRecorders{mb.RecordK8sPodCPUTimeDataPoint, mb.RecordK8sPodCPUUsageDataPoint}
	default:
		return cpuRecorders{mb.RecordContainerCPUTimeDataPoint, mb.RecordContainerCPUUsageDataPoint}
	}
}

// recordCPU records CPU time by mode and, from the second scrape of the
// entity on, the usage in cores over the real time elapsed since the last.
func (s *Scraper) recordCPU(ts pcommon.Timestamp, now time.Time, e entity, cpu cgroupfs.CPUStat) {
	rec := s.cpuRecordersFor(e.kind)
	if cpu.User.OK {
		rec.time(ts, float64(cpu.User.V)/1e9, metadata.AttributeCPUModeUser)
	}
	if cpu.System.OK {
		rec.time(ts, float64(cpu.System.V)/1e9, metadata.AttributeCPUModeSystem)
	}
	if !cpu.Usage.OK {
		e.st.hasCPU = false
		return
	}
	cur := calc.Sample{Value: cpu.Usage.V, At: now}
	if e.st.hasCPU {
		if cores, ok := calc.CPUCores(e.st.lastCPU, cur); ok {
			rec.usage(ts, cores)
		}
	}
	e.st.lastCPU, e.st.hasCPU = cur, true
}

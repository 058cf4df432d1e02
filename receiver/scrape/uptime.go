// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

type uptimeRecorder = func(mbT, pcommon.Timestamp, float64)

// uptimeTable is k8s.node.uptime, k8s.pod.uptime and container.uptime.
func uptimeTable(m *metadata.MetricsConfig) [numKinds]recorder[uptimeRecorder] {
	return [numKinds]recorder[uptimeRecorder]{
		kindNode:      rec(m.K8sNodeUptime.Enabled, mbT.RecordK8sNodeUptimeDataPoint),
		kindPod:       rec(m.K8sPodUptime.Enabled, mbT.RecordK8sPodUptimeDataPoint),
		kindContainer: rec(m.ContainerUptime.Enabled, mbT.RecordContainerUptimeDataPoint),
	}
}

// uptimeFamily is the time since the node booted (/proc/stat btime, read
// once at Start), since the runtime created the pod's sandbox, and since
// it created the container, from the identity; nothing is read per scrape.
type uptimeFamily struct {
	noSums
	v   *env
	rec [numKinds]recorder[uptimeRecorder]
}

func newUptimeFamily(v *env, m *metadata.MetricsConfig, _ int) family {
	f := uptimeFamily{v: v, rec: uptimeTable(m)}
	if !f.rec[kindNode].on && !f.rec[kindPod].on && !f.rec[kindContainer].on {
		return nil
	}
	return f
}

func (uptimeFamily) read(*entity)   {}
func (uptimeFamily) readErr() error { return nil }

func (f uptimeFamily) points(k cgroupKind, _ *series) int { return count(f.rec[k].on) }

// record records the entity's uptime in whole seconds, as a double (the
// semantic conventions' value type); nothing when the start is unknown (a
// container or pod no runtime named: the first-seen time is not a start
// time; a node whose boot time could not be read) or the clocks disagree
// (a start in the future).
func (f uptimeFamily) record(e *entity, _ *scrapererror.ScrapeErrors) {
	if !f.rec[e.kind].on {
		return
	}
	var start time.Time
	switch e.kind {
	case kindNode:
		if f.v.bootTime != 0 {
			start = f.v.bootTime.AsTime()
		}
	case kindPod:
		start = e.podStart
	case kindContainer:
		switch {
		case !e.st.runStart.IsZero():
			start = e.st.runStart // a standalone container's run (instance.go)
		case e.ct != nil:
			start = e.ct.StartTime
		}
	}
	if start.IsZero() {
		return
	}
	if d := e.now.Sub(start); d >= 0 {
		f.rec[e.kind].record(f.v.mb, e.ts, float64(d/time.Second))
	}
}

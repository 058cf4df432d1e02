// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"errors"
	"fmt"
	"io/fs"

	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/calc"
	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// pidsRecorders are the pids metrics of the node, pods and containers, as
// method expressions. The node's come from /proc, not from the root
// cgroup (which has no pids.current on v1 and older v2 kernels): the
// kernel's task count and limit, as the kubelet's Summary API gives them
// (NodeStats.Rlimit).
type pidsRecorders struct {
	count, limit recorder[gaugeFn]
}

func pidsTable(m *metadata.MetricsConfig) [numKinds]pidsRecorders {
	return [numKinds]pidsRecorders{
		kindNode: {
			count: rec(m.K8sNodePidsCount.Enabled, mbT.RecordK8sNodePidsCountDataPoint),
			limit: rec(m.K8sNodePidsLimit.Enabled, mbT.RecordK8sNodePidsLimitDataPoint),
		},
		kindPod: {
			count: rec(m.K8sPodPidsCount.Enabled, mbT.RecordK8sPodPidsCountDataPoint),
			limit: rec(m.K8sPodPidsLimit.Enabled, mbT.RecordK8sPodPidsLimitDataPoint),
		},
		kindContainer: {
			count: rec(m.ContainerPidsCount.Enabled, mbT.RecordContainerPidsCountDataPoint),
			limit: rec(m.ContainerPidsLimit.Enabled, mbT.RecordContainerPidsLimitDataPoint),
		},
	}
}

// pidsFamily is the pids controller: tasks (processes and threads) charged
// to the cgroup and its limit, pids.current and pids.max.
type pidsFamily struct {
	noSums
	v   *env
	rec [numKinds]pidsRecorders
	pts [numKinds]int
	cur cgroupfs.PidsStat
	err error
}

func newPidsFamily(v *env, m *metadata.MetricsConfig, _ int) family {
	f := &pidsFamily{v: v, rec: pidsTable(m)}
	for k := range f.rec {
		f.pts[k] = count(f.rec[k].count.on, f.rec[k].limit.on)
	}
	if f.pts == [numKinds]int{} {
		return nil
	}
	return f
}

func (f *pidsFamily) read(e *entity) {
	f.cur, f.err = cgroupfs.PidsStat{}, nil
	switch {
	case f.pts[e.kind] == 0:
	case e.kind == kindNode:
		f.cur, f.err = f.readNode()
	default:
		f.cur, f.err = f.v.reader.Pids(e.rel)
	}
}

// readNode reads the node's tasks (/proc/loadavg) and its limit (the lower
// of kernel.pid_max and kernel.threads-max), each only when its metric is
// on; a missing file is an absent value, never a 0.
func (f *pidsFamily) readNode() (cgroupfs.PidsStat, error) {
	var st cgroupfs.PidsStat
	if f.rec[kindNode].count.on {
		n, err := f.v.proc.Tasks()
		switch {
		case err == nil:
			st.Current = cgroupfs.Some(n)
		case !errors.Is(err, fs.ErrNotExist):
			return st, err
		}
	}
	if f.rec[kindNode].limit.on {
		n, err := f.v.proc.TaskLimit()
		switch {
		case err == nil:
			st.Max = cgroupfs.Limit{V: n, OK: true}
		case !errors.Is(err, fs.ErrNotExist):
			return st, err
		}
	}
	return st, nil
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
	rec := &f.rec[e.kind]
	if f.cur.Current.OK {
		rec.count.record(f.v.mb, e.ts, calc.ClampInt64(f.cur.Current.V))
	}
	if f.cur.Max.Finite() {
		rec.limit.record(f.v.mb, e.ts, calc.ClampInt64(f.cur.Max.V))
	}
}

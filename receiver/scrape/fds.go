// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"fmt"

	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/procfs"
)

// fdTable is container.file_descriptor.count.
func fdTable(m *metadata.MetricsConfig) recorder[gaugeFn] {
	return rec(m.ContainerFileDescriptorCount.Enabled, mbT.RecordContainerFileDescriptorCountDataPoint)
}

// fdFamily is container.file_descriptor.count: the entries of
// /proc/<pid>/fd summed over the container's processes (cgroup.procs,
// sub-cgroups included).
type fdFamily struct {
	noSums
	v       *env
	rec     recorder[gaugeFn]
	counter *procfs.FDCounter // the directory reader, created on first use
	pids    []int             // PID buffer, reused

	n   int
	ok  bool // at least one process was counted
	err error
}

func newFDFamily(v *env, m *metadata.MetricsConfig, _ int) family {
	r := fdTable(m)
	if !r.on {
		return nil
	}
	return &fdFamily{v: v, rec: r}
}

// read counts the container's open file descriptors. A process that exits
// between the listing and its count is left out; any other error (a
// permission error) leaves the container without a point.
func (f *fdFamily) read(e *entity) {
	f.n, f.ok, f.err = 0, false, nil
	if e.kind != kindContainer {
		return
	}
	if f.counter == nil {
		f.counter = f.v.proc.NewFDCounter()
	}
	var pidsOK bool
	f.pids, pidsOK, f.err = f.v.reader.Procs(e.rel, f.pids[:0])
	if f.err != nil || !pidsOK {
		return
	}
	for _, pid := range f.pids {
		if pid <= 0 {
			continue // a process outside the receiver's PID namespace
		}
		n, ok, err := f.counter.Count(pid)
		if err != nil {
			f.n, f.ok, f.err = 0, false, err
			return
		}
		if ok {
			f.n += n
			f.ok = true
		}
	}
}

func (f *fdFamily) readErr() error { return f.err }

func (f *fdFamily) points(k cgroupKind, _ *series) int { return count(k == kindContainer) }

// record records the container's open file descriptors. A container whose
// processes all exited has no point.
func (f *fdFamily) record(e *entity, errs *scrapererror.ScrapeErrors) {
	if e.kind != kindContainer {
		return
	}
	if f.err != nil {
		errs.AddPartial(1, fmt.Errorf("%s: file descriptors: %w", e.name, f.err))
		return
	}
	if f.ok {
		f.rec.record(f.v.mb, e.ts, int64(f.n))
	}
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/procfs"
)

// fdState is what file descriptor counting keeps across scrapes: the
// directory reader and the PID buffer.
type fdState struct {
	counter *procfs.FDCounter
	pids    []int
}

// fdRead is one container's open file descriptors in one scrape.
type fdRead struct {
	n   int
	ok  bool // at least one process was counted
	err error
}

// readFDs sums the entries of /proc/<pid>/fd over the container's
// processes (cgroup.procs, sub-cgroups included). A process that exits
// between the listing and its count is left out; any other error (a
// permission error) leaves the container without a point.
func (s *Scraper) readFDs(e entity, r *fdRead) {
	if e.kind != kindContainer || !s.opts.MetricsBuilderConfig.Metrics.ContainerFileDescriptorCount.Enabled {
		return
	}
	if s.fds.counter == nil {
		s.fds.counter = s.proc.NewFDCounter()
	}
	var pidsOK bool
	s.fds.pids, pidsOK, r.err = s.reader.Procs(e.rel, s.fds.pids[:0])
	if r.err != nil || !pidsOK {
		return
	}
	for _, pid := range s.fds.pids {
		if pid <= 0 {
			continue // a process outside the receiver's PID namespace
		}
		n, ok, err := s.fds.counter.Count(pid)
		if err != nil {
			r.n, r.ok, r.err = 0, false, err
			return
		}
		if ok {
			r.n += n
			r.ok = true
		}
	}
}

// recordFDs records the container's open file descriptors. A container
// whose processes all exited has no point.
func (s *Scraper) recordFDs(ts pcommon.Timestamp, e entity, r *fdRead, errs *scrapererror.ScrapeErrors) {
	if e.kind != kindContainer || !s.opts.MetricsBuilderConfig.Metrics.ContainerFileDescriptorCount.Enabled {
		return
	}
	if r.err != nil {
		errs.AddPartial(1, fmt.Errorf("%s: file descriptors: %w", e.name, r.err))
		return
	}
	if r.ok {
		s.mb.RecordContainerFileDescriptorCountDataPoint(ts, int64(r.n))
	}
}

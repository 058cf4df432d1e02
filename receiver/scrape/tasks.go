// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/procfs"
)

// taskStateAttr maps procfs states to the task.state attribute.
var taskStateAttr = [procfs.NumTaskStates]metadata.AttributeTaskState{
	procfs.StateRunning:         metadata.AttributeTaskStateRunning,
	procfs.StateSleeping:        metadata.AttributeTaskStateSleeping,
	procfs.StateUninterruptible: metadata.AttributeTaskStateUninterruptible,
	procfs.StateStopped:         metadata.AttributeTaskStateStopped,
	procfs.StateIdle:            metadata.AttributeTaskStateIdle,
	procfs.StateZombie:          metadata.AttributeTaskStateZombie,
}

// podTasks sums a pod's containers in the current scrape. A pod with a
// container whose threads could not be read has no sum: no data rather
// than a wrong one.
type podTasks struct {
	load       float64
	tasks      procfs.TaskCounts
	incomplete bool
}

func (x *cpuExtraState) pod(uid string) *podTasks {
	p := x.pods[uid]
	if p == nil {
		p = &podTasks{}
		x.pods[uid] = p
	}
	return p
}

func (x *cpuExtraState) resetPods() { clear(x.pods) }

// threadStates is a container's thread states as last read from /proc,
// with what they were read under: its thread list and total CPU time.
type threadStates struct {
	tids   []int
	cpu    uint64 // total CPU time (ns) read in the same scrape, before the states
	counts procfs.TaskCounts
}

// readTasks lists the container's threads (its sub-cgroups included) and
// counts them by the state in /proc/<tid>/stat. One file per thread: the
// reader and the ID buffer are reused.
//
// A container whose thread list and total CPU time are both unchanged since
// the last read keeps the states of that read, without reading a thread's
// file: no thread of it ran in between (the CPU time is read before the
// states, so a thread that ran after the last CPU read and before the state
// read has advanced it by now), and a thread changes state only by running,
// except when woken from outside (a signal, I/O completion): it then runs
// at once and advances the CPU time by the next scrape. Threads moved in or
// out, or exited and reaped, change the list. Most threads of a node are
// idle most of the time, so most /proc/<tid>/stat reads go away.
func (s *Scraper) readTasks(e entity, x *cpuExtra) {
	tids, ok, err := s.reader.Threads(e.rel, s.cpuExt.tids[:0])
	s.cpuExt.tids = tids
	if err != nil || !ok {
		e.st.threads = nil
		x.tasksErr = err
		return
	}
	if prev := e.st.threads; prev != nil && x.cpuUsage.OK && prev.cpu == x.cpuUsage.V && slices.Equal(prev.tids, tids) {
		x.tasks, x.tasksOK = prev.counts, true
		return
	}
	if !s.cpuExt.foreignPIDNS && slices.Contains(tids, 0) {
		// cgroup.threads shows 0 for a thread outside the reader's PID
		// namespace: its state cannot be read (it is not counted).
		s.cpuExt.foreignPIDNS = true
		s.logger.Warn("Thread lists show threads outside the collector's PID namespace: they are not counted in container.tasks "+
			"and the load average. Run the collector in the host PID namespace (hostPID: true); this is logged once",
			zap.String("first", e.name))
	}
	if err := s.cpuExt.states.Count(tids, &x.tasks); err != nil {
		e.st.threads = nil
		x.tasksErr = err
		return
	}
	x.tasksOK = true
	if !x.cpuUsage.OK {
		e.st.threads = nil
		return
	}
	ts := e.st.threads
	if ts == nil {
		ts = &threadStates{}
		e.st.threads = ts
	}
	ts.tids = append(ts.tids[:0], tids...)
	ts.cpu, ts.counts = x.cpuUsage.V, x.tasks
}

// recordTasks records a container's thread counts by state and its load
// average, updated with the running count over the real time since the
// previous scrape, and adds both to its pod's sums; a pod records the sums.
func (s *Scraper) recordTasks(ts pcommon.Timestamp, now time.Time, e entity, p *kindPlan, x *cpuExtra, errs *scrapererror.ScrapeErrors) {
	switch e.kind {
	case kindContainer:
		if x.tasksErr != nil {
			errs.AddPartial(p.tasksPts, fmt.Errorf("%s: threads: %w", e.name, x.tasksErr))
			if e.pod != "" {
				s.cpuExt.pod(e.pod).incomplete = true
			}
			return
		}
		if !x.tasksOK {
			return
		}
		for st, n := range x.tasks {
			s.mb.RecordContainerTasksDataPoint(ts, n, taskStateAttr[st])
		}
		load := e.st.load.Update(float64(x.tasks[procfs.StateRunning]), now)
		s.mb.RecordContainerCPULoadAverage10sDataPoint(ts, load)
		if e.pod != "" {
			sum := s.cpuExt.pod(e.pod)
			sum.load += load
			for st, n := range x.tasks {
				sum.tasks[st] += n
			}
		}
	case kindPod:
		sum := s.cpuExt.pods[e.pod]
		if sum == nil || sum.incomplete {
			return // no container of the pod had a thread list, or one failed
		}
		for st, n := range sum.tasks {
			s.mb.RecordK8sPodTasksDataPoint(ts, n, taskStateAttr[st])
		}
		s.mb.RecordK8sPodCPULoadAverage10sDataPoint(ts, sum.load)
	}
}

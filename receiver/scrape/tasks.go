// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"fmt"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/calc"
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

// tasksRecorders are the thread-state and load-average metrics of pods
// and containers, as method expressions.
type tasksRecorders struct {
	tasks recorder[func(*metadata.MetricsBuilder, pcommon.Timestamp, int64, metadata.AttributeTaskState)]
	load  recorder[func(*metadata.MetricsBuilder, pcommon.Timestamp, float64)]
}

func tasksTable(m *metadata.MetricsConfig) [numKinds]tasksRecorders {
	return [numKinds]tasksRecorders{
		kindPod: {
			tasks: rec(m.K8sPodTasks.Enabled, mbT.RecordK8sPodTasksDataPoint),
			load:  rec(m.K8sPodCPULoadAverage10s.Enabled, mbT.RecordK8sPodCPULoadAverage10sDataPoint),
		},
		kindContainer: {
			tasks: rec(m.ContainerTasks.Enabled, mbT.RecordContainerTasksDataPoint),
			load:  rec(m.ContainerCPULoadAverage10s.Enabled, mbT.RecordContainerCPULoadAverage10sDataPoint),
		},
	}
}

// podTasks sums a pod's containers in the current scrape. A pod with a
// container whose threads could not be read has no sum: no data rather
// than a wrong one.
type podTasks struct {
	load       float64
	tasks      procfs.TaskCounts
	incomplete bool
}

// tasksFamily is thread states and the load average: containers read
// their thread lists and /proc/<tid>/stat; pods record the sums of their
// containers (containers are scraped before pods), so the pod metrics make
// the containers' thread states read too.
type tasksFamily struct {
	v       *env
	slot    int
	rec     [numKinds]tasksRecorders
	pts     [numKinds]int // a container's: its states and load average; a pod's: the sums
	states  *procfs.TaskStateReader
	tids    []int                // thread-ID buffer, reused across containers and scrapes
	pods    map[string]*podTasks // per-pod sums of the current scrape
	foreign bool                 // thread lists showed tasks outside our PID namespace: logged once

	cur   procfs.TaskCounts
	curOK bool // the cgroup has a thread list and it was read
	err   error
}

// tasksSeries is what the tasks family keeps of a container between
// scrapes.
type tasksSeries struct {
	load    calc.LoadAverage // running threads smoothed over 10 s
	threads *threadStates    // thread states of the last read
}

func newTasksFamily(v *env, m *metadata.MetricsConfig, slot int) family {
	f := &tasksFamily{v: v, slot: slot, rec: tasksTable(m)}
	for k := range f.rec {
		f.pts[k] = len(taskStateAttr)*count(f.rec[k].tasks.on) + count(f.rec[k].load.on)
	}
	if f.pts == [numKinds]int{} {
		return nil
	}
	f.states, f.tids, f.pods = v.proc.NewTaskStateReader(), make([]int, 0, 256), map[string]*podTasks{}
	return f
}

// beginScrape forgets the last scrape's pod sums.
func (f *tasksFamily) beginScrape() { clear(f.pods) }

func (f *tasksFamily) pod(uid string) *podTasks {
	p := f.pods[uid]
	if p == nil {
		p = &podTasks{}
		f.pods[uid] = p
	}
	return p
}

func (f *tasksFamily) readErr() error { return f.err }

func (f *tasksFamily) points(k cgroupKind, _ *series) int { return f.pts[k] }

// threadStates is a container's thread states as last read from /proc,
// with what they were read under: its thread list and total CPU time.
type threadStates struct {
	tids   []int
	cpu    uint64 // total CPU time (ns) read in the same scrape, before the states
	counts procfs.TaskCounts
}

// read lists a container's threads (its sub-cgroups included) and
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
func (f *tasksFamily) read(e *entity) {
	f.cur, f.curOK, f.err = procfs.TaskCounts{}, false, nil
	if e.kind != kindContainer {
		return
	}
	v, st := f.v, stateOf[tasksSeries](e.st, f.slot)
	tids, ok, err := v.reader.Threads(e.rel, f.tids[:0])
	f.tids = tids
	if err != nil || !ok {
		st.threads = nil
		f.err = err
		return
	}
	if e.pod != "" && len(tids) > 0 && tids[0] > 0 {
		e.pass.notePodThread(e.pod, tids[0])
	}
	if prev := st.threads; prev != nil && e.hand.cpuUsage.OK && prev.cpu == e.hand.cpuUsage.V && slices.Equal(prev.tids, tids) {
		f.cur, f.curOK = prev.counts, true
		return
	}
	if !f.foreign && slices.Contains(tids, 0) {
		// cgroup.threads shows 0 for a thread outside the reader's PID
		// namespace: its state cannot be read (it is not counted).
		f.foreign = true
		v.logger.Warn("Thread lists show threads outside the collector's PID namespace: they are not counted in container.tasks "+
			"and the load average. Run the collector in the host PID namespace (hostPID: true); this is logged once",
			zap.String("first", e.name))
	}
	if err := f.states.Count(tids, &f.cur); err != nil {
		st.threads = nil
		f.err = err
		return
	}
	f.curOK = true
	if !e.hand.cpuUsage.OK {
		st.threads = nil
		return
	}
	ts := st.threads
	if ts == nil {
		ts = &threadStates{}
		st.threads = ts
	}
	ts.tids = append(ts.tids[:0], tids...)
	ts.cpu, ts.counts = e.hand.cpuUsage.V, f.cur
}

// record records a container's thread counts by state and its load
// average, updated with the running count over the real time since the
// previous scrape, and adds both to its pod's sums; a pod records the sums.
func (f *tasksFamily) record(e *entity, errs *scrapererror.ScrapeErrors) {
	mb := f.v.mb
	switch e.kind {
	case kindContainer:
		rec := &f.rec[kindContainer]
		if f.err != nil {
			errs.AddPartial(f.pts[kindContainer], fmt.Errorf("%s: threads: %w", e.name, f.err))
			if e.pod != "" {
				f.pod(e.pod).incomplete = true
			}
			return
		}
		if !f.curOK {
			return
		}
		for st, n := range f.cur {
			rec.tasks.record(mb, e.ts, n, taskStateAttr[st])
		}
		load := stateOf[tasksSeries](e.st, f.slot).load.Update(float64(f.cur[procfs.StateRunning]), e.now)
		rec.load.record(mb, e.ts, load)
		if e.pod != "" {
			sum := f.pod(e.pod)
			sum.load += load
			for st, n := range f.cur {
				sum.tasks[st] += n
			}
		}
	case kindPod:
		sum := f.pods[e.pod]
		if sum == nil || sum.incomplete {
			return // no container of the pod had a thread list, or one failed
		}
		rec := &f.rec[kindPod]
		for st, n := range sum.tasks {
			rec.tasks.record(mb, e.ts, n, taskStateAttr[st])
		}
		rec.load.record(mb, e.ts, sum.load)
	}
}

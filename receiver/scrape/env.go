// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/containerevents"
	"github.com/containerstats/containerstatsreceiver/internal/fsstats"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/procfs"
)

// env is the narrow environment families read and record through, set
// once by Start: the cgroup reader, /proc, the metrics builder and what the
// host gives. Families hold a pointer to the scraper's one env and never
// the scraper; nothing in it changes between Start and Shutdown.
type env struct {
	rootPath string // the host handle's root (Host.Root)
	nodeName string // k8s.node.name; "" when unknown
	layout   *cgroupfs.Layout
	reader   *cgroupfs.Reader
	proc     procfs.FS
	mb       *metadata.MetricsBuilder
	logger   *zap.Logger
	// bootTime is the node's boot time, 0 when /proc/stat did not give it.
	bootTime pcommon.Timestamp
	// runs: standalone containers are reported and a metric that depends
	// on their runs is on (runStartRec): their runs are followed
	// (instance.go).
	runs   bool
	ident  Identity
	fs     Filesystem                // nil: no filesystem metrics
	gpu    *gpuState                 // nil: GPU metrics off (gpu.go)
	events *containerevents.Detector // container events (events.go); nil when off
}

// pass is one scrape's scratch: made by each Scrape (newPass) and reached
// by the families through the entity (entity.pass). It holds what a scrape
// learns on its way that a later entity of the same scrape uses, and the
// entity being read and recorded. Nothing in it outlives the scrape; its
// maps are the previous pass's, cleared, so a scrape allocates none.
type pass struct {
	now  time.Time
	prev time.Time         // the previous scrape's time; zero for the first
	gen  uint64            // the scrape's generation (series.seen)
	fs   *fsstats.Snapshot // the filesystem snapshot; nil without filesystem metrics
	// sources counts the containers reported, by identity.Source (the
	// receiver's own metrics).
	sources [identity.Sources]int64
	// deferred: pods of the containers left to the next scrape (their
	// identity is not fetched yet, see Identity's Pending).
	deferred map[string]bool
	// oomRead: v1 OOM kill counters read, by cgroup path (memory.go: a
	// pod's subtree walk reuses its containers').
	oomRead map[string]uint64
	// podThread: a thread of each pod's containers listed (tasks.go),
	// whose network namespace is the pod's (network.go).
	podThread map[string]int
	// oomCounters are the containers' OOM kill counters for the events
	// detector (events.go).
	oomCounters []containerevents.Counter

	// ent is the entity being read and recorded and ctr a container's
	// identity: the families get them by pointer, this pass's, not one on
	// the heap per entity.
	ent entity
	ctr identity.Container
}

// newPass makes the scrape's pass for the scrape at now, with the last
// pass's buffers.
func newPass(now time.Time, gen uint64, last *pass) *pass {
	p := &pass{now: now, gen: gen}
	if last != nil {
		p.prev = last.now
		p.deferred, p.oomRead, p.podThread = last.deferred, last.oomRead, last.podThread
		clear(p.deferred)
		clear(p.oomRead)
		clear(p.podThread)
		clear(last.oomCounters)
		p.oomCounters = last.oomCounters[:0]
	}
	return p
}

// handoff is what a family hands a later family about the same entity in
// the same scrape. Each field names its producer and its consumers; the
// producer comes first in familyOrder (TestHandoffOrder checks it).
type handoff struct {
	// cpuUsage is the total CPU time read (absent when not read or
	// failed). cpu → tasks: the thread-state read skips idle containers.
	cpuUsage cgroupfs.U64
	// cpuCores is the CPU usage in cores recorded (cpuCoresOK: one was
	// computed). cpu → bandwidth: k8s.container.cpu.limit.utilization.
	cpuCores   float64
	cpuCoresOK bool
	// oomTried: the OOM kill counter was read (oomKills, absent when the
	// kernel has none or the read failed). memory → events.
	oomTried bool
	oomKills cgroupfs.U64
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package containerevents is the container events (OOM kills, restarts;
// docs/logs.md, "Events") beyond the scrape's reading of them: the pure
// Detector that builds their log records from what a scrape observed, the
// Hub that carries them to the logs pipeline, and the Receiver, the logs
// receiver's events part, which drains the Hub (and runs a scrape of its
// own when no metrics receiver scrapes).
package containerevents // import "github.com/containerstats/containerstatsreceiver/internal/containerevents"

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/containerstats/containerstatsreceiver/internal/calc"
	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/resource"
)

// Container events (docs/logs.md, "Events"): OOM kills and restarts as log
// records on the logs signal. The semantic conventions (v1.44.0) define no
// event for either; the names follow their patterns (namespace of the
// entity, then what happened) and are ours.
//
// Where they are detected: in the scrape (receiver/scrape's events
// family), which reads the cgroup tree every collection_interval anyway,
// and hands this package's Detector what it observed (Scrape: its tree,
// the OOM kill counters it read, the runtime's listing); the Detector,
// pure, returns the records, which the scrape publishes (one plog.Logs per
// scrape that found events) to its configuration's Hub; the logs
// receiver of the same configuration (Receiver) drains it. hub.go says
// which scrape that is.
//
// The events are not declared in metadata.yaml: the pinned mdatagen
// (v0.159.0) has `events:`, but its generated LogsBuilder sets neither a
// severity nor an observed timestamp and brings a per-event
// `events::<name>::enabled` switch of its own next to `events.enabled`.
// The records are built here, in one place (appendEvent), and documented
// in docs/logs.md.
const (
	// EventOOMKill is an OOM kill in a container: its cgroup's oom_kill
	// counter (v2 memory.events, v1 memory.oom_control) went up, or the
	// runtime reports an instance ended with reason "OOMKilled" whose
	// counter increase no scrape saw (its cgroup was removed first).
	EventOOMKill = "k8s.container.oom_kill"
	// EventRestart is a new instance of a pod's container (same pod UID
	// and container name, a higher restart count).
	EventRestart = "k8s.container.restart"

	// Record attributes (ours unless noted).

	// AttrRecordUID is the conventions' log.record.uid (development): the
	// event's identity (recordUID). Every copy of a record has the same
	// one, so a backend drops the copies an at-least-once export sent
	// again; two events do not share one (but in recordUID's corner).
	AttrRecordUID     = "log.record.uid"
	AttrOOMKillCount  = "k8s.container.oom_kill.count"  // int: kills since the last observation (>= 1)
	AttrOOMKillSource = "k8s.container.oom_kill.source" // "cgroup" or "runtime"
	// AttrLastTerminatedReason is the conventions'
	// k8s.container.status.last_terminated_reason: the runtime's reason of
	// the previous instance's exit (restart) or of the instance's exit
	// (OOM kill from the runtime).
	AttrLastTerminatedReason   = "k8s.container.status.last_terminated_reason"
	AttrLastTerminatedExitCode = "k8s.container.status.last_terminated_exit_code" // int

	// OOMSourceCgroup and OOMSourceRuntime are the values of
	// AttrOOMKillSource.
	OOMSourceCgroup  = "cgroup"
	OOMSourceRuntime = "runtime"

	// ReasonOOMKilled is the runtime's (CRI's) exit reason of an OOM kill.
	ReasonOOMKilled = "OOMKilled"
)

// exitWait is how long an exited instance without an exit status (not read
// yet: CRI reads at most cri.MaxExitStatusPerList per listing) is waited
// for before it is given up.
const exitWait = 2 * time.Minute

// Config is what the records carry besides the observations.
type Config struct {
	// NodeName is k8s.node.name ("" omits it).
	NodeName string
	// ResourceAttributes are the resource attribute switches (the
	// metrics'), so an event's resource has the container's metrics'
	// keys.
	ResourceAttributes metadata.ResourceAttributesConfig
	// ScopeVersion is the scope's version (the collector's build).
	ScopeVersion string
	// Filter selects the listed instances (the tree's containers come
	// filtered by the scrape).
	Filter identity.Filter
	// PodLabels returns the pod labels of an event's resource (pod_labels);
	// nil: none.
	PodLabels func(cg *cgroupfs.Cgroup, ct *identity.Container) map[string]string
}

// Counter is one container's OOM kill counter as a scrape read it, with
// the cgroup and identity it read it under.
type Counter struct {
	Cgroup   cgroupfs.Cgroup
	Identity identity.Container
	// OOMKills is absent (not OK) on a kernel without the counter.
	OOMKills cgroupfs.U64
}

// Scrape is what one scrape observed.
type Scrape struct {
	Now  time.Time
	Tree *cgroupfs.Tree
	// Counters are the containers the scrape read, in its order (a
	// container whose counter could not be read is not among them).
	Counters []Counter
	// Listed: a runtime lists every container, exited ones included
	// (identity.Cache.Instances), and Instances is its listing. Without
	// one only the cgroup counters give OOM kill events.
	Listed    bool
	Instances []identity.Container
}

// Detector is what the detection keeps between scrapes, by container ID.
// Observe is called by one goroutine at a time.
type Detector struct {
	cfg   Config
	gen   uint64    // the Observe call
	start time.Time // the first scrape: what happened before it is the baseline
	first bool      // the current scrape is the first
	// atStart: containers in the first scrape's tree; an instance first
	// read later starts its counter from its value then (baseline) if it
	// was there at start, from 0 otherwise (all its kills are new).
	atStart map[string]bool
	inst    map[string]*instanceState
	// latest: highest restart count listed per pod UID + container name.
	latest map[nameKey]int64
	out    plog.Logs
}

type nameKey struct{ pod, name string }

// instanceState is one container instance (container ID).
type instanceState struct {
	// The OOM kill counter: last value read and whether there is one.
	oomLast uint64
	oomHas  bool
	// oomReported: kills reported from the counter (then the runtime's
	// "OOMKilled" of the same instance adds no record).
	oomReported uint64
	// cg and ct: the cgroup and identity the scrape last saw (the
	// resource of an event about the instance once it is gone).
	cg    *cgroupfs.Cgroup
	ct    *identity.Container
	listd bool // in a listing already (not new)
	// exitDone: its exit was handled; exitSeen: when it was first listed as
	// exited without an exit status.
	exitDone bool
	exitSeen time.Time
	gen      uint64 // last scrape that saw it in the tree or a listing
}

func (ev *Detector) instance(id string, gen uint64) *instanceState {
	st, ok := ev.inst[id]
	if !ok {
		st = &instanceState{}
		ev.inst[id] = st
	}
	st.gen = gen
	return st
}

// NewDetector returns a detector whose first Observe is the baseline.
func NewDetector(cfg Config) *Detector {
	return &Detector{
		cfg: cfg, first: true,
		atStart: map[string]bool{}, inst: map[string]*instanceState{}, latest: map[nameKey]int64{},
		out: plog.NewLogs(),
	}
}

// Observe returns the events of one scrape: an OOM kill for each counter
// that went up, then what the runtime's listing shows (see instances).
// The first call is the baseline: what happened before it is no event.
// The result has no record when nothing happened; then it is the
// detector's own buffer, to be dropped, and a result with records is the
// caller's.
func (ev *Detector) Observe(s Scrape) plog.Logs {
	ev.gen++
	if ev.first {
		ev.start = s.Now
	}
	for i := range s.Counters {
		ev.counter(s.Now, &s.Counters[i])
	}
	ev.instances(s)
	ev.first = false
	ld := ev.out
	if ld.LogRecordCount() > 0 {
		ev.out = plog.NewLogs()
	}
	return ld
}

// counter turns an increase of one container's OOM kill counter into a
// record.
func (ev *Detector) counter(now time.Time, c *Counter) {
	id := c.Cgroup.ContainerID
	st := ev.instance(id, ev.gen)
	if st.cg == nil {
		st.cg, st.ct = new(cgroupfs.Cgroup), new(identity.Container)
	}
	*st.cg, *st.ct = c.Cgroup, c.Identity
	if !c.OOMKills.OK {
		return // no counter (a kernel before 4.13): absent, not zero
	}
	cur := c.OOMKills.V
	var kills uint64
	switch {
	case !st.oomHas && (ev.first || ev.atStart[id]):
		// Baseline: kills before the receiver started are not events.
	case !st.oomHas:
		kills = cur // a container new since start: every kill is new
	case cur >= st.oomLast:
		kills = cur - st.oomLast
	default:
		// The counter went down: the cgroup was made again under the same
		// ID (docker restart); it counts from 0 since.
		kills = cur
	}
	st.oomLast, st.oomHas = cur, true
	if kills == 0 {
		return
	}
	st.oomReported += kills
	lr := ev.appendEvent(now, st.cg, st.ct, EventOOMKill, plog.SeverityNumberWarn)
	lr.Body().SetStr(fmt.Sprintf("%s: %d OOM kill(s)", describe(st.ct), kills))
	lr.Attributes().PutStr(AttrRecordUID, RecordUID(EventOOMKill, st.ct, OOMSourceCgroup, strconv.FormatUint(cur, 10)))
	lr.Attributes().PutInt(AttrOOMKillCount, calc.ClampInt64(kills))
	lr.Attributes().PutStr(AttrOOMKillSource, OOMSourceCgroup)
}

// instances compares the runtime's listing with what the detection
// knows: a new instance of a known pod/container name is a restart, an
// instance listed as exited with reason OOMKilled whose counter increase
// was not reported is an OOM kill. Then it forgets instances neither the
// tree nor the listing shows (those below a directory discovery could not
// list are kept).
func (ev *Detector) instances(s Scrape) {
	now, tree := s.Now, s.Tree
	podQoS := make(map[string]string, len(tree.Pods))
	for _, p := range tree.Pods {
		podQoS[p.PodUID] = p.QoS
	}
	inTree := make(map[string]*cgroupfs.Cgroup, len(tree.Containers))
	for i := range tree.Containers {
		c := &tree.Containers[i]
		inTree[c.ContainerID] = c
		if ev.first {
			ev.atStart[c.ContainerID] = true
		}
		if st, ok := ev.inst[c.ContainerID]; ok {
			st.gen = ev.gen
		}
	}
	for id := range ev.atStart {
		if inTree[id] == nil {
			delete(ev.atStart, id)
		}
	}
	if s.Listed {
		list := s.Instances
		// Restart counts first, then the records: a new instance's
		// predecessor is found whatever the listing's order.
		byName := map[nameKey][]*identity.Container{}
		for i := range list {
			ct := &list[i]
			if ct.PodUID != "" && ct.ContainerName != "" && ct.HasRestart {
				k := nameKey{ct.PodUID, ct.ContainerName}
				byName[k] = append(byName[k], ct)
			}
		}
		for i := range list {
			ev.instance1(now, &list[i], byName, inTree, podQoS)
		}
		for k := range ev.latest {
			if byName[k] == nil {
				delete(ev.latest, k)
			}
		}
		for k, cts := range byName {
			for _, ct := range cts {
				if ct.RestartCount > ev.latest[k] {
					ev.latest[k] = ct.RestartCount
				}
			}
		}
	}
	for id, st := range ev.inst {
		if st.gen == ev.gen {
			continue
		}
		if st.cg != nil && tree.UnlistedAbove(st.cg.Path) >= 0 {
			continue
		}
		delete(ev.inst, id)
	}
}

// instance1 handles one listed container.
func (ev *Detector) instance1(now time.Time, ct *identity.Container, byName map[nameKey][]*identity.Container,
	inTree map[string]*cgroupfs.Cgroup, podQoS map[string]string,
) {
	if ct.Sandbox || !ev.cfg.Filter.AllowContainer(ct.Namespace, ct.PodName, ct.ContainerName) {
		return
	}
	st := ev.instance(ct.ID, ev.gen)
	isNew := !st.listd
	st.listd = true
	cg := st.cg
	if c := inTree[ct.ID]; c != nil {
		cg = c
	}
	if cg == nil {
		cg = &cgroupfs.Cgroup{ContainerID: ct.ID, PodUID: ct.PodUID, QoS: podQoS[ct.PodUID]}
	}
	// The instance's resource: the identity the scrape saw (it has the
	// image of a running container), else the listing's.
	rct := ct
	if st.ct != nil {
		rct = st.ct
	}
	if isNew && !ev.first && ct.HasRestart && ct.RestartCount > 0 && ct.PodUID != "" && ct.ContainerName != "" {
		k := nameKey{ct.PodUID, ct.ContainerName}
		prev, known := ev.latest[k]
		if known && ct.RestartCount > prev || !known && ct.StartTime.After(ev.start) {
			ev.restartEvent(now, cg, rct, predecessor(byName[k], ct.RestartCount))
		}
	}
	if !ct.Exited || st.exitDone {
		return
	}
	switch {
	case ev.first:
		st.exitDone = true // exited before the receiver started
		return
	case !ct.ExitStatus:
		if st.exitSeen.IsZero() {
			st.exitSeen = now
		}
		if now.Sub(st.exitSeen) >= exitWait {
			st.exitDone = true
		}
		return
	}
	st.exitDone = true
	if isNew && !ct.FinishedAt.After(ev.start) {
		return // first listed already exited: only an exit after start is an event
	}
	if ct.Reason != ReasonOOMKilled || st.oomReported > 0 {
		return
	}
	// The counter's increase was never read (the cgroup was removed
	// before a scrape saw it): the runtime's reason is the event.
	res := *rct
	res.ExitStatus, res.ExitCode, res.Reason, res.FinishedAt = ct.ExitStatus, ct.ExitCode, ct.Reason, ct.FinishedAt
	if res.ImageName == "" {
		res.ImageName, res.ImageTag = ct.ImageName, ct.ImageTag
	}
	lr := ev.appendEvent(now, cg, &res, EventOOMKill, plog.SeverityNumberWarn)
	lr.Body().SetStr(fmt.Sprintf("%s: OOM killed (exit code %d)", describe(&res), ct.ExitCode))
	lr.Attributes().PutStr(AttrRecordUID, RecordUID(EventOOMKill, &res, OOMSourceRuntime))
	lr.Attributes().PutInt(AttrOOMKillCount, 1)
	lr.Attributes().PutStr(AttrOOMKillSource, OOMSourceRuntime)
	lr.Attributes().PutStr(AttrLastTerminatedReason, ct.Reason)
	lr.Attributes().PutInt(AttrLastTerminatedExitCode, int64(ct.ExitCode))
}

// predecessor is the listed instance with the highest restart count below
// restart (the runtime keeps the last exited one); nil when none is listed.
func predecessor(cts []*identity.Container, restart int64) *identity.Container {
	var p *identity.Container
	for _, ct := range cts {
		if ct.RestartCount < restart && (p == nil || ct.RestartCount > p.RestartCount) {
			p = ct
		}
	}
	return p
}

// restartEvent records the start of instance ct (the identity the scrape
// saw when it did, the listing's otherwise); prev is its predecessor
// when listed. Severity: INFO after an exit with code 0, WARN otherwise
// (an exit code not known included).
func (ev *Detector) restartEvent(now time.Time, cg *cgroupfs.Cgroup, ct, prev *identity.Container) {
	sev := plog.SeverityNumberWarn
	if prev != nil && prev.ExitStatus && prev.ExitCode == 0 {
		sev = plog.SeverityNumberInfo
	}
	lr := ev.appendEvent(now, cg, ct, EventRestart, sev)
	lr.Attributes().PutStr(AttrRecordUID, RecordUID(EventRestart, ct, strconv.FormatInt(ct.RestartCount, 10)))
	msg := fmt.Sprintf("%s: restarted (restart count %d)", describe(ct), ct.RestartCount)
	if prev != nil && prev.ExitStatus {
		lr.Attributes().PutInt(AttrLastTerminatedExitCode, int64(prev.ExitCode))
		if prev.Reason != "" {
			lr.Attributes().PutStr(AttrLastTerminatedReason, prev.Reason)
			msg += fmt.Sprintf(", previous instance: %s, exit code %d", prev.Reason, prev.ExitCode)
		} else {
			msg += fmt.Sprintf(", previous instance: exit code %d", prev.ExitCode)
		}
	}
	lr.Body().SetStr(msg)
}

// appendEvent appends a record named name with the container's resource
// (resource.Container, as on its metrics and logs) to the scrape's events:
// time and observed time are the scrape's.
func (ev *Detector) appendEvent(now time.Time, cg *cgroupfs.Cgroup, ct *identity.Container, name string, sev plog.SeverityNumber) plog.LogRecord {
	rl := ev.out.ResourceLogs().AppendEmpty()
	var labels map[string]string
	if ev.cfg.PodLabels != nil {
		labels = ev.cfg.PodLabels(cg, ct)
	}
	resource.Container(metadata.NewResourceBuilder(ev.cfg.ResourceAttributes), ev.cfg.NodeName, cg, ct, labels).MoveTo(rl.Resource())
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(metadata.ScopeName)
	sl.Scope().SetVersion(ev.cfg.ScopeVersion)
	lr := sl.LogRecords().AppendEmpty()
	ts := pcommon.NewTimestampFromTime(now)
	lr.SetTimestamp(ts)
	lr.SetObservedTimestamp(ts)
	lr.SetEventName(name)
	lr.SetSeverityNumber(sev)
	lr.SetSeverityText(severityText[sev])
	return lr
}

// RecordUID is an event's log.record.uid: the name-based UUID (version 5,
// RFC 9562) of what makes the event one: its name, the container instance
// (its ID, and its start time when the runtime gives one: docker restart
// keeps the ID) and what happened to it (what: the source and the kill
// counter's value for an OOM kill, the restart count for a restart). So
// the same event gets the same UID in every copy of its record (an export
// sent again after the gateway took it: docs/logs.md, "Delivery"), and
// two events do not share one. The corner: a cgroup made again under the
// same ID whose runtime gives no start time can repeat a counter value.
func RecordUID(name string, ct *identity.Container, what ...string) string {
	parts := append([]string{"containerstats", name, ct.ID}, what...)
	if !ct.StartTime.IsZero() {
		parts = append(parts, "start="+strconv.FormatInt(ct.StartTime.UnixNano(), 10))
	}
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte(strings.Join(parts, "\x00"))).String()
}

var severityText = map[plog.SeverityNumber]string{plog.SeverityNumberInfo: "INFO", plog.SeverityNumberWarn: "WARN"}

// describe names a container for a record's body.
func describe(ct *identity.Container) string {
	switch {
	case ct.ContainerName != "" && ct.PodName != "":
		return fmt.Sprintf("container %s of pod %s/%s", ct.ContainerName, ct.Namespace, ct.PodName)
	case ct.ContainerName != "":
		return "container " + ct.ContainerName
	default:
		return "container " + ct.ID
	}
}

// Instance is what the detection knows of one container instance.
type Instance struct {
	// Counter: its OOM kill counter has been read (a kernel without the
	// counter never sets it).
	Counter bool
	// ExitDone: its exit has been handled (or given up on).
	ExitDone bool
}

// Instance returns what the detection knows of container id; ok is false
// when it knows nothing of it (never seen, or forgotten).
func (ev *Detector) Instance(id string) (Instance, bool) {
	st, ok := ev.inst[id]
	if !ok {
		return Instance{}, false
	}
	return Instance{Counter: st.oomHas, ExitDone: st.exitDone}, true
}

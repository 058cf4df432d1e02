// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/filter"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/containerevents"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
)

// eventSink is an in-memory EventSink.
type eventSink struct {
	active bool
	got    []plog.Logs
}

func (s *eventSink) Active() bool         { return s.active }
func (s *eventSink) Publish(ld plog.Logs) { s.got = append(s.got, ld) }

// event is one published record with its resource.
type event struct {
	res pcommon.Map
	lr  plog.LogRecord
}

// withoutUID is the record's attributes but its log.record.uid, which
// must be a name-based UUID (TestRecordUID checks the values).
func withoutUID(tb testing.TB, lr plog.LogRecord) map[string]any {
	tb.Helper()
	m := lr.Attributes().AsRaw()
	v, ok := m[containerevents.AttrRecordUID].(string)
	if assert.True(tb, ok, "%s: no %s: %v", lr.EventName(), containerevents.AttrRecordUID, m) {
		u, err := uuid.Parse(v)
		assert.NoError(tb, err, v)
		assert.Equal(tb, uuid.Version(5), u.Version(), v)
	}
	delete(m, containerevents.AttrRecordUID)
	return m
}

// drain returns the records published since the last drain.
func (s *eventSink) drain() []event {
	var out []event
	for _, ld := range s.got {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			for j := 0; j < rl.ScopeLogs().Len(); j++ {
				sl := rl.ScopeLogs().At(j)
				for k := 0; k < sl.LogRecords().Len(); k++ {
					out = append(out, event{res: rl.Resource().Attributes(), lr: sl.LogRecords().At(k)})
				}
			}
		}
	}
	s.got = nil
	return out
}

// listingIdentity is fakeIdentity with a runtime listing (Identity.Instances).
type listingIdentity struct {
	*fakeIdentity
	list []identity.Container
}

func (l *listingIdentity) Instances() []identity.Container {
	return append([]identity.Container(nil), l.list...)
}

// Paths of the OOM kill counters of a1 and b2 in the two fixtures.
var oomFiles = map[string]struct {
	dir          string // the pod's cgroup directory
	a1, b2, file string
	format       string // the file's content with %d for the counter
}{
	"v1-cgroupfs": {
		dir: v1Pod1Dir, a1: v1Ctr1, b2: v2Ctr2, file: "memory.oom_control",
		format: "oom_kill_disable 0\nunder_oom 0\noom_kill %d\n",
	},
	"v2-systemd": {
		dir: "sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b3c4d_0000_4000_8000_00000000000a.slice",
		a1:  "cri-containerd-" + v2Ctr1 + ".scope", b2: "cri-containerd-" + v2Ctr2 + ".scope", file: "memory.events",
		format: "low 0\nhigh 0\nmax 21\noom 3\noom_kill %d\noom_group_kill 0\n",
	},
}

func setOOM(t *testing.T, root, layout, ctr string, kills int) {
	t.Helper()
	f := oomFiles[layout]
	require.NoError(t, os.WriteFile(filepath.Join(root, f.dir, ctr, f.file), []byte(fmt.Sprintf(f.format, kills)), 0o600))
}

// eventScraper starts a scraper with events on (sink active) and the full
// identity; mod may change the options further.
func eventScraper(t *testing.T, root string, clk *fakeClock, sink *eventSink, ident Identity, mod func(*Options)) *Scraper {
	return startScraper(t, root, false, clk, func(o *Options) {
		o.Identity, o.Events = ident, sink
		if mod != nil {
			mod(o)
		}
	})
}

// scrapeAt scrapes at time at and requires no error.
func scrapeAt(t *testing.T, s *Scraper, clk *fakeClock, at time.Time) pmetric.Metrics {
	t.Helper()
	clk.now = at
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	return m
}

// OOM kills from the cgroup counter, v1 and v2, with the metric on (the
// memory family's read is reused) and off (the events read it themselves):
// the first scrape is the baseline; an increase is one record with the
// count; an unchanged counter none; a counter that went down (the cgroup
// made again under the same ID) counts from 0; a vanished container none.
func TestOOMKillEventsFromCounter(t *testing.T) {
	for layout := range oomFiles {
		for _, mode := range []string{"metric-on", "metric-off"} {
			t.Run(layout+"/"+mode, func(t *testing.T) {
				root := copyFixture(t, layout)
				clk := &fakeClock{now: t0}
				sink := &eventSink{active: true}
				s := eventScraper(t, root, clk, sink, fullIdentity(), func(o *Options) {
					if mode == "metric-off" {
						o.MetricsBuilderConfig.Metrics.ContainerMemoryOomKills.Enabled = false
					}
				})
				f := oomFiles[layout]
				scrapeAt(t, s, clk, t0)
				assert.Empty(t, sink.drain(), "the first scrape is the baseline: a1 and b2 had kills before")

				setOOM(t, root, layout, f.a1, 13) // v1 5 -> 13, v2 2 -> 13
				m := scrapeAt(t, s, clk, t0.Add(10*time.Second))
				got := sink.drain()
				require.Len(t, got, 1)
				e := got[0]
				assert.Equal(t, containerevents.EventOOMKill, e.lr.EventName())
				assert.Equal(t, plog.SeverityNumberWarn, e.lr.SeverityNumber())
				assert.Equal(t, "WARN", e.lr.SeverityText())
				ts := pcommon.NewTimestampFromTime(t0.Add(10 * time.Second))
				assert.Equal(t, ts, e.lr.Timestamp())
				assert.Equal(t, ts, e.lr.ObservedTimestamp())
				wantKills := map[string]int64{"v1-cgroupfs": 13 - 5, "v2-systemd": 13 - 2}[layout]
				assert.Equal(t, map[string]any{containerevents.AttrOOMKillCount: wantKills, containerevents.AttrOOMKillSource: containerevents.OOMSourceCgroup}, withoutUID(t, e.lr))
				assert.Equal(t, fmt.Sprintf("container nginx of pod shop/web-0: %d OOM kill(s)", wantKills), e.lr.Body().Str())
				res := e.res.AsRaw()
				assert.Equal(t, v2Ctr1, res["container.id"])
				assert.Equal(t, "nginx", res["k8s.container.name"])
				assert.Equal(t, "web-0", res["k8s.pod.name"])
				assert.Equal(t, "shop", res["k8s.namespace.name"])
				assert.Equal(t, uidBu, res["k8s.pod.uid"])
				assert.Equal(t, "burstable", res["k8s.pod.qos_class"])
				assert.Equal(t, "node-1", res["k8s.node.name"])
				// The very resource of the container's metrics.
				mr := findContainer(m, v2Ctr1)
				require.NotNil(t, mr)
				assert.Equal(t, mr.AsRaw(), res)

				scrapeAt(t, s, clk, t0.Add(20*time.Second))
				assert.Empty(t, sink.drain(), "unchanged")

				setOOM(t, root, layout, f.a1, 2) // made again: counts from 0
				scrapeAt(t, s, clk, t0.Add(30*time.Second))
				got = sink.drain()
				require.Len(t, got, 1)
				assert.Equal(t, int64(2), got[0].lr.Attributes().AsRaw()[containerevents.AttrOOMKillCount])

				setOOM(t, root, layout, f.a1, 0) // made again, no kill yet
				scrapeAt(t, s, clk, t0.Add(40*time.Second))
				assert.Empty(t, sink.drain())

				if layout == "v2-systemd" {
					require.NoError(t, os.RemoveAll(filepath.Join(root, f.dir, f.b2)))
					scrapeAt(t, s, clk, t0.Add(50*time.Second))
					assert.Empty(t, sink.drain(), "vanished before it was read: no runtime says more")
				}
			})
		}
	}
}

// A container first seen after the first scrape: every kill its counter
// shows is new (it counted from 0 when its cgroup was made).
func TestOOMKillEventsNewContainer(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	clk := &fakeClock{now: t0}
	sink := &eventSink{active: true}
	s := eventScraper(t, root, clk, sink, fullIdentity(), nil)
	scrapeAt(t, s, clk, t0)
	f := oomFiles["v2-systemd"]
	idE5 := strings.Repeat("e5", 32)
	require.NoError(t, os.CopyFS(filepath.Join(root, f.dir, "cri-containerd-"+idE5+".scope"), os.DirFS(filepath.Join(root, f.dir, f.a1))))
	setOOM(t, root, "v2-systemd", "cri-containerd-"+idE5+".scope", 4)
	scrapeAt(t, s, clk, t0.Add(10*time.Second))
	got := sink.drain()
	require.Len(t, got, 1)
	assert.Equal(t, idE5, got[0].res.AsRaw()["container.id"])
	assert.Equal(t, int64(4), got[0].lr.Attributes().AsRaw()[containerevents.AttrOOMKillCount])
}

// v1's c3 has no oom_kill line (a kernel before 4.13): absent, never an
// event, whatever else changes.
func TestOOMKillEventsAbsentCounter(t *testing.T) {
	root := copyFixture(t, "v1-cgroupfs")
	clk := &fakeClock{now: t0}
	sink := &eventSink{active: true}
	s := eventScraper(t, root, clk, sink, fullIdentity(), nil)
	scrapeAt(t, s, clk, t0)
	scrapeAt(t, s, clk, t0.Add(10*time.Second))
	assert.Empty(t, sink.drain())
	st, ok := s.env.events.Instance(idC3)
	require.True(t, ok)
	assert.False(t, st.Counter)
}

// Not active (no logs pipeline), nothing is detected or kept.
func TestEventsOffWhenSinkInactive(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	clk := &fakeClock{now: t0}
	sink := &eventSink{}
	s := eventScraper(t, root, clk, sink, fullIdentity(), nil)
	scrapeAt(t, s, clk, t0)
	setOOM(t, root, "v2-systemd", oomFiles["v2-systemd"].a1, 50)
	scrapeAt(t, s, clk, t0.Add(10*time.Second))
	assert.Empty(t, sink.got)
	assert.Nil(t, s.env.events)
}

// A malformed counter costs that container's events only, as a partial
// error naming the container and the file; no panic, the other
// containers' events go on.
func TestOOMKillEventsMalformed(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	clk := &fakeClock{now: t0}
	sink := &eventSink{active: true}
	// The events' own read of the counter (the metric off): its error is
	// the events'.
	s := eventScraper(t, root, clk, sink, fullIdentity(), func(o *Options) {
		o.MetricsBuilderConfig.Metrics.ContainerMemoryOomKills.Enabled = false
	})
	scrapeAt(t, s, clk, t0)
	f := oomFiles["v2-systemd"]
	require.NoError(t, os.WriteFile(filepath.Join(root, f.dir, f.a1, "memory.events"), []byte("oom_kill x\n"), 0o600))
	setOOM(t, root, "v2-systemd", f.b2, 9) // 7 -> 9
	clk.now = t0.Add(10 * time.Second)
	_, err := s.Scrape(context.Background())
	require.Error(t, err)
	assert.True(t, scrapererror.IsPartialScrapeError(err))
	assert.Contains(t, err.Error(), "container "+v2Ctr1)
	assert.Contains(t, err.Error(), "memory.events")
	got := sink.drain()
	require.Len(t, got, 1)
	assert.Equal(t, v2Ctr2, got[0].res.AsRaw()["container.id"])
	assert.Equal(t, int64(2), got[0].lr.Attributes().AsRaw()[containerevents.AttrOOMKillCount])
}

// The runtime's listing: a new instance of a pod's container is one
// restart record with the previous instance's exit; an instance that ended
// "OOMKilled" whose counter increase no scrape saw is one OOM kill record
// from the runtime; what was exited at start is the baseline; an exit
// without its status yet waits for it.
func TestRestartAndRuntimeOOMEvents(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	clk := &fakeClock{now: t0}
	sink := &eventSink{active: true}
	fi := fullIdentity()
	idOld := strings.Repeat("0d", 32) // nginx's instance 2, exited before start
	idNew := strings.Repeat("e5", 32) // nginx's instance 4
	old := identity.Container{
		ID: idOld, Name: "nginx-old", ContainerName: "nginx", PodUID: uidBu, PodName: "web-0", Namespace: "shop",
		RestartCount: 2, HasRestart: true, StartTime: tStart, Exited: true, ExitStatus: true, ExitCode: 1, Reason: "Error",
		FinishedAt: tStart.Add(time.Second), Source: identity.SourceCRI,
	}
	li := &listingIdentity{fakeIdentity: fi, list: []identity.Container{fi.containers[idA1], fi.containers[idB2], fi.containers[idC3], old}}
	s := eventScraper(t, root, clk, sink, li, nil)
	scrapeAt(t, s, clk, t0)
	assert.Empty(t, sink.drain(), "baseline: the exited instance ended before start")

	// a1 (nginx, restart 3) is OOM-killed; its cgroup is gone before a
	// scrape reads the counter; the kubelet starts instance 4. The
	// runtime has not read a1's exit status yet.
	f := oomFiles["v2-systemd"]
	require.NoError(t, os.RemoveAll(filepath.Join(root, f.dir, f.a1)))
	a1 := fi.containers[idA1]
	a1.Exited = true
	a1.ImageName, a1.ImageTag = "", "" // the listing of an exited container has no image
	newer := identity.Container{
		ID: idNew, Name: "nginx-e", ContainerName: "nginx", ImageName: "docker.io/library/nginx", ImageTag: "1.27.2",
		Runtime: "containerd", PodUID: uidBu, PodName: "web-0", Namespace: "shop", RestartCount: 4, HasRestart: true,
		StartTime: t0.Add(7 * time.Second), Source: identity.SourceCRI,
	}
	fi.containers[idNew] = newer
	li.list = []identity.Container{a1, fi.containers[idB2], fi.containers[idC3], newer}
	require.NoError(t, os.CopyFS(filepath.Join(root, f.dir, "cri-containerd-"+idNew+".scope"), os.DirFS(filepath.Join(root, f.dir, f.b2))))
	setOOM(t, root, "v2-systemd", "cri-containerd-"+idNew+".scope", 0) // a new cgroup: no kill yet
	scrapeAt(t, s, clk, t0.Add(10*time.Second))
	got := sink.drain()
	require.Len(t, got, 1, "the restart; the OOM kill waits for a1's exit status")
	r := got[0]
	assert.Equal(t, containerevents.EventRestart, r.lr.EventName())
	assert.Equal(t, plog.SeverityNumberWarn, r.lr.SeverityNumber())
	assert.Equal(t, idNew, r.res.AsRaw()["container.id"])
	assert.Equal(t, int64(4), r.res.AsRaw()["k8s.container.restart_count"])
	assert.Equal(t, "burstable", r.res.AsRaw()["k8s.pod.qos_class"])
	assert.Empty(t, withoutUID(t, r.lr), "a1's exit status is not known yet")
	assert.Equal(t, "container nginx of pod shop/web-0: restarted (restart count 4)", r.lr.Body().Str())

	// The exit status arrives: one OOM kill from the runtime, with the
	// identity (and image) the scrape saw.
	a1.ExitStatus, a1.ExitCode, a1.Reason, a1.FinishedAt = true, 137, containerevents.ReasonOOMKilled, t0.Add(5*time.Second)
	li.list[0] = a1
	scrapeAt(t, s, clk, t0.Add(20*time.Second))
	got = sink.drain()
	require.Len(t, got, 1)
	o := got[0]
	assert.Equal(t, containerevents.EventOOMKill, o.lr.EventName())
	assert.Equal(t, map[string]any{
		containerevents.AttrOOMKillCount: int64(1), containerevents.AttrOOMKillSource: containerevents.OOMSourceRuntime,
		containerevents.AttrLastTerminatedReason: containerevents.ReasonOOMKilled, containerevents.AttrLastTerminatedExitCode: int64(137),
	}, withoutUID(t, o.lr))
	res := o.res.AsRaw()
	assert.Equal(t, idA1, res["container.id"])
	assert.Equal(t, "docker.io/library/nginx", res["container.image.name"])
	assert.Equal(t, int64(3), res["k8s.container.restart_count"])
	assert.Equal(t, pcommon.NewTimestampFromTime(t0.Add(20*time.Second)), o.lr.Timestamp())

	scrapeAt(t, s, clk, t0.Add(30*time.Second))
	assert.Empty(t, sink.drain(), "each event once")

	// Instance 5 after instance 4 exited with 0: INFO, with its exit.
	newer.Exited, newer.ExitStatus, newer.ExitCode, newer.Reason = true, true, 0, "Completed"
	idFive := strings.Repeat("f6", 32)
	five := newer
	five.ID, five.RestartCount, five.Exited, five.ExitStatus, five.Reason = idFive, 5, false, false, ""
	li.list = []identity.Container{fi.containers[idB2], newer, five}
	scrapeAt(t, s, clk, t0.Add(40*time.Second))
	got = sink.drain()
	require.Len(t, got, 1)
	assert.Equal(t, containerevents.EventRestart, got[0].lr.EventName())
	assert.Equal(t, plog.SeverityNumberInfo, got[0].lr.SeverityNumber())
	assert.Equal(t, map[string]any{containerevents.AttrLastTerminatedReason: "Completed", containerevents.AttrLastTerminatedExitCode: int64(0)}, withoutUID(t, got[0].lr))
	assert.Equal(t, idFive, got[0].res.AsRaw()["container.id"])
}

// An OOM kill the counter showed is not reported again when the runtime
// then says the instance ended "OOMKilled".
func TestOOMKillNotDoubled(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	clk := &fakeClock{now: t0}
	sink := &eventSink{active: true}
	fi := fullIdentity()
	li := &listingIdentity{fakeIdentity: fi, list: []identity.Container{fi.containers[idA1], fi.containers[idB2]}}
	s := eventScraper(t, root, clk, sink, li, nil)
	scrapeAt(t, s, clk, t0)
	f := oomFiles["v2-systemd"]
	setOOM(t, root, "v2-systemd", f.a1, 3)
	scrapeAt(t, s, clk, t0.Add(10*time.Second))
	got := sink.drain()
	require.Len(t, got, 1)
	assert.Equal(t, containerevents.OOMSourceCgroup, got[0].lr.Attributes().AsRaw()[containerevents.AttrOOMKillSource])

	require.NoError(t, os.RemoveAll(filepath.Join(root, f.dir, f.a1)))
	a1 := fi.containers[idA1]
	a1.Exited, a1.ExitStatus, a1.ExitCode, a1.Reason, a1.FinishedAt = true, true, 137, containerevents.ReasonOOMKilled, t0.Add(12*time.Second)
	li.list[0] = a1
	scrapeAt(t, s, clk, t0.Add(20*time.Second))
	assert.Empty(t, sink.drain())
}

// Exited containers listed for the first time after start count only when
// they finished after start; an exit status that never comes is given up.
func TestRuntimeOOMBaselineAndGiveUp(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	clk := &fakeClock{now: t0}
	sink := &eventSink{active: true}
	fi := fullIdentity()
	li := &listingIdentity{fakeIdentity: fi} // the runtime answers late
	s := eventScraper(t, root, clk, sink, li, nil)
	scrapeAt(t, s, clk, t0)
	mk := func(id string, restart int64, finished time.Time, status bool) identity.Container {
		return identity.Container{
			ID: id, ContainerName: "job", PodUID: uidBe, PodName: "cron-9", Namespace: "ops",
			RestartCount: restart, HasRestart: true, StartTime: finished.Add(-time.Minute), Exited: true, ExitStatus: status,
			ExitCode: 137, Reason: containerevents.ReasonOOMKilled, FinishedAt: finished,
		}
	}
	before := mk(strings.Repeat("71", 32), 0, t0.Add(-time.Hour), true)
	after := mk(strings.Repeat("72", 32), 1, t0.Add(3*time.Second), true)
	after.StartTime = t0.Add(time.Second) // made after start
	pending := mk(strings.Repeat("73", 32), 0, t0.Add(4*time.Second), false)
	pending.PodUID, pending.ContainerName = uidGu, "db"
	li.list = []identity.Container{before, after, pending}
	scrapeAt(t, s, clk, t0.Add(10*time.Second))
	got := sink.drain()
	var names []string
	for _, e := range got {
		names = append(names, e.lr.EventName()+" "+e.res.AsRaw()["container.id"].(string)[:2])
	}
	// after: a new instance started after start (restart) that ended
	// OOMKilled after start (OOM kill).
	assert.ElementsMatch(t, []string{containerevents.EventRestart + " 72", containerevents.EventOOMKill + " 72"}, names)
	for i := 1; i <= 12; i++ {
		scrapeAt(t, s, clk, t0.Add(10*time.Second+time.Duration(i)*10*time.Second))
	}
	assert.Empty(t, sink.drain(), "73's exit status never came: given up after exitWait")
	st, _ := s.env.events.Instance(pending.ID)
	assert.True(t, st.ExitDone)
}

// Filtered containers give no events.
func TestEventsFiltered(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	clk := &fakeClock{now: t0}
	sink := &eventSink{active: true}
	r, err := identity.CompileRules(nil, []filter.Config{{Strict: "nginx"}})
	require.NoError(t, err)
	s := eventScraper(t, root, clk, sink, fullIdentity(), func(o *Options) { o.Filter.Containers = r })
	scrapeAt(t, s, clk, t0)
	setOOM(t, root, "v2-systemd", oomFiles["v2-systemd"].a1, 40)
	scrapeAt(t, s, clk, t0.Add(10*time.Second))
	assert.Empty(t, sink.drain())
}

// TestEventsGoldenLayouts: on every layout, with the layout's identity
// (identityFor), every container's OOM kill counter (v1
// memory.oom_control, v2 memory.events) goes up by a distinct amount
// between two scrapes: one k8s.container.oom_kill record per container
// (the v1-cgroupfs sandbox d4 excluded) with its metrics' resource,
// matching testdata/golden/logs/events-<layout>.yaml.
func TestEventsGoldenLayouts(t *testing.T) {
	for _, lt := range layouts {
		t.Run(lt.name, func(t *testing.T) {
			root := copyFixture(t, lt.name)
			l, cts, _ := layoutContainers(t, root, lt.standalone)
			setKills := func(i int, c cgroupfs.Cgroup, kills int) bool {
				dir := l.Dir(cgroupfs.CtrlMemory, c.Path)
				if _, err := os.Stat(dir); err != nil {
					return false
				}
				file, body := "memory.events", fmt.Sprintf("low 0\nhigh %d\nmax 21\noom 3\noom_kill %d\noom_group_kill 0\n", i, kills)
				if l.StatsV1() {
					file, body = "memory.oom_control", fmt.Sprintf("oom_kill_disable 0\nunder_oom 0\noom_kill %d\n", kills)
				}
				require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte(body), 0o600))
				return true
			}
			for i, c := range cts {
				setKills(i, c, 1+i)
			}
			clk := &fakeClock{now: t0}
			sink := &eventSink{active: true}
			fi := identityFor(t, lt.name, root, lt.standalone)
			s := startScraper(t, root, lt.standalone, clk, func(o *Options) { o.Identity, o.Events = fi, sink })
			scrapeAt(t, s, clk, t0)
			require.Empty(t, sink.drain(), "the first scrape is the baseline")

			want := map[string]int64{}
			for i, c := range cts {
				if setKills(i, c, 1+i+2+3*i) && !fi.IsSandbox(c.ContainerID) {
					want[c.ContainerID] = int64(2 + 3*i)
				}
			}
			require.NotEmpty(t, want)
			m := scrapeAt(t, s, clk, t0.Add(10*time.Second))
			got := plog.NewLogs()
			for _, ld := range sink.got {
				ld.ResourceLogs().MoveAndAppendTo(got.ResourceLogs())
			}
			evs := 0
			for i := 0; i < got.ResourceLogs().Len(); i++ {
				rl := got.ResourceLogs().At(i)
				id, _ := rl.Resource().Attributes().Get("container.id")
				lr := rl.ScopeLogs().At(0).LogRecords().At(0)
				assert.Equal(t, containerevents.EventOOMKill, lr.EventName())
				assert.Equal(t, want[id.Str()], lr.Attributes().AsRaw()[containerevents.AttrOOMKillCount], id.Str())
				if mr := findContainer(m, id.Str()); assert.NotNil(t, mr, id.Str()) {
					assert.Equal(t, mr.AsRaw(), rl.Resource().Attributes().AsRaw(), "the container's metrics resource")
				}
				evs += rl.ScopeLogs().At(0).LogRecords().Len()
			}
			assert.Equal(t, len(want), evs, "one record per container")
			path := filepath.Join("..", "..", "testdata", "golden", "logs", "events-"+lt.name+".yaml")
			if os.Getenv("UPDATE_GOLDEN") != "" {
				require.NoError(t, golden.WriteLogsToFile(path, got))
			}
			exp, err := golden.ReadLogs(path)
			require.NoError(t, err)
			require.NoError(t, plogtest.CompareLogs(exp, got, plogtest.IgnoreResourceLogsOrder()))
		})
	}
}

// TestRecordUID: log.record.uid names the event, not its observation. The
// same kill seen by two scrapers at different times has one UID (so a
// backend drops a copy that an at-least-once export sent again, and a
// second detection of one event would show as the same UID with another
// timestamp); every other event gets another UID.
func TestRecordUID(t *testing.T) {
	uidOf := func(at time.Duration) string {
		root := copyFixture(t, "v2-systemd")
		clk := &fakeClock{now: t0}
		sink := &eventSink{active: true}
		s := eventScraper(t, root, clk, sink, fullIdentity(), nil)
		scrapeAt(t, s, clk, t0)
		setOOM(t, root, "v2-systemd", oomFiles["v2-systemd"].a1, 13)
		scrapeAt(t, s, clk, t0.Add(at))
		got := sink.drain()
		require.Len(t, got, 1)
		return got[0].lr.Attributes().AsRaw()[containerevents.AttrRecordUID].(string)
	}
	a := uidOf(10 * time.Second)
	assert.Equal(t, a, uidOf(25*time.Second), "the same kill, seen later by another scraper")
	// Pinned: a change of the scheme changes every event's identity (and
	// the events goldens).
	assert.Equal(t, "fbdf270a-587f-567a-9204-ab001ba6d3f9", a)

	ct := fullIdentity().containers[idA1] // the fixture's v2Ctr1
	seen := map[string]string{}
	for _, c := range []struct{ what, uid string }{
		{"the kill counted 13", a},
		{"the kill counted 14", containerevents.RecordUID(containerevents.EventOOMKill, &ct, containerevents.OOMSourceCgroup, "14")},
		{"the runtime's OOMKilled", containerevents.RecordUID(containerevents.EventOOMKill, &ct, containerevents.OOMSourceRuntime)},
		{"restart 13", containerevents.RecordUID(containerevents.EventRestart, &ct, "13")},
		{"restart 14", containerevents.RecordUID(containerevents.EventRestart, &ct, "14")},
		{"another container's kill counted 13", containerevents.RecordUID(containerevents.EventOOMKill, &identity.Container{ID: idB2, StartTime: ct.StartTime}, containerevents.OOMSourceCgroup, "13")},
		{"the same ID started again (docker restart)", containerevents.RecordUID(containerevents.EventOOMKill, &identity.Container{ID: idA1, StartTime: ct.StartTime.Add(time.Second)}, containerevents.OOMSourceCgroup, "13")},
		{"no start time known", containerevents.RecordUID(containerevents.EventOOMKill, &identity.Container{ID: idA1}, containerevents.OOMSourceCgroup, "13")},
	} {
		if prev, dup := seen[c.uid]; dup {
			t.Errorf("%s and %s share %s", prev, c.what, c.uid)
		}
		seen[c.uid] = c.what
	}
	assert.Equal(t, a, containerevents.RecordUID(containerevents.EventOOMKill, &ct, containerevents.OOMSourceCgroup, "13"), "the scrape's UID is RecordUID's")
}

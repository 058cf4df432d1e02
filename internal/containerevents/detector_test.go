// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerevents

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// The detector alone, fed observations by hand (the scrape's own tests,
// receiver/scrape/events_test.go, feed it real fixture trees): the first
// observation is the baseline; a counter that went up is one OOM kill
// record with the container's resource; a counter that went down counts
// from 0; an absent counter is never an event; a new instance of a known
// pod/container name is a restart whose previous instance's exit is on
// the record.
func TestDetector(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	cg := cgroupfs.Cgroup{ContainerID: "c1", PodUID: "pod-u7", QoS: "burstable", Runtime: "containerd", Path: "/kubepods/burstable/podpod-u7/c1"}
	ct := identity.Container{
		ID: "c1", PodUID: "pod-u7", PodName: "web-3", Namespace: "shop", ContainerName: "nginx",
		Name: "nginx-ctr", ImageName: "nginx", ImageTag: "1.27", RestartCount: 2, HasRestart: true, StartTime: t0.Add(-time.Hour),
	}
	absent := cgroupfs.Cgroup{ContainerID: "c2", PodUID: "pod-u7", Path: "/kubepods/burstable/podpod-u7/c2"}
	tree := &cgroupfs.Tree{Containers: []cgroupfs.Cgroup{cg, absent}, Pods: []cgroupfs.Cgroup{{PodUID: "pod-u7", QoS: "burstable"}}}
	d := NewDetector(Config{
		NodeName: "node-5", ScopeVersion: "9.8.7", ResourceAttributes: metadata.DefaultResourceAttributesConfig(),
		PodLabels: func(*cgroupfs.Cgroup, *identity.Container) map[string]string {
			return map[string]string{"tier": "front"}
		},
	})
	observe := func(at time.Duration, kills uint64, list ...identity.Container) plog.Logs {
		return d.Observe(Scrape{Now: t0.Add(at), Tree: tree, Listed: list != nil, Instances: list, Counters: []Counter{
			{Cgroup: cg, Identity: ct, OOMKills: cgroupfs.U64{V: kills, OK: true}},
			{Cgroup: absent, Identity: identity.Container{ID: "c2"}},
		}})
	}

	assert.Zero(t, observe(0, 3).LogRecordCount(), "baseline: kills before the first observation")
	assert.Zero(t, observe(10*time.Second, 3).LogRecordCount(), "unchanged")
	ld := observe(20*time.Second, 5)
	require.Equal(t, 1, ld.LogRecordCount())
	rl := ld.ResourceLogs().At(0)
	assert.Equal(t, map[string]any{
		"container.id": "c1", "container.name": "nginx-ctr", "container.image.name": "nginx", "container.image.tags": []any{"1.27"},
		"container.runtime.name": "containerd", "k8s.node.name": "node-5", "k8s.pod.uid": "pod-u7", "k8s.pod.name": "web-3",
		"k8s.namespace.name": "shop", "k8s.container.name": "nginx", "k8s.container.restart_count": int64(2),
		"k8s.pod.qos_class": "burstable", "k8s.pod.label.tier": "front",
	}, rl.Resource().Attributes().AsRaw())
	assert.Equal(t, "9.8.7", rl.ScopeLogs().At(0).Scope().Version())
	lr := rl.ScopeLogs().At(0).LogRecords().At(0)
	assert.Equal(t, EventOOMKill, lr.EventName())
	assert.Equal(t, plog.SeverityNumberWarn, lr.SeverityNumber())
	assert.Equal(t, t0.Add(20*time.Second), lr.Timestamp().AsTime())
	assert.Equal(t, "container nginx of pod shop/web-3: 2 OOM kill(s)", lr.Body().Str())
	assert.Equal(t, map[string]any{
		AttrOOMKillCount: int64(2), AttrOOMKillSource: OOMSourceCgroup,
		AttrRecordUID: RecordUID(EventOOMKill, &ct, OOMSourceCgroup, "5"),
	}, lr.Attributes().AsRaw())

	ld = observe(30*time.Second, 1)
	require.Equal(t, 1, ld.LogRecordCount(), "the counter went down: made again, counts from 0")
	assert.Equal(t, int64(1), ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().AsRaw()[AttrOOMKillCount])
	st, ok := d.Instance("c2")
	require.True(t, ok)
	assert.False(t, st.Counter, "absent counter: never read as one")

	// The runtime lists the instance, then its successor (restart count
	// 3) and the predecessor's exit.
	assert.Zero(t, observe(40*time.Second, 1, ct).LogRecordCount())
	prev := ct
	prev.Exited, prev.ExitStatus, prev.ExitCode, prev.Reason, prev.FinishedAt = true, true, 137, "Error", t0.Add(45*time.Second)
	next := ct
	next.ID, next.RestartCount, next.StartTime = "c9", 3, t0.Add(46*time.Second)
	ld = observe(50*time.Second, 1, prev, next)
	require.Equal(t, 1, ld.LogRecordCount())
	lr = ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	assert.Equal(t, EventRestart, lr.EventName())
	assert.Equal(t, "c9", ld.ResourceLogs().At(0).Resource().Attributes().AsRaw()["container.id"])
	assert.Equal(t, map[string]any{
		AttrLastTerminatedExitCode: int64(137), AttrLastTerminatedReason: "Error",
		AttrRecordUID: RecordUID(EventRestart, &next, "3"),
	}, lr.Attributes().AsRaw())
	assert.Equal(t, "container nginx of pod shop/web-3: restarted (restart count 3), previous instance: Error, exit code 137", lr.Body().Str())
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerstatsreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/containerevents"
	"github.com/containerstats/containerstatsreceiver/internal/lifecycle"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// a1's cgroup in the v2-systemd fixture (oom_kill 2 there).
const (
	eventsA1   = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
	eventsA1CG = "sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b3c4d_0000_4000_8000_00000000000a.slice/cri-containerd-" + eventsA1 + ".scope"
)

// eventsConfig is a factory and a config on a copy of the v2-systemd
// fixture, without runtime or GPU, scraping every 20ms, log files off
// (events on: the default).
func eventsConfig(t *testing.T) (*nodes, receiver.Factory, *Config) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	require.NoError(t, os.CopyFS(root, os.DirFS("testdata/fixtures/v2-systemd")))
	ids := newNodes()
	f := newFactory(ids, nil)
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.RootPath = root
	cfg.NodeName = "node-ev"
	cfg.Runtime.CRIEnabled, cfg.Runtime.ContainerdEnabled = false, false
	cfg.GPU.Enabled = false
	cfg.CollectionInterval = 20 * time.Millisecond
	cfg.InitialDelay = 10 * time.Millisecond
	require.True(t, cfg.Events.Enabled, "on by default")
	require.NoError(t, cfg.Validate())
	return ids, f, cfg
}

func oomKillA1(t *testing.T, root string, kills int) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(root, eventsA1CG, "memory.events"),
		[]byte(fmt.Sprintf("low 0\nhigh 0\nmax 21\noom 3\noom_kill %d\noom_group_kill 0\n", kills)), 0o600))
}

func start(t *testing.T, c component.Component) {
	t.Helper()
	require.NoError(t, c.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, c.Shutdown(context.Background())) })
}

// lastResource is the resource of container id in the newest metrics.
func lastResource(t *testing.T, sink *consumertest.MetricsSink, id string) map[string]any {
	t.Helper()
	all := sink.AllMetrics()
	require.NotEmpty(t, all)
	m := all[len(all)-1]
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		if v, ok := rm.Resource().Attributes().Get("container.id"); ok && v.Str() == id {
			return rm.Resource().Attributes().AsRaw()
		}
	}
	t.Fatalf("no metrics of container %s", id)
	return nil
}

// Metrics and logs pipelines: the metrics scrape detects, the logs
// receiver only drains (no scrape of its own). One OOM kill increment is
// one record on the logs pipeline, with the container's metrics resource,
// and never again.
func TestEventsBothSignals(t *testing.T) {
	_, f, cfg := eventsConfig(t)
	set := receivertest.NewNopSettings(metadata.Type)
	set.BuildInfo.Version = "1.2.3-events"
	ms := new(consumertest.MetricsSink)
	ls := new(consumertest.LogsSink)
	m, err := f.CreateMetrics(context.Background(), set, cfg, ms)
	require.NoError(t, err)
	l, err := f.CreateLogs(context.Background(), set, cfg, ls)
	require.NoError(t, err)
	ev, ok := l.(*lifecycle.ShutdownOnce).Component.(*containerevents.Receiver)
	require.True(t, ok, "logs.enabled false: the events alone")
	start(t, l)
	start(t, m)
	assert.False(t, ev.Scraping(), "the metrics scrape detects: no second reader")
	require.Eventually(t, func() bool { return ms.DataPointCount() > 0 }, 10*time.Second, 5*time.Millisecond)

	oomKillA1(t, cfg.RootPath, 5)
	require.Eventually(t, func() bool { return ls.LogRecordCount() >= 1 }, 10*time.Second, 5*time.Millisecond)
	n := len(ms.AllMetrics())
	require.Eventually(t, func() bool { return len(ms.AllMetrics()) > n+5 }, 10*time.Second, 5*time.Millisecond)
	require.Equal(t, 1, ls.LogRecordCount(), "one increment, one record")

	got := ls.AllLogs()[0]
	rl := got.ResourceLogs().At(0)
	lr := rl.ScopeLogs().At(0).LogRecords().At(0)
	assert.Equal(t, containerevents.EventOOMKill, lr.EventName())
	assert.Equal(t, plog.SeverityNumberWarn, lr.SeverityNumber())
	assert.Equal(t, int64(3), lr.Attributes().AsRaw()[containerevents.AttrOOMKillCount])
	assert.Equal(t, metadata.ScopeName, rl.ScopeLogs().At(0).Scope().Name())
	assert.Equal(t, "1.2.3-events", rl.ScopeLogs().At(0).Scope().Version())
	assert.Equal(t, lastResource(t, ms, eventsA1), rl.Resource().Attributes().AsRaw())
	assert.Equal(t, lr.Timestamp(), lr.ObservedTimestamp())
	requireEventsGolden(t, "events-oom-v2-systemd.yaml", got)
}

// requireEventsGolden compares with a golden file, times left out (the
// factory's clock is the real one); UPDATE_GOLDEN=1 rewrites it.
func requireEventsGolden(t *testing.T, name string, in plog.Logs) {
	t.Helper()
	got := plog.NewLogs()
	in.CopyTo(got)
	for i := 0; i < got.ResourceLogs().Len(); i++ {
		sls := got.ResourceLogs().At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				lrs.At(k).SetTimestamp(0)
				lrs.At(k).SetObservedTimestamp(0)
			}
		}
	}
	path := filepath.Join("testdata/golden/logs", name)
	if os.Getenv("UPDATE_GOLDEN") != "" {
		require.NoError(t, golden.WriteLogsToFile(path, got))
	}
	want, err := golden.ReadLogs(path)
	require.NoError(t, err)
	require.NoError(t, plogtest.CompareLogs(want, got))
}

// Only a logs pipeline: the logs receiver scrapes for the events itself;
// the first scrape is the baseline.
func TestEventsLogsOnly(t *testing.T) {
	_, f, cfg := eventsConfig(t)
	ls := new(consumertest.LogsSink)
	l, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, ls)
	require.NoError(t, err)
	ev := l.(*lifecycle.ShutdownOnce).Component.(*containerevents.Receiver)
	start(t, l)
	require.True(t, ev.Scraping())
	require.Eventually(t, func() bool { return ev.Scrapes() > 0 }, 10*time.Second, 5*time.Millisecond)
	assert.Zero(t, ls.LogRecordCount(), "kills before start are not events")

	oomKillA1(t, cfg.RootPath, 9)
	require.Eventually(t, func() bool { return ls.LogRecordCount() >= 1 }, 10*time.Second, 5*time.Millisecond)
	n := ev.Scrapes()
	require.Eventually(t, func() bool { return ev.Scrapes() > n+5 }, 10*time.Second, 5*time.Millisecond)
	require.Equal(t, 1, ls.LogRecordCount())
	rl := ls.AllLogs()[0].ResourceLogs().At(0)
	assert.Equal(t, containerevents.EventOOMKill, rl.ScopeLogs().At(0).LogRecords().At(0).EventName())
	res := rl.Resource().Attributes().AsRaw()
	assert.Equal(t, eventsA1, res["container.id"])
	assert.Equal(t, "node-ev", res["k8s.node.name"])
	assert.Equal(t, "1a2b3c4d-0000-4000-8000-00000000000a", res["k8s.pod.uid"])
	assert.Equal(t, int64(7), rl.ScopeLogs().At(0).LogRecords().At(0).Attributes().AsRaw()[containerevents.AttrOOMKillCount])
}

// Only a metrics pipeline: no logs receiver takes events, nothing is
// detected or queued.
func TestEventsMetricsOnly(t *testing.T) {
	ids, f, cfg := eventsConfig(t)
	ms := new(consumertest.MetricsSink)
	m, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, ms)
	require.NoError(t, err)
	hub := useNode(ids, cfg, zap.NewNop()).State().Events
	start(t, m)
	require.Eventually(t, func() bool { return ms.DataPointCount() > 0 }, 10*time.Second, 5*time.Millisecond)
	oomKillA1(t, cfg.RootPath, 9)
	n := len(ms.AllMetrics())
	require.Eventually(t, func() bool { return len(ms.AllMetrics()) > n+5 }, 10*time.Second, 5*time.Millisecond)
	assert.False(t, hub.Active())
	assert.Empty(t, hub.Events())
}

// events.enabled false: the logs pipeline gets the log files only; with
// logs.enabled false too, nothing at all.
func TestEventsDisabled(t *testing.T) {
	_, f, cfg := eventsConfig(t)
	cfg.Events.Enabled = false
	ls := new(consumertest.LogsSink)
	l, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, ls)
	require.NoError(t, err)
	assert.IsType(t, lifecycle.Nop{}, l.(*lifecycle.ShutdownOnce).Component)

	cfg.Logs.Enabled = true
	l, err = f.CreateLogs(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, ls)
	require.NoError(t, err)
	_, isEvents := l.(*lifecycle.ShutdownOnce).Component.(*containerevents.Receiver)
	_, isParts := l.(*lifecycle.ShutdownOnce).Component.(lifecycle.Parts)
	assert.False(t, isEvents || isParts)
}

// Both logs.enabled and events.enabled: the log files and the events in
// one receiver; Shutdown is safe twice and without Start.
func TestEventsWithLogFiles(t *testing.T) {
	_, f, cfg := eventsConfig(t)
	cfg.Logs.Enabled = true
	l, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	require.NoError(t, err)
	parts, ok := l.(*lifecycle.ShutdownOnce).Component.(lifecycle.Parts)
	require.True(t, ok)
	require.Len(t, parts, 2)
	require.NoError(t, l.Shutdown(context.Background()), "without Start")

	ev := containerevents.NewReceiver(zap.NewNop(), consumertest.NewNop(), containerevents.Options{})
	require.NoError(t, ev.Shutdown(context.Background()))
	require.NoError(t, ev.Shutdown(context.Background()))
}

// A logs-only events receiver whose root has no cgroup tree fails Start
// naming root_path; with the log files on, the events are off and the
// files are still read (TestLogsFactoryEnabled).
func TestEventsNoCgroupTree(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.RootPath = t.TempDir()
	cfg.Runtime.CRIEnabled, cfg.Runtime.ContainerdEnabled = false, false
	l, err := NewFactory().CreateLogs(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	require.NoError(t, err)
	err = l.Start(context.Background(), componenttest.NewNopHost())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "events: root_path")
	require.NoError(t, l.Shutdown(context.Background()))
}

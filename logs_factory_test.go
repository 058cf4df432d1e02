// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerstatsreceiver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/lifecycle"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// Log files are off by default: even a file that is there produces no
// record. (Events, on by default, are off here: with both off the receiver
// starts nothing; events_factory_test.go has the events.)
func TestLogsDisabledByDefault(t *testing.T) {
	root := logRoot(t)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.False(t, cfg.Logs.Enabled)
	cfg.RootPath = root
	cfg.Logs.StartAt = "beginning"
	cfg.Events.Enabled = false
	sink := new(consumertest.LogsSink)
	r, err := NewFactory().CreateLogs(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.IsType(t, &lifecycle.ShutdownOnce{}, r)
	assert.IsType(t, lifecycle.Nop{}, r.(*lifecycle.ShutdownOnce).Component)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, r.Shutdown(context.Background()))
	assert.Zero(t, sink.LogRecordCount())
}

// Enabled through the factory, with no runtime: records carry what the
// path says.
func TestLogsFactoryEnabled(t *testing.T) {
	root := logRoot(t)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.RootPath = root
	cfg.NodeName = "node-f"
	cfg.Runtime.CRIEnabled, cfg.Runtime.ContainerdEnabled = false, false
	cfg.Logs.Enabled = true
	cfg.Logs.StartAt = "beginning"
	require.NoError(t, cfg.Validate())
	sink := new(consumertest.LogsSink)
	set := receivertest.NewNopSettings(metadata.Type)
	set.BuildInfo.Version = "9.8.7-logs"
	r, err := NewFactory().CreateLogs(context.Background(), set, cfg, sink)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	require.Eventually(t, func() bool { return sink.LogRecordCount() == 1 }, 10*time.Second, 20*time.Millisecond)
	// The records' scope is the receiver's (as on its metrics), not
	// stanza's default, with the collector's version.
	scope := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).Scope()
	assert.Equal(t, metadata.ScopeName, scope.Name())
	assert.Equal(t, "9.8.7-logs", scope.Version())
	res := sink.AllLogs()[0].ResourceLogs().At(0).Resource().Attributes().AsRaw()
	assert.Equal(t, map[string]any{
		"k8s.node.name": "node-f", "k8s.pod.uid": "9e8d7c6b-5555-4e4e-8f8f-000000000005", "k8s.pod.name": "lone-3",
		"k8s.namespace.name": "edge", "k8s.container.name": "probe", "k8s.container.restart_count": int64(6),
	}, res)
	lr := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	assert.Equal(t, "edge probe only line", lr.Body().Str())
}

// A configured storage extension that the collector does not have fails
// Start (offsets would silently not persist otherwise).
func TestLogsStorageMissing(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.RootPath = logRoot(t)
	cfg.Runtime.CRIEnabled, cfg.Runtime.ContainerdEnabled = false, false
	cfg.Logs.Enabled = true
	id := component.MustNewIDWithName("file_storage", "logs")
	cfg.Logs.Storage = &id
	r, err := NewFactory().CreateLogs(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	require.NoError(t, err)
	err = r.Start(context.Background(), componenttest.NewNopHost())
	require.ErrorContains(t, err, "storage")
	require.NoError(t, r.Shutdown(context.Background()))
}

func logRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "var/log/pods/edge_lone-3_9e8d7c6b-5555-4e4e-8f8f-000000000005/probe")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "6.log"),
		[]byte("2026-11-22T06:06:01.000000601Z stdout F edge probe only line\n"), 0o600))
	return root
}

// With both signals on from one configuration, the logs signal's cgroup
// index is fed by the metrics scrape's discovery: once the cgroup tree is
// gone, a container the last scrape saw is still found (a walk of the
// index's own would find nothing).
// bothSignals is a factory and a config of both signals on a copy of the
// v2-systemd fixture, without runtime or GPU.
func bothSignals(t *testing.T) (*nodes, receiver.Factory, *Config) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	require.NoError(t, os.CopyFS(root, os.DirFS("testdata/fixtures/v2-systemd")))
	ids := newNodes()
	f := newFactory(ids, nil)
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.RootPath = root
	cfg.Runtime.CRIEnabled, cfg.Runtime.ContainerdEnabled = false, false
	cfg.GPU.Enabled = false
	cfg.Logs.Enabled = true
	return ids, f, cfg
}

func TestLogsReuseScrapeDiscovery(t *testing.T) {
	ids, f, cfg := bothSignals(t)
	root := cfg.RootPath
	cfg.CollectionInterval = 20 * time.Millisecond
	require.NoError(t, cfg.Validate())
	sink := new(consumertest.MetricsSink)
	r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	idx := useNode(ids, cfg, zap.NewNop()).State().Host.Cgroups()
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	require.Eventually(t, func() bool { return sink.DataPointCount() > 0 }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, r.Shutdown(context.Background()))

	require.NoError(t, os.RemoveAll(filepath.Join(root, "sys")))
	c, ok := idx.Cgroup(context.Background(), strings.Repeat("c3", 32))
	require.True(t, ok, "known from the scrape's discovery")
	assert.Equal(t, "besteffort", c.QoS)
}

// With both signals on from one configuration, the platform check and the
// cgroup layout detection run once: the metrics scraper's Start detects,
// and the logs signal's cgroup index walks the tree with a layout from
// that same detection.
func TestBothSignalsDetectTheLayoutOnce(t *testing.T) {
	ids, f, cfg := bothSignals(t)
	cfg.InitialDelay = time.Hour // no scrape: the index walks the tree itself
	require.NoError(t, cfg.Validate())
	set := receivertest.NewNopSettings(metadata.Type)
	m, err := f.CreateMetrics(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	l, err := f.CreateLogs(context.Background(), set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	shared := useNode(ids, cfg, zap.NewNop()).State()
	require.NoError(t, m.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, m.Shutdown(context.Background())) })
	require.NoError(t, l.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, l.Shutdown(context.Background())) })

	c, ok := shared.Host.Cgroups().Cgroup(context.Background(), strings.Repeat("c3", 32))
	require.True(t, ok, "the index's own walk")
	assert.Equal(t, "besteffort", c.QoS)
	assert.Equal(t, 1, shared.Host.Detections(), "one detection for both signals")
}

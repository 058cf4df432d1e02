// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerstatsreceiver

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/containerstats/containerstatsreceiver/internal/fsstats"
	"github.com/containerstats/containerstatsreceiver/internal/node"
	"github.com/containerstats/containerstatsreceiver/receiver/scrape"
)

func fsConfig(t *testing.T, mod func(*Config)) *Config {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.RootPath = t.TempDir()
	cfg.FilesystemCollectionInterval = 50 * time.Millisecond
	cfg.Runtime.Timeout = 200 * time.Millisecond
	cfg.Runtime.RefreshInterval = 100 * time.Millisecond
	mod(cfg)
	return cfg
}

// waitCollected waits for the first background collection (the log sizes
// are always there once one has run).
func waitCollected(t *testing.T, c *fsstats.Collector) *fsstats.Snapshot {
	t.Helper()
	require.Eventually(t, func() bool { return c.Snapshot().Logs != nil }, 10*time.Second, 5*time.Millisecond)
	return c.Snapshot()
}

// TestFilesystemDeadCRISocket: a configured CRI socket nobody serves.
// Start returns at once, the collection gives no writable layers and no
// image filesystems (absent, not zeros), one warning names the failure,
// and Shutdown is prompt and safe twice.
func TestFilesystemDeadCRISocket(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	cfg := fsConfig(t, func(c *Config) { c.Runtime.CRIEndpoint = filepath.Join(c.RootPath, "dead.sock") })
	c := fsstats.New(filesystemConfig(cfg, testHost(cfg), zap.New(core)))
	began := time.Now()
	require.NoError(t, c.Start(context.Background()))
	assert.Less(t, time.Since(began), 100*time.Millisecond, "Start does not wait on the runtime")
	require.Eventually(t, func() bool { return logs.FilterLevelExact(zapcore.WarnLevel).Len() == 1 }, 10*time.Second, 5*time.Millisecond)
	s := waitCollected(t, c)
	assert.Nil(t, s.Layers)
	assert.Nil(t, s.Images)
	assert.Contains(t, logs.FilterLevelExact(zapcore.WarnLevel).All()[0].ContextMap()["error"], "dead.sock")
	require.NoError(t, c.Shutdown(context.Background()))
	require.NoError(t, c.Shutdown(context.Background()))
	assert.Equal(t, 1, logs.FilterLevelExact(zapcore.WarnLevel).Len(), "one warning for the run of failures")
}

// TestFilesystemWithoutCRI: CRI off, or no socket under root_path: no
// runtime is asked (one info log says which metrics are absent); log sizes
// are still collected.
func TestFilesystemWithoutCRI(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"cri_disabled": func(c *Config) { c.Runtime.CRIEnabled = false },
		"no_socket":    func(*Config) {},
	} {
		t.Run(name, func(t *testing.T) {
			core, logs := observer.New(zapcore.InfoLevel)
			cfg := fsConfig(t, mod)
			dir := filepath.Join(cfg.RootPath, "var/log/pods/ns_p_uid-9/c")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "0.log"), make([]byte, 97), 0o600))
			c := fsstats.New(filesystemConfig(cfg, testHost(cfg), zap.New(core)))
			require.NoError(t, c.Start(context.Background()))
			s := waitCollected(t, c)
			assert.Nil(t, s.Layers)
			assert.Equal(t, map[fsstats.LogDir]uint64{{PodUID: "uid-9", Container: "c"}: 97}, s.Logs)
			assert.Equal(t, 1, logs.FilterMessageSnippet("No CRI endpoint").Len())
			require.NoError(t, c.Shutdown(context.Background()))
		})
	}
}

// TestFilesystemRelativeEndpoint: an endpoint the dialer refuses fails
// Start (Validate already rejects it in a loaded config).
func TestFilesystemRelativeEndpoint(t *testing.T) {
	c := fsstats.New(fsTestConfig(fsConfig(t, func(c *Config) { c.Runtime.CRIEndpoint = "run/x.sock" }), zap.NewNop()))
	require.Error(t, c.Start(context.Background()))
	require.NoError(t, c.Shutdown(context.Background()))
}

// TestFilesystemOption: no collection when every filesystem metric is
// off; the log walk with k8s.container.ephemeral_storage.usage (its logs
// part) on; no log walk when it is off; the volumes only with a
// k8s.pod.volume.* or k8s.pod.filesystem.* metric on.
func TestFilesystemOption(t *testing.T) {
	off := func(c *Config) {
		m := &c.Metrics
		for _, e := range []*bool{
			&m.ContainerFilesystemUsage.Enabled, &m.ContainerFilesystemInodeUsed.Enabled, &m.K8sContainerEphemeralStorageUsage.Enabled,
			&m.K8sNodeFilesystemCapacity.Enabled, &m.K8sNodeFilesystemAvailable.Enabled, &m.K8sNodeFilesystemUsage.Enabled,
			&m.K8sNodeFilesystemInodeCount.Enabled, &m.K8sNodeFilesystemInodeFree.Enabled,
			&m.K8sNodeImageFilesystemUsage.Enabled, &m.K8sNodeImageFilesystemInodeUsed.Enabled,
			&m.K8sNodeImageFilesystemCapacity.Enabled, &m.K8sNodeImageFilesystemAvailable.Enabled,
			&m.ContainerFilesystemCapacity.Enabled, &m.ContainerFilesystemAvailable.Enabled,
			&m.K8sPodFilesystemCapacity.Enabled, &m.K8sPodFilesystemAvailable.Enabled, &m.K8sPodFilesystemUsage.Enabled,
			&m.K8sPodVolumeAvailable.Enabled, &m.K8sPodVolumeCapacity.Enabled, &m.K8sPodVolumeUsage.Enabled,
			&m.K8sPodVolumeInodeCount.Enabled, &m.K8sPodVolumeInodeFree.Enabled, &m.K8sPodVolumeInodeUsed.Enabled,
		} {
			*e = false
		}
	}
	assert.Nil(t, filesystemOption(fsConfig(t, off), zap.NewNop()))

	cfg := fsConfig(t, func(c *Config) {
		off(c)
		c.Metrics.K8sContainerEphemeralStorageUsage.Enabled = true
		c.Runtime.CRIEnabled = false // the rootfs part's runtime: none here
	})
	dir := filepath.Join(cfg.RootPath, "var/log/pods/ns_p_uid-8/c")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "0.log"), make([]byte, 89), 0o600))
	f := filesystemOption(cfg, zap.NewNop())
	c, ok := f.(*fsstats.Collector)
	require.True(t, ok)
	require.NoError(t, c.Start(context.Background()))
	s := waitCollected(t, c)
	assert.Equal(t, map[fsstats.LogDir]uint64{{PodUID: "uid-8", Container: "c"}: 89}, s.Logs)
	require.NoError(t, c.Shutdown(context.Background()))

	cfg = fsConfig(t, func(c *Config) { off(c); c.Metrics.K8sNodeFilesystemUsage.Enabled = true })
	c = filesystemOption(cfg, zap.NewNop()).(*fsstats.Collector)
	require.NoError(t, c.Start(context.Background()))
	require.Eventually(t, func() bool { return c.Snapshot() != (&fsstats.Collector{}).Snapshot() }, 10*time.Second, 5*time.Millisecond)
	assert.Nil(t, c.Snapshot().Logs, "no log walk")
	assert.Nil(t, c.Snapshot().Volumes, "no volumes")
	require.NoError(t, c.Shutdown(context.Background()))

	cfg = fsConfig(t, func(c *Config) { off(c); c.Metrics.K8sPodVolumeUsage.Enabled = true })
	vdir := filepath.Join(cfg.RootPath, "var/lib/kubelet/pods/uid-7/volumes/kubernetes.io~empty-dir/scratch")
	require.NoError(t, os.MkdirAll(vdir, 0o755))
	c = filesystemOption(cfg, zap.NewNop()).(*fsstats.Collector)
	require.NoError(t, c.Start(context.Background()))
	require.Eventually(t, func() bool { return c.Snapshot() != (&fsstats.Collector{}).Snapshot() }, 10*time.Second, 5*time.Millisecond)
	assert.Nil(t, c.Snapshot().Logs, "no log walk")
	require.Contains(t, c.Snapshot().Volumes, "uid-7")
	require.Len(t, c.Snapshot().Volumes["uid-7"].Volumes, 1)
	assert.Equal(t, "scratch", c.Snapshot().Volumes["uid-7"].Volumes[0].Name)
	assert.True(t, c.Snapshot().Volumes["uid-7"].Volumes[0].Used.OK, "walked")
	require.NoError(t, c.Shutdown(context.Background()))

	cfg = fsConfig(t, func(c *Config) { off(c); c.Metrics.K8sPodFilesystemUsage.Enabled = true; c.Runtime.CRIEnabled = false })
	c = filesystemOption(cfg, zap.NewNop()).(*fsstats.Collector)
	require.NoError(t, c.Start(context.Background()))
	require.Eventually(t, func() bool { return c.Snapshot() != (&fsstats.Collector{}).Snapshot() }, 10*time.Second, 5*time.Millisecond)
	assert.NotNil(t, c.Snapshot().Logs, "the pod's ephemeral storage needs the log walk")
	assert.NotNil(t, c.Snapshot().Volumes, "and the volumes")
	require.NoError(t, c.Shutdown(context.Background()))
}

// filesystemOption is what the metrics receiver's create function gives
// the scrape: the collection c's enabled metrics need.
func filesystemOption(c *Config, logger *zap.Logger) scrape.Filesystem {
	return scrape.NewFilesystem(&c.Metrics, fsTestConfig(c, logger))
}

// fsTestConfig is c's filesystem collection on a host handle of its own.
func fsTestConfig(c *Config, logger *zap.Logger) fsstats.Config {
	return filesystemConfig(c, testHost(c), logger)
}

// testHost is c's host handle, as its node state makes it.
func testHost(c *Config) *node.Host { return node.NewHost(nodeConfig(c).Host, nil) }

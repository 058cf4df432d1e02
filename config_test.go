// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerstatsreceiver

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

func loadConfig(t *testing.T, file string) (*Config, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config", file))
	require.NoError(t, err)
	sub, err := cm.Sub(component.NewID(metadata.Type).String())
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	if err := sub.Unmarshal(cfg); err != nil {
		return nil, err
	}
	return cfg, confmap.Validate(cfg)
}

func TestConfigDefault(t *testing.T) {
	t.Setenv("K8S_NODE_NAME", "node-from-env")
	cfg, err := loadConfig(t, "default.yaml")
	require.NoError(t, err)
	assert.Equal(t, "/", cfg.RootPath)
	assert.Equal(t, "node-from-env", cfg.NodeName)
	assert.Equal(t, 10*time.Second, cfg.CollectionInterval)
	assert.False(t, cfg.StandaloneContainers)
	assert.Equal(t, metadata.NewDefaultMetricsBuilderConfig(), cfg.MetricsBuilderConfig)
	assert.Equal(t, time.Minute, cfg.FilesystemCollectionInterval)
}

func TestConfigFilesystem(t *testing.T) {
	cfg, err := loadConfig(t, "filesystem.yaml")
	require.NoError(t, err)
	assert.Equal(t, 90*time.Second, cfg.FilesystemCollectionInterval)
}

func TestConfigFull(t *testing.T) {
	cfg, err := loadConfig(t, "full.yaml")
	require.NoError(t, err)
	assert.Equal(t, 15*time.Second, cfg.CollectionInterval)
	assert.Equal(t, 2*time.Second, cfg.InitialDelay)
	assert.Equal(t, 5*time.Second, cfg.Timeout)
	assert.Equal(t, "/hostfs", cfg.RootPath)
	assert.Equal(t, "node-a", cfg.NodeName)
	assert.True(t, cfg.StandaloneContainers)
	assert.False(t, cfg.Metrics.ContainerCPUUsage.Enabled)
	assert.True(t, cfg.Metrics.ContainerCPUTime.Enabled)
	assert.False(t, cfg.ResourceAttributes.K8sPodQosClass.Enabled)
}

func TestConfigIdentityDefaults(t *testing.T) {
	cfg, err := loadConfig(t, "default.yaml")
	require.NoError(t, err)
	assert.Equal(t, RuntimeConfig{
		CRIEnabled: true, ContainerdEnabled: true, ContainerdNamespaces: []string{"k8s.io", "moby"}, DockerEnabled: true,
		Timeout: 2 * time.Second, RefreshInterval: 30 * time.Second, MinRefreshInterval: 5 * time.Second, PodLogs: true,
	}, cfg.Runtime)
	assert.True(t, cfg.PodSeries)
	assert.True(t, cfg.NodeSeries)
	assert.False(t, cfg.PodLabels)
	assert.Empty(t, cfg.ContainerLabels)
	assert.Equal(t, FiltersConfig{}, cfg.Filters)
}

func TestConfigIdentity(t *testing.T) {
	cfg, err := loadConfig(t, "identity.yaml")
	require.NoError(t, err)
	assert.Equal(t, RuntimeConfig{
		CRIEndpoint: "unix:///hostfs/run/crio/crio.sock", CRIEnabled: true,
		ContainerdEndpoint: "/hostfs/run/k3s/containerd/containerd.sock", ContainerdNamespaces: []string{"k8s.io"},
		DockerEndpoints: []string{"/hostfs/run/user/1000/podman/podman.sock", "unix:///hostfs/run/docker.sock"},
		Timeout:         3 * time.Second, RefreshInterval: 45 * time.Second, MinRefreshInterval: 7 * time.Second, IncludeSandboxes: true,
	}, cfg.Runtime)
	assert.False(t, cfg.PodSeries)
	assert.False(t, cfg.NodeSeries)
	assert.True(t, cfg.PodLabels)
	assert.Equal(t, []string{"com.docker.compose.project", "com.docker.compose.service"}, cfg.ContainerLabels)
	f, err := cfg.Filters.compile()
	require.NoError(t, err)
	assert.True(t, f.AllowContainer("team-a", "web", "app"))
	assert.False(t, f.AllowContainer("team-test-1", "web", "app"))
	assert.False(t, f.AllowContainer("team-a", "debug-x", "app"))
	assert.False(t, f.AllowContainer("team-a", "web", "istio-proxy"))
	assert.False(t, f.AllowContainer("default", "web", "app"))
}

func TestConfigSystemContainers(t *testing.T) {
	cfg, err := loadConfig(t, "default.yaml")
	require.NoError(t, err)
	assert.Equal(t, SystemContainersConfig{}, cfg.SystemContainers, "detected by default")
	cfg, err = loadConfig(t, "system_containers.yaml")
	require.NoError(t, err)
	assert.Equal(t, "/system.slice/kubelet.service", cfg.SystemContainers.KubeletCgroup)
	assert.Equal(t, "/system.slice/containerd.service", cfg.SystemContainers.RuntimeCgroup)
	assert.Equal(t, "/system.slice", cfg.SystemContainers.MiscCgroup)
}

func TestConfigLogsDefaults(t *testing.T) {
	cfg, err := loadConfig(t, "default.yaml")
	require.NoError(t, err)
	assert.Equal(t, LogsConfig{StartAt: "end", MaxLogSize: 1024 * 1024}, cfg.Logs)
}

// Events are on by default (they reach only a logs pipeline) and switch
// off independently of the log files.
func TestConfigEvents(t *testing.T) {
	cfg, err := loadConfig(t, "default.yaml")
	require.NoError(t, err)
	assert.True(t, cfg.Events.Enabled)
	assert.False(t, cfg.Logs.Enabled)
	cfg, err = loadConfig(t, "events.yaml")
	require.NoError(t, err)
	assert.False(t, cfg.Events.Enabled)
	assert.True(t, cfg.Logs.Enabled)
}

func TestConfigLogs(t *testing.T) {
	cfg, err := loadConfig(t, "logs.yaml")
	require.NoError(t, err)
	assert.True(t, cfg.Logs.Enabled)
	assert.Equal(t, "beginning", cfg.Logs.StartAt)
	assert.EqualValues(t, 256*1024, cfg.Logs.MaxLogSize)
	require.NotNil(t, cfg.Logs.Storage)
	assert.Equal(t, component.MustNewIDWithName("file_storage", "logs"), *cfg.Logs.Storage)
	f, err := cfg.Logs.Filters.compile()
	require.NoError(t, err)
	assert.True(t, f.AllowContainer("team-a", "web-1", "app"))
	assert.False(t, f.AllowContainer("kube-system", "web-1", "app"))
	assert.False(t, f.AllowContainer("team-a", "db-1", "app"))
	assert.False(t, f.AllowContainer("team-a", "web-1", "istio-proxy"))
	// The metrics' filters are separate.
	assert.Equal(t, FiltersConfig{}, cfg.Filters)
}

func TestConfigInvalid(t *testing.T) {
	cases := []struct {
		file    string
		wantErr string
	}{
		{"relative_root.yaml", `root_path: must be an absolute path, got "hostfs"`},
		{"empty_root.yaml", "root_path: must not be empty"},
		{"zero_interval.yaml", `"collection_interval": requires positive value`},
		{"negative_timeout.yaml", `"timeout": requires positive value`},
		{"unknown_key.yaml", "root_pth"},
		{"zero_filesystem_interval.yaml", "filesystem_collection_interval: must be greater than 0, got 0s"},
		{"bad_metric.yaml", "container.cpu.nonexistent"},
		{"bad_runtime.yaml", `runtime: cri_endpoint: must be an absolute unix socket path, got "run/containerd/containerd.sock"`},
		{"bad_runtime.yaml", "; containerd_namespaces: must not be empty"},
		{"bad_runtime.yaml", "; timeout: must be greater than 0"},
		{"bad_runtime.yaml", "; refresh_interval: must be greater than 0"},
		{"bad_runtime.yaml", `; docker_endpoints::0: must be an absolute unix socket path, got "run/docker.sock"; docker_endpoints::1: must not be empty`},
		{"bad_labels.yaml", `container_labels::1: must be a label key without surrounding spaces, got " com.docker.compose.service"`},
		{"bad_filter.yaml", "filters::pods::include::0: error parsing regexp: missing closing )"},
		{"bad_filter.yaml", "filters::containers::exclude::0: strict and regex cannot be used together"},
		{"bad_logs.yaml", `logs: start_at: must be "beginning" or "end", got "middle"`},
		{"bad_logs.yaml", "; max_log_size: must be greater than 0, got 0"},
		{"bad_logs.yaml", "logs::filters::namespaces::include::0: error parsing regexp: missing closing ]"},
		{"bad_events.yaml", "'events.enabled'"},
		{"bad_system_containers.yaml", `system_containers: kubelet_cgroup: must be an absolute cgroup path such as /system.slice/kubelet.service, got "system.slice/kubelet.service"`},
		{"bad_system_containers.yaml", `; runtime_cgroup: must not be the root cgroup "/"`},
		{"bad_system_containers.yaml", `; misc_cgroup: must be a clean cgroup path (no trailing slash, no "." or ".." elements), got "/system.slice/../x"`},
	}
	for _, c := range cases {
		t.Run(c.file+"/"+c.wantErr, func(t *testing.T) {
			_, err := loadConfig(t, c.file)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.wantErr)
		})
	}
}

// Each key is checked once: a zero collection_interval or a negative
// timeout is scraperhelper's error alone, not reported twice; every error
// of a section carries the section's path.
func TestConfigErrorsReportedOnce(t *testing.T) {
	for file, key := range map[string]string{"zero_interval.yaml": "collection_interval", "negative_timeout.yaml": "timeout"} {
		_, err := loadConfig(t, file)
		require.Error(t, err)
		assert.Equal(t, 1, strings.Count(err.Error(), key), "%s reported once: %v", key, err)
		assert.Len(t, strings.Split(err.Error(), "\n"), 1, "one error: %v", err)
	}
	_, err := loadConfig(t, "bad_runtime.yaml")
	require.Error(t, err)
	lines := strings.Split(err.Error(), "\n")
	require.Len(t, lines, 1, "the runtime section's errors are one line under its prefix: %v", err)
	assert.True(t, strings.HasPrefix(lines[0], "runtime: "), lines[0])
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package deploy

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// hostConfig is what config/docker-host.yaml says the container it runs in
// must provide.
func hostConfig(t *testing.T) (root, socket string, port string) {
	t.Helper()
	var c struct {
		Receivers struct {
			CS struct {
				RootPath string `json:"root_path"`
				Runtime  struct {
					DockerEndpoints []string `json:"docker_endpoints"`
				} `json:"runtime"`
			} `json:"container_stats"`
		} `json:"receivers"`
		Exporters struct {
			Prometheus struct {
				Endpoint string `json:"endpoint"`
			} `json:"prometheus"`
		} `json:"exporters"`
	}
	data, err := os.ReadFile("../config/docker-host.yaml")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &c))
	require.Len(t, c.Receivers.CS.Runtime.DockerEndpoints, 1)
	_, port, ok := strings.Cut(c.Exporters.Prometheus.Endpoint, ":")
	require.True(t, ok)
	return c.Receivers.CS.RootPath, c.Receivers.CS.Runtime.DockerEndpoints[0], port
}

// The compose file gives the collector what config/docker-host.yaml reads:
// the host's / read-only at root_path, the Engine API socket read-only
// where docker_endpoints points, the two config files its command names
// (existing files, mounted read-only), the host's PID namespace; and its
// Prometheus scrapes the collector's port.
func TestComposeFile(t *testing.T) {
	root, socket, port := hostConfig(t)
	var c struct {
		Services map[string]struct {
			Image   string            `json:"image"`
			Command []string          `json:"command"`
			Volumes []string          `json:"volumes"`
			PID     string            `json:"pid"`
			Ports   []string          `json:"ports"`
			Env     map[string]string `json:"environment"`
			Restart string            `json:"restart"`
		} `json:"services"`
	}
	data, err := os.ReadFile("docker/compose.yaml")
	require.NoError(t, err)
	require.NoError(t, yaml.UnmarshalStrict(data, &c))
	col, ok := c.Services["otelcol-containerstats"]
	require.True(t, ok)
	assert.Contains(t, col.Volumes, "/:"+root+":ro")
	assert.Contains(t, col.Volumes, "/var/run/docker.sock:"+socket+":ro")
	assert.Equal(t, "host", col.PID)
	assert.Contains(t, col.Env, "HOST_NAME")
	mounted := map[string]string{}
	for _, v := range col.Volumes {
		parts := strings.Split(v, ":")
		require.Len(t, parts, 3, v)
		assert.Equal(t, "ro", parts[2], "%s: read-only", v)
		mounted[parts[1]] = parts[0]
	}
	require.Len(t, col.Command, 2)
	for _, arg := range col.Command {
		path, ok := strings.CutPrefix(arg, "--config=")
		require.True(t, ok, arg)
		src, ok := mounted[path]
		require.True(t, ok, "%s is mounted", path)
		_, statErr := os.Stat(filepath.Join("docker", src))
		assert.NoError(t, statErr, "the compose file's %s", src)
	}
	assert.Equal(t, "--config=/etc/otelcol/cadvisor-compat.yaml", col.Command[0], "the processors first, the host's settings over them")
	assert.Contains(t, col.Ports, "127.0.0.1:"+port+":"+port)

	var prom struct {
		ScrapeConfigs []struct {
			HonorLabels   bool `json:"honor_labels"`
			StaticConfigs []struct {
				Targets []string `json:"targets"`
			} `json:"static_configs"`
		} `json:"scrape_configs"`
	}
	data, err = os.ReadFile("docker/prometheus.yml")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &prom))
	require.Len(t, prom.ScrapeConfigs, 1)
	assert.True(t, prom.ScrapeConfigs[0].HonorLabels, "keeps job=cadvisor")
	assert.Equal(t, []string{"otelcol-containerstats:" + port}, prom.ScrapeConfigs[0].StaticConfigs[0].Targets)
}

// The Quadlet unit mounts what config/docker-host.yaml reads, with
// Podman's rootful API socket at docker_endpoints, and runs the config
// files it mounts.
func TestQuadletUnit(t *testing.T) {
	root, socket, port := hostConfig(t)
	f, err := os.Open("podman/containerstats.container")
	require.NoError(t, err)
	defer f.Close()
	section := ""
	kv := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
		default:
			k, v, ok := strings.Cut(line, "=")
			require.True(t, ok, line)
			kv[section+"."+k] = append(kv[section+"."+k], v)
		}
	}
	require.NoError(t, sc.Err())
	vols := kv["Container.Volume"]
	assert.Contains(t, vols, "/:"+root+":ro")
	assert.Contains(t, vols, "/run/podman/podman.sock:"+socket+":ro")
	assert.Contains(t, kv["Container.PodmanArgs"], "--pid=host")
	assert.Equal(t, []string{"127.0.0.1:" + port + ":" + port}, kv["Container.PublishPort"])
	assert.Equal(t, []string{"podman.socket"}, kv["Unit.Wants"])
	require.Len(t, kv["Container.Exec"], 1)
	for _, arg := range strings.Fields(kv["Container.Exec"][0]) {
		path, ok := strings.CutPrefix(arg, "--config=")
		require.True(t, ok, arg)
		found := false
		for _, v := range vols {
			found = found || strings.Contains(v, ":"+path+":")
		}
		assert.True(t, found, "%s is mounted", path)
	}
}

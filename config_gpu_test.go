// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerstatsreceiver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/receiver/scrape"
)

func TestConfigGPUDefault(t *testing.T) {
	cfg, err := loadConfig(t, "default.yaml")
	require.NoError(t, err)
	assert.True(t, cfg.GPU.Enabled)
	assert.True(t, cfg.GPU.ProcessAttribution)
	assert.False(t, cfg.GPU.PodResources.Enabled)
	assert.Equal(t, "/var/lib/kubelet/pod-resources/kubelet.sock", cfg.GPU.PodResources.Endpoint)
	assert.Equal(t, scrape.GPUOptions{Enabled: true, ProcessAttribution: true}, gpuOptions(cfg.GPU, nil),
		"pod-resources off by default: no endpoint handed to the scraper")
}

func TestConfigGPUFull(t *testing.T) {
	cfg, err := loadConfig(t, "gpu_full.yaml")
	require.NoError(t, err)
	assert.False(t, cfg.GPU.Enabled)
	assert.False(t, cfg.GPU.ProcessAttribution)
	assert.True(t, cfg.GPU.PodResources.Enabled)
	assert.Equal(t, scrape.GPUOptions{PodResourcesEndpoint: "/run/kubelet/pod-resources.sock"}, gpuOptions(cfg.GPU, nil))
}

func TestConfigGPUInvalid(t *testing.T) {
	for file, want := range map[string]string{
		"gpu_relative_endpoint.yaml": `gpu::pod_resources: endpoint: must be an absolute path on the host (root_path is prefixed), got "var/lib/kubelet/pod-resources/kubelet.sock"`,
		"gpu_unknown_key.yaml":       "pod_resource",
	} {
		t.Run(file, func(t *testing.T) {
			_, err := loadConfig(t, file)
			require.Error(t, err)
			assert.Contains(t, err.Error(), want)
		})
	}
}

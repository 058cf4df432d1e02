// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerstatsreceiver // import "github.com/containerstats/containerstatsreceiver"

import (
	"errors"
	"fmt"
	"path/filepath"

	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// Config is the receiver's configuration. Every field's YAML key is named in
// the errors Validate returns.
type Config struct {
	scraperhelper.ControllerConfig `mapstructure:",squash"`
	metadata.MetricsBuilderConfig  `mapstructure:",squash"`

	// RootPath is the prefix under which the host's filesystem is visible:
	// "/" when the collector runs on the host, "/hostfs" in the DaemonSet.
	RootPath string `mapstructure:"root_path"`

	// NodeName is reported as k8s.node.name. Defaults to $K8S_NODE_NAME.
	// When empty the attribute is omitted (never an empty string).
	NodeName string `mapstructure:"node_name"`

	// StandaloneContainers also reports container cgroups outside the
	// kubepods tree (docker, containerd or podman containers started outside
	// Kubernetes) whose cgroup name carries a 64-hex container ID.
	StandaloneContainers bool `mapstructure:"standalone_containers"`

	// GPU configures NVIDIA GPU metrics through NVML (docs/gpu.md).
	GPU GPUConfig `mapstructure:"gpu"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// GPUConfig is the `gpu` section.
type GPUConfig struct {
	// Enabled uses NVML when the node has libnvidia-ml.so.1, a driver and a
	// GPU; without them GPU metrics are off after one info log.
	Enabled bool `mapstructure:"enabled"`
	// ProcessAttribution maps the host PIDs NVML reports to containers
	// through /proc/<pid>/cgroup under root_path (the pod needs hostPID).
	ProcessAttribution bool `mapstructure:"process_attribution"`
	// PodResources attributes GPUs by the kubelet's allocations.
	PodResources PodResourcesConfig `mapstructure:"pod_resources"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// PodResourcesConfig is the `gpu.pod_resources` section.
type PodResourcesConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// Endpoint is the kubelet's pod-resources socket as a path on the host;
	// root_path is prefixed to it.
	Endpoint string `mapstructure:"endpoint"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// defaultPodResourcesEndpoint is where the kubelet serves pod-resources.
const defaultPodResourcesEndpoint = "/var/lib/kubelet/pod-resources/kubelet.sock"

// Validate checks the configuration without touching the filesystem; the
// cgroup layout under root_path is detected in Start.
func (cfg *Config) Validate() error {
	var errs error
	if cfg.CollectionInterval <= 0 {
		errs = errors.Join(errs, fmt.Errorf("collection_interval: must be greater than 0, got %s", cfg.CollectionInterval))
	}
	if cfg.Timeout < 0 {
		errs = errors.Join(errs, fmt.Errorf("timeout: must not be negative, got %s", cfg.Timeout))
	}
	switch {
	case cfg.RootPath == "":
		errs = errors.Join(errs, errors.New(`root_path: must not be empty (use "/" when the collector runs on the host)`))
	case !filepath.IsAbs(cfg.RootPath):
		errs = errors.Join(errs, fmt.Errorf("root_path: must be an absolute path, got %q", cfg.RootPath))
	}
	if cfg.GPU.PodResources.Enabled && !filepath.IsAbs(cfg.GPU.PodResources.Endpoint) {
		errs = errors.Join(errs, fmt.Errorf("gpu.pod_resources.endpoint: must be an absolute path on the host (root_path is prefixed), got %q", cfg.GPU.PodResources.Endpoint))
	}
	return errs
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerstatsreceiver // import "github.com/containerstats/containerstatsreceiver"

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/filter"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/receiver/scrape"
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

	// Runtime configures Kubernetes identity resolution (CRI, containerd,
	// /var/log/pods).
	Runtime RuntimeConfig `mapstructure:"runtime"`

	// Filters select the pods and containers reported.
	Filters FiltersConfig `mapstructure:"filters"`

	// SystemContainers sets the cgroups of the node's system containers
	// (k8s.node.system_container.*, docs/system-containers.md).
	SystemContainers SystemContainersConfig `mapstructure:"system_containers"`

	// PodSeries and NodeSeries switch the pod-level and node-level series.
	PodSeries  bool `mapstructure:"pod_series"`
	NodeSeries bool `mapstructure:"node_series"`

	// PodLabels adds every pod label as resource attribute
	// k8s.pod.label.<key> on pod and container series.
	PodLabels bool `mapstructure:"pod_labels"`

	// ContainerLabels is the allow-list of container labels set as
	// resource attributes container.label.<key> on container series, log
	// records and events: the keys of labels the Docker Engine API or
	// containerd give (e.g. com.docker.compose.project). Empty: none.
	ContainerLabels []string `mapstructure:"container_labels"`

	// FilesystemCollectionInterval is the period of the background
	// filesystem collection: containers' writable layers and the image
	// filesystems from CRI, and the sizes of container log files
	// (docs/filesystem.md). Scrapes read its latest result and never wait
	// on the runtime.
	FilesystemCollectionInterval time.Duration `mapstructure:"filesystem_collection_interval"`

	// Logs configures the logs signal (container log files under
	// <root_path>/var/log/pods). Off by default.
	Logs LogsConfig `mapstructure:"logs"`

	// Events configures container events (OOM kills, restarts) on the
	// logs signal: on by default, emitted only when a logs pipeline uses
	// the receiver (docs/logs.md, "Events").
	Events EventsConfig `mapstructure:"events"`

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

// SystemContainersConfig is the `system_containers` section: the cgroup
// paths (as in /proc/<pid>/cgroup, from the hierarchy's root, e.g.
// /system.slice/kubelet.service) of the node's system containers, as the
// kubelet's --kubelet-cgroups, --runtime-cgroups and --system-cgroups name
// them. An empty kubelet or runtime path is detected from where the
// kubelet's and the runtime's processes run; an empty misc path reports no
// misc system container. The pods' root cgroup is always the one discovery
// finds (kubepods, kubepods.slice).
type SystemContainersConfig struct {
	KubeletCgroup string `mapstructure:"kubelet_cgroup"`
	RuntimeCgroup string `mapstructure:"runtime_cgroup"`
	MiscCgroup    string `mapstructure:"misc_cgroup"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// Validate checks that each set path is an absolute, clean cgroup path
// below the root: the root cgroup is the node's own (k8s.node.*).
func (c *SystemContainersConfig) Validate() error {
	var errs []error
	for _, k := range []struct{ key, v string }{
		{"kubelet_cgroup", c.KubeletCgroup}, {"runtime_cgroup", c.RuntimeCgroup}, {"misc_cgroup", c.MiscCgroup},
	} {
		if err := validCgroupPath(k.v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k.key, err))
		}
	}
	return joinKeys(errs...)
}

// cgroups is the section as the scraper takes it.
func (c *SystemContainersConfig) cgroups() scrape.SystemCgroups {
	return scrape.SystemCgroups{Kubelet: c.KubeletCgroup, Runtime: c.RuntimeCgroup, Misc: c.MiscCgroup}
}

// validCgroupPath accepts "" (not set) and a clean absolute path other
// than "/".
func validCgroupPath(p string) error {
	switch {
	case p == "":
		return nil
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("must be an absolute cgroup path such as /system.slice/kubelet.service, got %q", p)
	case p == "/":
		return errors.New(`must not be the root cgroup "/", which is the node's own (k8s.node.*)`)
	case path.Clean(p) != p || strings.ContainsAny(p, "\x00\n"):
		return fmt.Errorf("must be a clean cgroup path (no trailing slash, no \".\" or \"..\" elements), got %q", p)
	}
	return nil
}

// RuntimeConfig configures the runtime resolvers.
type RuntimeConfig struct {
	// CRIEnabled turns the CRI resolver on.
	CRIEnabled bool `mapstructure:"cri_enabled"`
	// CRIEndpoint is the CRI socket (path on the collector's filesystem,
	// optionally "unix://"). Empty: auto-detect under root_path among the
	// containerd, CRI-O and cri-dockerd sockets.
	CRIEndpoint string `mapstructure:"cri_endpoint"`
	// ContainerdEnabled turns the containerd API resolver on.
	ContainerdEnabled bool `mapstructure:"containerd_enabled"`
	// ContainerdEndpoint is containerd's socket. Empty:
	// <root_path>/run/containerd/containerd.sock when it exists.
	ContainerdEndpoint string `mapstructure:"containerd_endpoint"`
	// ContainerdNamespaces are the containerd namespaces listed.
	ContainerdNamespaces []string `mapstructure:"containerd_namespaces"`
	// DockerEnabled turns the Docker Engine API resolver on: dockerd's
	// socket and Podman's Docker-compatible one give standalone
	// containers their names, images and labels.
	DockerEnabled bool `mapstructure:"docker_enabled"`
	// DockerEndpoints are Engine API sockets (paths on the collector's
	// filesystem, optionally "unix://"). Empty: every one found under
	// root_path among run/docker.sock, run/podman/podman.sock (and their
	// var/run paths) and rootless Podman's run/user/<uid>/podman/podman.sock.
	DockerEndpoints []string `mapstructure:"docker_endpoints"`
	// Timeout bounds every runtime call.
	Timeout time.Duration `mapstructure:"timeout"`
	// RefreshInterval is the period of the background refresh.
	RefreshInterval time.Duration `mapstructure:"refresh_interval"`
	// MinRefreshInterval rate-limits refreshes triggered by an unknown
	// container ID.
	MinRefreshInterval time.Duration `mapstructure:"min_refresh_interval"`
	// PodLogs reads <root_path>/var/log/pods and /var/log/containers for
	// names when no runtime knows a container.
	PodLogs bool `mapstructure:"pod_logs"`
	// IncludeSandboxes reports pause/sandbox containers too.
	IncludeSandboxes bool `mapstructure:"include_sandboxes"`
}

// LogsConfig configures the logs signal.
type LogsConfig struct {
	// Enabled starts file tailing when a logs pipeline uses the receiver.
	Enabled bool `mapstructure:"enabled"`
	// Filters select the containers whose logs are read (same syntax as
	// the metrics' filters, applied to the container's resolved identity).
	Filters FiltersConfig `mapstructure:"filters"`
	// StartAt is where reading starts in files found at startup:
	// "end" (default) or "beginning". Files created later are read from
	// their beginning. A checkpoint in storage takes precedence.
	StartAt string `mapstructure:"start_at"`
	// MaxLogSize bounds one record after partial lines are recombined.
	MaxLogSize helper.ByteSize `mapstructure:"max_log_size"`
	// Storage is the ID of a storage extension keeping file offsets across
	// restarts; unset keeps them in memory.
	Storage *component.ID `mapstructure:"storage"`
}

// EventsConfig is the `events` section.
type EventsConfig struct {
	// Enabled emits OOM kills and container restarts as log records when
	// a logs pipeline uses the receiver, whatever logs.enabled says (that
	// key is the log files'). With no logs pipeline it does nothing.
	Enabled bool `mapstructure:"enabled"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// FiltersConfig holds include/exclude patterns for namespace, pod and
// container names, in the collector's filter syntax (filter.Config:
// `strict: <name>` or `regexp: <RE2>`).
type FiltersConfig struct {
	Namespaces MatchConfig `mapstructure:"namespaces"`
	Pods       MatchConfig `mapstructure:"pods"`
	Containers MatchConfig `mapstructure:"containers"`
}

// MatchConfig is one include/exclude pair. Each entry validates itself
// (filter.Config.Validate), so errors read
// "filters::pods::include::0: error parsing regexp: ...".
type MatchConfig struct {
	Include []filter.Config `mapstructure:"include"`
	Exclude []filter.Config `mapstructure:"exclude"`
}

func (f FiltersConfig) compile() (identity.Filter, error) {
	var out identity.Filter
	var errs error
	for _, x := range []struct {
		key string
		m   MatchConfig
		dst *identity.Rules
	}{{"namespaces", f.Namespaces, &out.Namespaces}, {"pods", f.Pods, &out.Pods}, {"containers", f.Containers, &out.Containers}} {
		r, err := x.m.compile()
		if err != nil {
			errs = errors.Join(errs, fmt.Errorf("%s: %w", x.key, err))
		}
		*x.dst = r
	}
	return out, errs
}

func (m MatchConfig) compile() (identity.Rules, error) {
	return identity.CompileRules(m.Include, m.Exclude)
}

// Each section validates its own keys: confmap.Validate calls every
// Validate of the configuration tree and prefixes the errors with the
// section's path (e.g. "runtime: cri_endpoint: ...",
// "logs::filters::pods: include: ..."). The collection interval and
// timeout are scraperhelper.ControllerConfig's to check.

// keyErrors are one section's errors, each naming its key, on one line
// ("runtime: timeout: ...; refresh_interval: ...") so that every key stays
// under the section prefix confmap adds.
type keyErrors []error

func (e keyErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e keyErrors) Unwrap() []error { return e }

// joinKeys returns the non-nil errors as one keyErrors, nil if none.
func joinKeys(errs ...error) error {
	var out keyErrors
	for _, err := range errs {
		if err != nil {
			out = append(out, err)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Validate checks the configuration without touching the filesystem; the
// cgroup layout under root_path is detected in Start.
func (cfg *Config) Validate() error {
	switch {
	case cfg.RootPath == "":
		return errors.New(`root_path: must not be empty (use "/" when the collector runs on the host)`)
	case !filepath.IsAbs(cfg.RootPath):
		return fmt.Errorf("root_path: must be an absolute path, got %q", cfg.RootPath)
	case cfg.FilesystemCollectionInterval <= 0:
		return fmt.Errorf("filesystem_collection_interval: must be greater than 0, got %s", cfg.FilesystemCollectionInterval)
	}
	for i, k := range cfg.ContainerLabels {
		if k == "" || strings.TrimSpace(k) != k {
			return fmt.Errorf("container_labels::%d: must be a label key without surrounding spaces, got %q", i, k)
		}
	}
	return nil
}

// Validate checks the endpoint when allocation attribution is on.
func (c *PodResourcesConfig) Validate() error {
	if c.Enabled && !filepath.IsAbs(c.Endpoint) {
		return fmt.Errorf("endpoint: must be an absolute path on the host (root_path is prefixed), got %q", c.Endpoint)
	}
	return nil
}

func validEndpoint(key, ep string) error {
	if ep == "" {
		return nil
	}
	if !filepath.IsAbs(strings.TrimPrefix(ep, "unix://")) {
		return fmt.Errorf("%s: must be an absolute unix socket path, got %q", key, ep)
	}
	return nil
}

// Validate checks the runtime section.
func (rt *RuntimeConfig) Validate() error {
	errs := []error{
		validEndpoint("cri_endpoint", rt.CRIEndpoint),
		validEndpoint("containerd_endpoint", rt.ContainerdEndpoint),
	}
	for i, ep := range rt.DockerEndpoints {
		if ep == "" {
			errs = append(errs, fmt.Errorf("docker_endpoints::%d: must not be empty", i))
		}
		errs = append(errs, validEndpoint(fmt.Sprintf("docker_endpoints::%d", i), ep))
	}
	if rt.ContainerdEnabled && len(rt.ContainerdNamespaces) == 0 {
		errs = append(errs, errors.New("containerd_namespaces: must not be empty when containerd_enabled is true"))
	}
	for _, ns := range rt.ContainerdNamespaces {
		if ns == "" {
			errs = append(errs, errors.New("containerd_namespaces: must not contain an empty name"))
		}
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"timeout", rt.Timeout}, {"refresh_interval", rt.RefreshInterval}, {"min_refresh_interval", rt.MinRefreshInterval}} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("%s: must be greater than 0, got %s", d.key, d.v))
		}
	}
	return joinKeys(errs...)
}

// Validate checks the logs section (its filters validate themselves).
func (c *LogsConfig) Validate() error {
	var errs []error
	if c.StartAt != "beginning" && c.StartAt != "end" {
		errs = append(errs, fmt.Errorf(`start_at: must be "beginning" or "end", got %q`, c.StartAt))
	}
	if c.MaxLogSize <= 0 {
		errs = append(errs, fmt.Errorf("max_log_size: must be greater than 0, got %d", c.MaxLogSize))
	}
	return joinKeys(errs...)
}

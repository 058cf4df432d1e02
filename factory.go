// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerstatsreceiver // import "github.com/containerstats/containerstatsreceiver"

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper"
	"go.opentelemetry.io/collector/scraper/scraperhelper"
	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/containerevents"
	"github.com/containerstats/containerstatsreceiver/internal/cri"
	"github.com/containerstats/containerstatsreceiver/internal/fsstats"
	"github.com/containerstats/containerstatsreceiver/internal/gpu"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/lifecycle"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/node"
	"github.com/containerstats/containerstatsreceiver/internal/sharedcomponent"
	"github.com/containerstats/containerstatsreceiver/receiver/logs"
	"github.com/containerstats/containerstatsreceiver/receiver/scrape"
)

// defaultCollectionInterval matches the kubelet's housekeeping cadence closely
// enough for rates while staying cheap on dense nodes.
const defaultCollectionInterval = 10 * time.Second

// defaultFilesystemCollectionInterval is the period of the background
// filesystem collection: the kubelet's eviction manager and cAdvisor
// measure disk usage about as often, and the runtime's own measurements
// (containerd's stats_collect_period, 10 s) are not fresher.
const defaultFilesystemCollectionInterval = time.Minute

// nodes hands the receivers created from one *Config (the metrics and
// the logs receiver of one receiver ID) one node.State: the host handle
// (cgroup layout, /proc, runtime sockets, the log records' cgroup index),
// the identity cache and the events' hub.
type nodes = sharedcomponent.Map[*Config, *node.State]

// NewFactory creates the container_stats receiver factory.
func NewFactory() receiver.Factory {
	return newFactory(newNodes(), nil)
}

// newNodes returns an empty map of node states.
func newNodes() *nodes { return sharedcomponent.NewMap[*Config, *node.State]() }

// newFactory is NewFactory with its dependencies: the shared node states
// and the NVML library (nil: the real one; tests inject go-nvml's mocks).
func newFactory(ns *nodes, nvml gpu.Library) receiver.Factory {
	return receiver.NewFactory(
		metadata.Type,
		createDefaultConfig,
		receiver.WithMetrics(func(ctx context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
			return lifecycle.OnceShutdown(createMetricsReceiver(ctx, set, cfg, next, ns, nvml))
		}, metadata.MetricsStability),
		receiver.WithLogs(func(ctx context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
			return lifecycle.OnceShutdown(createLogsReceiver(ctx, set, cfg, next, ns))
		}, metadata.LogsStability),
	)
}

func createDefaultConfig() component.Config {
	cc := scraperhelper.NewDefaultControllerConfig()
	cc.CollectionInterval = defaultCollectionInterval
	return &Config{
		ControllerConfig:     cc,
		MetricsBuilderConfig: metadata.NewDefaultMetricsBuilderConfig(),
		RootPath:             "/",
		NodeName:             os.Getenv("K8S_NODE_NAME"),
		GPU: GPUConfig{
			Enabled:            true,
			ProcessAttribution: true,
			PodResources:       PodResourcesConfig{Endpoint: defaultPodResourcesEndpoint},
		},
		Runtime: RuntimeConfig{
			CRIEnabled:           true,
			ContainerdEnabled:    true,
			ContainerdNamespaces: []string{"k8s.io", "moby"},
			DockerEnabled:        true,
			Timeout:              identity.DefaultTimeout,
			RefreshInterval:      identity.DefaultRefreshInterval,
			MinRefreshInterval:   identity.DefaultMinRefresh,
			PodLogs:              true,
		},
		FilesystemCollectionInterval: defaultFilesystemCollectionInterval,
		PodSeries:                    true,
		NodeSeries:                   true,
		Logs: LogsConfig{
			StartAt:    logs.DefaultStartAt,
			MaxLogSize: logs.DefaultMaxLogSize,
		},
		Events: EventsConfig{Enabled: true},
	}
}

func createMetricsReceiver(
	_ context.Context,
	set receiver.Settings,
	cfg component.Config,
	next consumer.Metrics,
	ns *nodes,
	nvml gpu.Library,
) (receiver.Metrics, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, errors.New("container_stats: unexpected config type")
	}
	filter, err := c.Filters.compile()
	if err != nil {
		return nil, fmt.Errorf("filters: %w", err)
	}
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	h := useNode(ns, c, set.Logger)
	st := h.State()
	var sink scrape.EventSink
	if c.Events.Enabled {
		// This scrape detects the events (the logs receiver only drains
		// them); they are detected only if a logs receiver takes them
		// (Hub.Active, asked in Start).
		st.Events.SetFeeder()
		sink = st.Events
	}
	s := scrape.New(set, scrape.Options{
		Host:                 st.Host,
		NodeName:             c.NodeName,
		StandaloneContainers: c.StandaloneContainers,
		MetricsBuilderConfig: c.MetricsBuilderConfig,
		GPU:                  gpuOptions(c.GPU, nvml),
		Filesystem:           scrape.NewFilesystem(&c.Metrics, filesystemConfig(c, st.Host, set.Logger)),
		Identity:             h,
		Filter:               filter,
		IncludeSandboxes:     c.Runtime.IncludeSandboxes,
		SystemContainers:     c.SystemContainers.cgroups(),
		NoPodSeries:          !c.PodSeries,
		NoNodeSeries:         !c.NodeSeries,
		PodLabels:            c.PodLabels,
		Telemetry:            tb,
		Events:               sink,
	})
	sc, err := scraper.NewMetrics(s.Scrape, scraper.WithStart(s.Start), scraper.WithShutdown(s.Shutdown))
	if err != nil {
		return nil, err
	}
	return scraperhelper.NewMetricsController(&c.ControllerConfig, set, next,
		scraperhelper.AddMetricsScraper(metadata.Type, sc))
}

// useNode returns a new receiver's handle on c's shared node state.
func useNode(ns *nodes, c *Config, logger *zap.Logger) *node.Handle {
	return node.Use(ns, c, nodeConfig(c), logger)
}

// nodeConfig is what c's node state is made from. Its host handle is the
// only reader of root_path.
func nodeConfig(c *Config) node.Config {
	r := c.Runtime
	return node.Config{
		Host: node.HostConfig{
			Root: c.RootPath,
			Runtimes: node.Runtimes{
				CRI: r.CRIEnabled, CRIEndpoint: r.CRIEndpoint,
				Containerd: r.ContainerdEnabled, ContainerdEndpoint: r.ContainerdEndpoint,
				Docker: r.DockerEnabled, DockerEndpoints: r.DockerEndpoints,
			},
			Standalone:   c.StandaloneContainers,
			IndexCgroups: c.Logs.Enabled, // the log records' cgroup index reuses the scrapes' discovery
		},
		Identity: node.IdentityConfig{
			ContainerdNamespaces: r.ContainerdNamespaces, ContainerLabels: c.ContainerLabels,
			Timeout: r.Timeout, RefreshInterval: r.RefreshInterval, MinRefresh: r.MinRefreshInterval, PodLogs: r.PodLogs,
		},
	}
}

// filesystemConfig is the background filesystem collection of a metrics
// receiver (scrape.NewFilesystem picks what its enabled metrics need).
// Its CRI connection is its own (the identity cache's is shared with the
// logs signal and serialized by it), to the same endpoint the identity
// uses: the host handle's (runtime.cri_endpoint, else the socket it
// detected under root_path, once, in Start). Without CRI
// (runtime.cri_enabled false or no socket) writable layers and image
// filesystems are absent; log sizes and the node filesystem are still
// reported.
func filesystemConfig(c *Config, host *node.Host, logger *zap.Logger) fsstats.Config {
	return fsstats.Config{
		Root:     host.Root(),
		Interval: c.FilesystemCollectionInterval,
		Timeout:  c.Runtime.Timeout,
		Logger:   logger,
		Connect: func() (fsstats.Source, error) {
			ep := host.Endpoints().CRI
			if ep == "" {
				logger.Info("No CRI endpoint: container.filesystem.usage, container.filesystem.inode.used, the rootfs part of k8s.container.ephemeral_storage.usage and k8s.node.image_filesystem.* are not reported")
				return nil, nil
			}
			cl, err := cri.Dial(ep)
			if err != nil {
				return nil, err
			}
			return cri.NewFilesystemSource(cl), nil
		},
	}
}

// gpuOptions maps the gpu section to the scraper's options. With
// gpu.pod_resources on, the kubelet's allocations are joined to containers
// by the namespace, pod and container names the receiver's identity gives
// each container (scrape.GPUOptions.Names left nil): the same identity
// cache that names the container's resource.
func gpuOptions(c GPUConfig, nvml gpu.Library) scrape.GPUOptions {
	o := scrape.GPUOptions{Enabled: c.Enabled, ProcessAttribution: c.ProcessAttribution, NVML: nvml}
	if c.PodResources.Enabled {
		o.PodResourcesEndpoint = c.PodResources.Endpoint
	}
	return o
}

// createLogsReceiver tails container log files when logs.enabled is true
// (off by default: a logs pipeline naming the receiver reads no file) and
// emits container events when events.enabled is true (the default;
// containerevents' hub.go says who detects them). With both off it returns a
// receiver that starts nothing.
func createLogsReceiver(
	ctx context.Context,
	set receiver.Settings,
	cfg component.Config,
	next consumer.Logs,
	ns *nodes,
) (receiver.Logs, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, errors.New("container_stats: unexpected config type")
	}
	switch {
	case !c.Logs.Enabled && !c.Events.Enabled:
		set.Logger.Warn("container_stats is in a logs pipeline but logs.enabled and events.enabled are false: no log file is read and no container event is emitted")
		return lifecycle.Nop{}, nil
	case !c.Logs.Enabled:
		set.Logger.Info("container_stats is in a logs pipeline with logs.enabled false: it emits container events (events.enabled) and reads no log file")
	}
	var parts lifecycle.Parts
	if c.Logs.Enabled {
		tail, err := createLogFiles(ctx, set, c, next, ns)
		if err != nil {
			return nil, err
		}
		parts = append(parts, tail)
	}
	if c.Events.Enabled {
		ev, err := createEvents(set, c, next, ns)
		if err != nil {
			return nil, fmt.Errorf("events: %w", err)
		}
		parts = append(parts, ev)
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return parts, nil
}

// createLogFiles is the file tailer (logs.enabled).
func createLogFiles(ctx context.Context, set receiver.Settings, c *Config, next consumer.Logs, ns *nodes) (receiver.Logs, error) {
	filter, err := c.Logs.Filters.compile()
	if err != nil {
		return nil, fmt.Errorf("logs: filters: %w", err)
	}
	h := useNode(ns, c, set.Logger)
	host := h.State().Host
	return logs.New(ctx, set, logs.Options{
		Host:               host,
		NodeName:           c.NodeName,
		ResourceAttributes: c.ResourceAttributes,
		Identity:           h,
		Cgroups:            host.Cgroups(),
		Filter:             filter,
		PodLabels:          c.PodLabels,
		StartAt:            c.Logs.StartAt,
		MaxLogSize:         int64(c.Logs.MaxLogSize),
		StorageID:          c.Logs.Storage,
	}, next)
}

// createEvents is the events part of c's logs receiver; the hub learns
// that a logs receiver takes events. When no metrics receiver of c
// scrapes, it runs the scrape itself with every metric off (only the
// events family reads: the cgroup tree, the OOM kill counters, the
// runtime's listing), with a handle on the node state taken now, so that
// it publishes to this very hub.
func createEvents(set receiver.Settings, c *Config, next consumer.Logs, ns *nodes) (*containerevents.Receiver, error) {
	filter, err := c.Filters.compile()
	if err != nil {
		return nil, fmt.Errorf("filters: %w", err)
	}
	h := useNode(ns, c, set.Logger)
	st := h.State()
	st.Events.SetConsumer()
	return containerevents.NewReceiver(set.Logger, next, containerevents.Options{
		Hub: st.Events, Interval: c.CollectionInterval, InitialDelay: c.InitialDelay, Optional: c.Logs.Enabled,
		NewScraper: func() containerevents.Scraper {
			return scrape.New(set, scrape.Options{
				Host:                 st.Host,
				NodeName:             c.NodeName,
				StandaloneContainers: c.StandaloneContainers,
				// Every metric off (the zero MetricsConfig): the
				// resource attributes are the records' only.
				MetricsBuilderConfig: metadata.MetricsBuilderConfig{ResourceAttributes: c.ResourceAttributes},
				Identity:             h,
				Filter:               filter,
				IncludeSandboxes:     c.Runtime.IncludeSandboxes,
				NoPodSeries:          true,
				NoNodeSeries:         true,
				PodLabels:            c.PodLabels,
				Events:               st.Events,
			})
		},
	}), nil
}

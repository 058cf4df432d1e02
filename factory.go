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

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/gpu"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
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

// NewFactory creates the container_stats receiver factory.
//
// The metrics and logs receivers created from one configuration (one
// receiver ID in the collector) share one identity cache, so both signals
// resolve containers from the same runtime listings.
func NewFactory() receiver.Factory {
	return newFactory(newSharedIdentities(), nil)
}

// newFactory is NewFactory with its dependencies: the identity caches and
// the NVML library (nil: the real one; tests inject go-nvml's mocks).
func newFactory(ids *sharedIdentities, nvml gpu.Library) receiver.Factory {
	return receiver.NewFactory(
		metadata.Type,
		createDefaultConfig,
		receiver.WithMetrics(func(ctx context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
			return onceShutdown(createMetricsReceiver(ctx, set, cfg, next, ids, nvml))
		}, metadata.MetricsStability),
		receiver.WithLogs(func(ctx context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
			return onceShutdown(createLogsReceiver(ctx, set, cfg, next, ids))
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
	ids *sharedIdentities,
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
	ident := ids.get(c, set.Logger)
	var discovered func(*cgroupfs.Tree)
	if c.Logs.Enabled {
		discovered = ident.shared.cgroups.Update // the logs signal reuses the scrape's discovery
	}
	var events scrape.EventSink
	if c.Events.Enabled {
		// This scrape detects the events (the logs receiver only drains
		// them); they are detected only if a logs receiver takes them
		// (eventHub.Active, asked in Start).
		ident.shared.events.setFeeder()
		events = ident.shared.events
	}
	s := scrape.New(set, scrape.Options{
		RootPath:             c.RootPath,
		Host:                 ident.shared.host,
		NodeName:             c.NodeName,
		StandaloneContainers: c.StandaloneContainers,
		MetricsBuilderConfig: c.MetricsBuilderConfig,
		GPU:                  gpuOptions(c.GPU, nvml),
		Filesystem:           filesystemOption(c, set.Logger),
		Discovered:           discovered,
		Identity:             ident,
		Filter:               filter,
		IncludeSandboxes:     c.Runtime.IncludeSandboxes,
		SystemContainers:     c.SystemContainers.cgroups(),
		NoPodSeries:          !c.PodSeries,
		NoNodeSeries:         !c.NodeSeries,
		PodLabels:            c.PodLabels,
		Telemetry:            tb,
		Events:               events,
	})
	sc, err := scraper.NewMetrics(s.Scrape, scraper.WithStart(s.Start), scraper.WithShutdown(s.Shutdown))
	if err != nil {
		return nil, err
	}
	return scraperhelper.NewMetricsController(&c.ControllerConfig, set, next,
		scraperhelper.AddMetricsScraper(metadata.Type, sc))
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
// emits container events when events.enabled is true (the default; see
// events.go for who detects them). With both off it returns a receiver
// that starts nothing.
func createLogsReceiver(
	ctx context.Context,
	set receiver.Settings,
	cfg component.Config,
	next consumer.Logs,
	ids *sharedIdentities,
) (receiver.Logs, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, errors.New("container_stats: unexpected config type")
	}
	switch {
	case !c.Logs.Enabled && !c.Events.Enabled:
		set.Logger.Warn("container_stats is in a logs pipeline but logs.enabled and events.enabled are false: no log file is read and no container event is emitted")
		return disabledLogs{}, nil
	case !c.Logs.Enabled:
		set.Logger.Info("container_stats is in a logs pipeline with logs.enabled false: it emits container events (events.enabled) and reads no log file")
	}
	var parts logsParts
	if c.Logs.Enabled {
		tail, err := createLogFiles(ctx, set, c, next, ids)
		if err != nil {
			return nil, err
		}
		parts = append(parts, tail)
	}
	if c.Events.Enabled {
		ev, err := newEventsReceiver(set, c, next, ids)
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
func createLogFiles(ctx context.Context, set receiver.Settings, c *Config, next consumer.Logs, ids *sharedIdentities) (receiver.Logs, error) {
	filter, err := c.Logs.Filters.compile()
	if err != nil {
		return nil, fmt.Errorf("logs: filters: %w", err)
	}
	ident := ids.get(c, set.Logger)
	return logs.New(ctx, set, logs.Options{
		RootPath:           c.RootPath,
		NodeName:           c.NodeName,
		ResourceAttributes: c.ResourceAttributes,
		Identity:           ident,
		Cgroups:            ident.shared.cgroups,
		Host:               ident.shared.host,
		Filter:             filter,
		PodLabels:          c.PodLabels,
		StartAt:            c.Logs.StartAt,
		MaxLogSize:         int64(c.Logs.MaxLogSize),
		StorageID:          c.Logs.Storage,
	}, next)
}

// disabledLogs is the logs receiver when logs.enabled and events.enabled
// are false.
type disabledLogs struct{}

func (disabledLogs) Start(context.Context, component.Host) error { return nil }
func (disabledLogs) Shutdown(context.Context) error              { return nil }

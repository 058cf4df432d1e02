// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerstatsreceiver // import "github.com/containerstats/containerstatsreceiver"

import (
	"context"
	"errors"
	"os"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/receiver/scrape"
)

// defaultCollectionInterval matches the kubelet's housekeeping cadence closely
// enough for rates while staying cheap on dense nodes.
const defaultCollectionInterval = 10 * time.Second

// NewFactory creates the container_stats receiver factory.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(
		metadata.Type,
		createDefaultConfig,
		receiver.WithMetrics(createMetricsReceiver, metadata.MetricsStability),
	)
}

func createDefaultConfig() component.Config {
	cc := scraperhelper.NewDefaultControllerConfig()
	cc.CollectionInterval = defaultCollectionInterval
	return &Config{
		ControllerConfig:     cc,
		MetricsBuilderConfig: metadata.DefaultMetricsBuilderConfig(),
		RootPath:             "/",
		NodeName:             os.Getenv("K8S_NODE_NAME"),
		Runtime: RuntimeConfig{
			CRIEnabled:           true,
			ContainerdEnabled:    true,
			ContainerdNamespaces: []string{"k8s.io", "moby"},
			Timeout:              identity.DefaultTimeout,
			RefreshInterval:      identity.DefaultRefreshInterval,
			MinRefreshInterval:   identity.DefaultMinRefresh,
			PodLogs:              true,
		},
		PodSeries:  true,
		NodeSeries: true,
	}
}

func createMetricsReceiver(
	_ context.Context,
	set receiver.Settings,
	cfg component.Config,
	next consumer.Metrics,
) (receiver.Metrics, error) {
	c, ok := cfg.(*Config)
	if !ok {
		return nil, errors.New("container_stats: unexpected config type")
	}
	filter, err := c.Filters.compile()
	if err != nil {
		return nil, err
	}
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	s := scrape.New(set, scrape.Options{
		RootPath:             c.RootPath,
		NodeName:             c.NodeName,
		StandaloneContainers: c.StandaloneContainers,
		MetricsBuilderConfig: c.MetricsBuilderConfig,
		Identity:             newRuntimeIdentity(c.RootPath, c.Runtime, set.Logger),
		Filter:               filter,
		IncludeSandboxes:     c.Runtime.IncludeSandboxes,
		NoPodSeries:          !c.PodSeries,
		NoNodeSeries:         !c.NodeSeries,
		PodLabels:            c.PodLabels,
		Telemetry:            tb,
	})
	sc, err := scraper.NewMetrics(s.Scrape, scraper.WithStart(s.Start), scraper.WithShutdown(s.Shutdown))
	if err != nil {
		return nil, err
	}
	return scraperhelper.NewMetricsController(&c.ControllerConfig, set, next,
		scraperhelper.AddMetricsScraper(metadata.Type, sc))
}

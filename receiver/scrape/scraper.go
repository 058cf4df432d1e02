// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package scrape is the receiver's scrape pipeline: discovery of the cgroup
// tree, reads, derived values and pdata assembly.
package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"

	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// Options is what the scraper takes from the receiver's Config.
type Options struct {
	RootPath             string
	NodeName             string
	StandaloneContainers bool
	MetricsBuilderConfig metadata.MetricsBuilderConfig
}

// Scraper scrapes one node.
type Scraper struct {
	set  receiver.Settings
	opts Options
}

// New returns a scraper; nothing is read until Start.
func New(set receiver.Settings, opts Options) *Scraper {
	return &Scraper{set: set, opts: opts}
}

// Start detects the cgroup layout.
func (s *Scraper) Start(context.Context, component.Host) error { return nil }

// Scrape reads the tree once.
func (s *Scraper) Scrape(context.Context) (pmetric.Metrics, error) { return pmetric.NewMetrics(), nil }

// Shutdown releases resources; safe without Start and twice.
func (s *Scraper) Shutdown(context.Context) error { return nil }

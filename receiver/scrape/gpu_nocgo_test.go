//go:build !cgo

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestScrapeGPUWithoutCgo: a build without cgo has no NVML; GPU metrics are
// off after one info log and the rest of the scrape is unaffected.
func TestScrapeGPUWithoutCgo(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	set := newSettings()
	set.Logger = zap.New(core)
	s := New(set, Options{
		Host: testHost(copyFixture(t, "v2-systemd")), NodeName: "node-1", MetricsBuilderConfig: defaultMBC(),
		Now: (&fakeClock{now: t0}).Now, GPU: GPUOptions{Enabled: true, ProcessAttribution: true},
	})
	require.NoError(t, s.Start(context.Background(), componenttest.NewNopHost()))
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	assert.Positive(t, m.MetricCount())
	requireNoMetric(t, m, "hw.gpu.memory.usage")
	require.NoError(t, s.Shutdown(context.Background()))
	got := logs.FilterMessageSnippet("NVIDIA GPU").All()
	require.Len(t, got, 1)
	assert.Contains(t, got[0].ContextMap()["error"], "built without cgo")
}

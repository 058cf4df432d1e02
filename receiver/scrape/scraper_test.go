// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/testing/fixture"
)

// t0 is the injected clock's first scrape.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const fixtures = "../../testdata/fixtures"

// copyFixture copies a fixture tree (symlinks included) into a temp dir so a
// test can change it.
func copyFixture(tb testing.TB, name string) string {
	tb.Helper()
	dst := filepath.Join(tb.TempDir(), name)
	require.NoError(tb, os.CopyFS(dst, os.DirFS(filepath.Join(fixtures, name))))
	return dst
}

// bumpCPU adds a distinct amount to every cgroup's total CPU counter, in
// sorted path order, so each container's usage rate differs from the rest
// (fixture.BumpCPU, which test/archgolden shares).
func bumpCPU(tb testing.TB, root string) { fixture.BumpCPU(tb, root) }

type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

func newSettings() receiver.Settings { return receivertest.NewNopSettings(metadata.Type) }

func defaultMBC() metadata.MetricsBuilderConfig { return metadata.NewDefaultMetricsBuilderConfig() }

func newTestScraper(tb testing.TB, root string, standalone bool, clk *fakeClock) *Scraper {
	tb.Helper()
	s := New(newSettings(), Options{
		Host:                 testHost(root),
		NodeName:             "node-1",
		StandaloneContainers: standalone,
		MetricsBuilderConfig: defaultMBC(),
		Now:                  clk.Now,
	})
	require.NoError(tb, s.Start(context.Background(), componenttest.NewNopHost()))
	tb.Cleanup(func() { require.NoError(tb, s.Shutdown(context.Background())) })
	return s
}

var layouts = []struct {
	name       string
	standalone bool
}{
	{"v1-cgroupfs", false},
	{"v1-systemd", false},
	{"v2-systemd", false},
	{"v2-cgroupfs", false},
	{"hybrid", true},
	{"v2-standalone", true},
}

// TestScrapeGolden scrapes each fixture layout twice, 10s apart with CPU
// counters advanced in between, and compares the second scrape with its
// golden file. UPDATE_GOLDEN=1 rewrites the golden files.
func TestScrapeGolden(t *testing.T) {
	for _, lt := range layouts {
		t.Run(lt.name, func(t *testing.T) {
			root := copyFixture(t, lt.name)
			clk := &fakeClock{now: t0}
			s := newTestScraper(t, root, lt.standalone, clk)

			first, err := s.Scrape(context.Background())
			require.NoError(t, err)
			requireNoMetric(t, first, "container.cpu.usage")
			requireNoMetric(t, first, "k8s.pod.cpu.usage")
			requireNoMetric(t, first, "k8s.node.cpu.usage")

			bumpCPU(t, root)
			clk.now = t0.Add(10 * time.Second)
			got, err := s.Scrape(context.Background())
			require.NoError(t, err)

			path := filepath.Join("..", "..", "testdata", "golden", lt.name+".yaml")
			requireGolden(t, path, got)
		})
	}
}

// requireGolden compares m with the golden file at path, timestamps
// included: the clock is injected, so nothing in a scrape is
// nondeterministic but the order of resources and metrics.
// UPDATE_GOLDEN=1 rewrites the file first.
func requireGolden(t *testing.T, path string, m pmetric.Metrics) {
	t.Helper()
	if os.Getenv("UPDATE_GOLDEN") != "" {
		require.NoError(t, golden.WriteMetricsToFile(path, m, golden.SkipMetricTimestampNormalization()))
	}
	want, err := golden.ReadMetrics(path)
	require.NoError(t, err)
	require.NoError(t, pmetrictest.CompareMetrics(want, m,
		pmetrictest.IgnoreResourceMetricsOrder(),
		pmetrictest.IgnoreMetricsOrder(),
		pmetrictest.IgnoreMetricDataPointsOrder()))
}

func requireNoMetric(t *testing.T, m pmetric.Metrics, name string) {
	t.Helper()
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		sms := m.ResourceMetrics().At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				require.NotEqual(t, name, ms.At(k).Name(), "metric must be absent")
			}
		}
	}
}

const (
	v2Pod1  = "/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b3c4d_0000_4000_8000_00000000000a.slice"
	v2A1Dir = v2Pod1 + "/cri-containerd-" + v2Ctr1 + ".scope"
	v2Ctr2  = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
	podUID1 = "1a2b3c4d-0000-4000-8000-00000000000a"
)

// scraperWith is a started scraper of root with mbc on clk (logger nil: no logs).
func scraperWith(tb testing.TB, root string, mbc metadata.MetricsBuilderConfig, clk *fakeClock, logger *zap.Logger) *Scraper {
	tb.Helper()
	set := newSettings()
	if logger != nil {
		set.Logger = logger
	}
	s := New(set, Options{Host: testHost(root), NodeName: "node-1", MetricsBuilderConfig: mbc, Now: clk.Now, StandaloneContainers: true})
	require.NoError(tb, s.Start(context.Background(), componenttest.NewNopHost()))
	tb.Cleanup(func() { require.NoError(tb, s.Shutdown(context.Background())) })
	return s
}

func metricNames(m pmetric.Metrics) map[string]bool {
	out := map[string]bool{}
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		ms := m.ResourceMetrics().At(i).ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			out[ms.At(j).Name()] = true
		}
	}
	return out
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/scraper/scrapererror"
)

// A malformed cpu.max costs that container's bandwidth points only.
func TestScrapeMalformedCPUMax(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	require.NoError(t, os.WriteFile(filepath.Join(root, v2A1Dir, "cpu.max"), []byte("lots 100000\n"), 0o600))
	s := scraperWith(t, root, defaultMBC(), &fakeClock{now: t0}, nil)
	m, err := s.Scrape(context.Background())
	var pe scrapererror.PartialScrapeError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, familyOf[*bandwidthFamily](t, s).points(kindContainer, nil), pe.Failed)
	assert.Contains(t, err.Error(), "container "+v2Ctr1)
	assert.Contains(t, err.Error(), "cpu.max")
	a1 := points(m, "container.id", v2Ctr1)
	assert.NotContains(t, a1, "container.cpu.limit")
	assert.Contains(t, a1, "container.tasks/running")
	assert.Contains(t, points(m, "container.id", v2Ctr2), "container.cpu.weight")
}

// An unlimited quota gives no limit point (not 0, not +Inf).
func TestScrapeUnlimitedCPUNoLimitPoint(t *testing.T) {
	s := scraperWith(t, copyFixture(t, "v2-systemd"), defaultMBC(), &fakeClock{now: t0}, nil)
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	b2 := points(m, "container.id", v2Ctr2)
	assert.NotContains(t, b2, "container.cpu.limit", "cpu.max is \"max 100000\"")
	assert.Equal(t, 20.0, b2["container.cpu.weight"])
	assert.NotContains(t, b2, "container.cpu.shares", "no cpu.shares on v2")
}

// TestCPULimitUtilization: with only k8s.container.cpu.limit.utilization
// on, a container with a finite quota gets container.cpu.usage over
// container.cpu.limit from the second scrape on; one without a quota
// (cpu.max "max") and the first scrape get no point, never a 0; v1 the same
// from cpu.cfs_quota_us / cpu.cfs_period_us.
func TestCPULimitUtilization(t *testing.T) {
	withLimit := 0
	defer func() { assert.Positive(t, withLimit, "some fixture container has a CPU limit") }()
	for _, lt := range layouts {
		t.Run(lt.name, func(t *testing.T) {
			root, clk := copyFixture(t, lt.name), &fakeClock{now: t0}
			s := startScraper(t, root, lt.standalone, clk, func(*Options) {})
			want := map[string]float64{} // container ID -> usage / limit of the default metrics
			m := twoScrapes(t, s, root, clk)
			forEachResource(m, func(rm pmetric.ResourceMetrics) {
				id, ok := rm.Resource().Attributes().Get("container.id")
				if !ok {
					return
				}
				p := points(m, "container.id", id.Str())
				if lim, ok := p["container.cpu.limit"]; ok {
					want[id.Str()] = p["container.cpu.usage"] / lim
				}
			})

			root, clk = copyFixture(t, lt.name), &fakeClock{now: t0}
			s = startScraper(t, root, lt.standalone, clk, func(o *Options) { o.MetricsBuilderConfig = only(t, "k8s.container.cpu.limit.utilization") })
			first, err := s.Scrape(context.Background())
			require.NoError(t, err)
			assert.Zero(t, first.DataPointCount(), "no rate on the first scrape")
			bumpCPU(t, root)
			clk.now = t0.Add(10 * time.Second)
			m, err = s.Scrape(context.Background())
			require.NoError(t, err)
			got := map[string]float64{}
			forEachResource(m, func(rm pmetric.ResourceMetrics) {
				id, _ := rm.Resource().Attributes().Get("container.id")
				p := points(m, "container.id", id.Str())
				require.Len(t, p, 1, id.Str())
				got[id.Str()] = p["k8s.container.cpu.limit.utilization"]
			})
			withLimit += len(want)
			require.Len(t, got, len(want), "a point for each container with a limit, none for the rest")
			for id, w := range want {
				assert.Positive(t, w, id)
				assert.InDelta(t, w, got[id], 1e-12, id)
			}
		})
	}
}

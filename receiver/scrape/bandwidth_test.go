// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/scraper/scrapererror"
)

// A malformed cpu.max costs that container's bandwidth points only.
func TestScrapeMalformedCPUMax(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	require.NoError(t, os.WriteFile(filepath.Join(root, v2A1Dir, "cpu.max"), []byte("lots 100000\n"), 0o644))
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

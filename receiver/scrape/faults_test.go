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
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
)

const (
	v2Ctr1 = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
	v2Ctr3 = "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
)

// A malformed file costs that container's memory points only: the error is
// partial and names the container and the file; every other container keeps
// all its points, and the bad one keeps its CPU points.
func TestScrapeMalformedFileIsPartial(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	bad := filepath.Join(root, "sys/fs/cgroup/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod2b3c4d5e_0000_4000_8000_00000000000b.slice/cri-containerd-"+v2Ctr3+".scope/memory.current")
	require.NoError(t, os.WriteFile(bad, []byte("garbage\n"), 0o600))

	s := newTestScraper(t, root, false, &fakeClock{now: t0})
	m, err := s.Scrape(context.Background())
	require.Error(t, err)
	var pe scrapererror.PartialScrapeError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, familyOf[*memoryFamily](t, s).points(kindContainer, nil), pe.Failed)
	assert.Contains(t, err.Error(), "container "+v2Ctr3)
	assert.Contains(t, err.Error(), "memory.current")

	badPoints := points(m, "container.id", v2Ctr3)
	assert.Contains(t, badPoints, "container.cpu.time/user")
	assert.NotContains(t, badPoints, "container.memory.usage")
	good := points(m, "container.id", v2Ctr1)
	assert.Contains(t, good, "container.memory.usage")
	assert.Contains(t, good, "container.memory.working_set")
	assert.Contains(t, good, "container.cpu.time/system")
}

// A cgroup that vanished between discovery and the read drops its points
// (none are left in the builder for the next resource) and is a named
// partial error.
func TestScrapeVanishedCgroup(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	s := newTestScraper(t, root, false, &fakeClock{now: t0})
	var errs scrapererror.ScrapeErrors
	st := s.get(seriesKey{kind: kindContainer, id: "gone"}, "/kubepods.slice/gone", pcommon.Timestamp(1))
	ok := s.scrapeCgroup(newPass(t0, s.gen, nil), entity{kind: kindContainer, rel: "/kubepods.slice/gone", name: "container gone", st: st}, &errs)
	assert.False(t, ok)
	err := errs.Combine()
	var pe scrapererror.PartialScrapeError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, s.entityPoints(kindContainer, st), pe.Failed)
	assert.Contains(t, err.Error(), "container gone: "+filepath.Join(root, "sys/fs/cgroup/kubepods.slice/gone")+": "+cgroupfs.ErrVanished.Error())
	assert.Equal(t, 0, s.env.mb.Emit().DataPointCount(), "nothing recorded for a vanished cgroup")
}

// State for containers that went away is dropped on the next scrape.
func TestScrapeEvictsGoneContainers(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	clk := &fakeClock{now: t0}
	s := newTestScraper(t, root, false, clk)
	_, err := s.Scrape(context.Background())
	require.NoError(t, err)
	before := len(s.series)
	require.NoError(t, os.RemoveAll(filepath.Join(root, "sys/fs/cgroup/kubepods.slice/kubepods-pod3c4d5e6f_0000_4000_8000_00000000000c.slice")))
	clk.now = t0.Add(time.Second)
	_, err = s.Scrape(context.Background())
	require.NoError(t, err)
	assert.Len(t, s.series, before-2, "the pod and its container are forgotten")
}

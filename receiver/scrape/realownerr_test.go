// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// recordingTB is a testing.TB whose failures are recorded, not acted on.
type recordingTB struct {
	testing.TB
	errors []string
	failed bool
}

func (r *recordingTB) Helper()                   {}
func (r *recordingTB) Logf(string, ...any)       {}
func (r *recordingTB) Errorf(f string, a ...any) { r.errors = append(r.errors, fmt.Sprintf(f, a...)) }
func (r *recordingTB) FailNow()                  { r.failed = true }

// TestRealOwnScrapeErrorFailsTheTest: the whole-machine scrape tests ignore
// scrape errors about other containers (a real node's, other tests'), never
// about their own. A real container whose memory cgroup vanishes (removed
// here, as a dying container's would be) gives a real partial scrape error
// naming it: the helper the real scrape tests use (mustScrape:
// machine.RequireNoOwnErrors) fails a test that owns the container, and
// only logs it for a test that does not.
func TestRealOwnScrapeErrorFailsTheTest(t *testing.T) {
	machine.Lock(t)
	c := cgrouptest.NewContainer(t, "burstable")
	mem := c.Dir("memory")
	if cgrouptest.V2() {
		t.Skip("v1 or hybrid machine needed: the test removes one hierarchy's cgroup of the container")
	}
	s := startRealScraper(t)
	mustScrape(t, s, c) // intact: no error about it

	require.NoError(t, os.Remove(mem), "remove the container's memory cgroup")
	_, err := s.Scrape(context.Background())
	require.Error(t, err)
	require.True(t, scrapererror.IsPartialScrapeError(err), "a vanished cgroup is a partial error: %v", err)
	own := machine.OwnErrors(err, c.ID, c.PodUID)
	require.NotEmpty(t, own, "the error about the test's own container is kept: %v", err)
	for _, e := range own {
		assert.Contains(t, e.Error(), "container "+c.ID, "only errors about the own container here (no node error): %v", e)
	}

	owner := &recordingTB{TB: t}
	machine.RequireNoOwnErrors(owner, err, c.ID, c.PodUID)
	assert.True(t, owner.failed, "the owner of the container fails")
	require.NotEmpty(t, owner.errors)
	assert.True(t, strings.Contains(strings.Join(owner.errors, "\n"), c.ID), "the failure names the container: %v", owner.errors)

	bystander := &recordingTB{TB: t}
	machine.RequireNoOwnErrors(bystander, err, cgrouptest.NewContainer(t, "besteffort").ID)
	assert.False(t, bystander.failed, "a test that does not own the container does not fail on it: %v", bystander.errors)
}

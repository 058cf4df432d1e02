//go:build realmachine

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
// about their own. A real container whose cgroup vanishes mid-scrape (the
// scrape's first read of one of its files removes it in every hierarchy, as
// a container that exits then would) gives a real partial scrape error
// naming it: the helper the real scrape tests use (mustScrape:
// machine.RequireNoOwnErrors) fails a test that owns the container, and
// only logs it for a test that does not.
func TestRealOwnScrapeErrorFailsTheTest(t *testing.T) {
	machine.Lock(t)
	c := cgrouptest.NewContainer(t, "burstable")
	var once sync.Once
	removed := make(chan []string, 1)
	s := New(newSettings(), Options{
		Host: testHost("/"), NodeName: "real", MetricsBuilderConfig: defaultMBC(),
		TraceRead: func(path string) {
			if !strings.Contains(path, c.ID) {
				return
			}
			once.Do(func() {
				dirs, _ := filepath.Glob(filepath.Join(cgrouptest.Base, "*", c.Rel))
				var gone []string
				for _, d := range dirs {
					if os.Remove(d) == nil {
						gone = append(gone, d)
					}
				}
				removed <- gone
			})
		},
	})
	require.NoError(t, s.Start(context.Background(), nil))
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })

	_, err := s.Scrape(context.Background())
	select {
	case gone := <-removed:
		require.NotEmpty(t, gone, "the container's cgroup was removed mid-scrape")
	default:
		t.Fatal("the scrape never read the container's files")
	}
	require.Error(t, err, "a cgroup that vanished mid-scrape is an error")
	require.True(t, scrapererror.IsPartialScrapeError(err), "a vanished cgroup is a partial error: %v", err)
	own := machine.OwnErrors(err, c.ID, c.PodUID)
	require.NotEmpty(t, own, "the error about the test's own container is kept: %v", err)
	found := false
	for _, e := range own {
		found = found || strings.Contains(e.Error(), "container "+c.ID)
	}
	assert.True(t, found, "an error names the own container: %v", own)

	owner := &recordingTB{TB: t}
	machine.RequireNoOwnErrors(owner, err, c.ID, c.PodUID)
	assert.True(t, owner.failed, "the owner of the container fails")
	assert.Contains(t, strings.Join(owner.errors, "\n"), c.ID, "the failure names the container")

	// A test owning something else fails only if the scrape had errors
	// about its own entities or about nobody; about this container, never.
	other := cgrouptest.NewContainer(t, "besteffort")
	bystander := &recordingTB{TB: t}
	machine.RequireNoOwnErrors(bystander, err, other.ID, other.PodUID)
	for _, e := range bystander.errors {
		assert.NotContains(t, e, c.ID, "a bystander failed on the other test's container")
	}
}

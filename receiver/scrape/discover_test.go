// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/scraper/scrapererror"
)

const besteffortRel = "/kubepods.slice/kubepods-besteffort.slice" // holds pod 2b3c and container c3 (v2-systemd)

// startTimes returns the start time of every cumulative point of the
// resources with attr=val.
func startTimes(m pmetric.Metrics, attr, val string) map[pcommon.Timestamp]bool {
	out := map[pcommon.Timestamp]bool{}
	eachMetric(m, attr, val, func(x pmetric.Metric) {
		if x.Type() != pmetric.MetricTypeSum {
			return
		}
		for k := 0; k < x.Sum().DataPoints().Len(); k++ {
			out[x.Sum().DataPoints().At(k).StartTimestamp()] = true
		}
	})
	return out
}

// checkUnlisted runs three scrapes: a clean one, one during which
// fault makes the besteffort QoS directory unreadable, and a clean one
// again. The middle one must be a partial error naming the directory and
// the errno, counting the points of the pod and container below it; those
// two are not forgotten: after the fault their cumulative points keep the
// first scrape's start time and the container's CPU usage rate comes back
// at once (its last CPU sample was kept).
func checkUnlisted(t *testing.T, root string, fault func(s *Scraper, scrape func() (pmetric.Metrics, error)) (pmetric.Metrics, error), errno string) {
	clk := &fakeClock{now: t0}
	s := newTestScraper(t, root, false, clk)
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, points(m, "container.id", v2Ctr3))
	want := startTimes(m, "container.id", v2Ctr3)
	require.Equal(t, map[pcommon.Timestamp]bool{pcommon.NewTimestampFromTime(t0): true}, want)

	clk.now = t0.Add(10 * time.Second)
	bumpCPU(t, root)
	m, err = fault(s, func() (pmetric.Metrics, error) { return s.Scrape(context.Background()) })
	require.Error(t, err, "a directory that cannot be listed is not silently skipped")
	require.True(t, scrapererror.IsPartialScrapeError(err), "%v", err)
	assert.Contains(t, err.Error(), filepath.Join(root, "sys/fs/cgroup", besteffortRel))
	assert.Contains(t, err.Error(), errno)
	var pe scrapererror.PartialScrapeError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, seriesPoints(s, kindPod, victimPod)+seriesPoints(s, kindContainer, v2Ctr3), pe.Failed,
		"the points of the pod and container below the directory")
	assert.Empty(t, points(m, "container.id", v2Ctr3))
	assert.Empty(t, points(m, "k8s.pod.uid", victimPod))
	assert.NotEmpty(t, points(m, "container.id", v2Ctr1), "the rest of the tree is scraped")
	assert.Contains(t, s.series, seriesKey{kind: kindContainer, id: v2Ctr3}, "not evicted as gone")
	assert.Contains(t, s.series, seriesKey{kind: kindPod, id: victimPod}, "not evicted as gone")

	clk.now = t0.Add(20 * time.Second)
	bumpCPU(t, root)
	m, err = s.Scrape(context.Background())
	require.NoError(t, err)
	assert.Equal(t, want, startTimes(m, "container.id", v2Ctr3), "no start-time reset")
	assert.Equal(t, map[pcommon.Timestamp]bool{pcommon.NewTimestampFromTime(t0): true}, startTimes(m, "k8s.pod.uid", victimPod))
	assert.Contains(t, points(m, "container.id", v2Ctr3), "container.cpu.usage", "the last CPU sample survived")
}

// TestScrapeListingErrorInjected: EIO, EMFILE and EACCES injected on the
// listing of one QoS directory.
func TestScrapeListingErrorInjected(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EIO, syscall.EMFILE, syscall.EACCES} {
		t.Run(errno.Error(), func(t *testing.T) {
			root := copyFixture(t, "v2-systemd")
			dir := filepath.Join(root, "sys/fs/cgroup", besteffortRel)
			checkUnlisted(t, root, func(s *Scraper, scrape func() (pmetric.Metrics, error)) (pmetric.Metrics, error) {
				s.env.layout.SetListFault(func(d string) error {
					if d == dir {
						return &os.PathError{Op: "open", Path: d, Err: errno}
					}
					return nil
				})
				defer s.env.layout.SetListFault(nil)
				return scrape()
			}, errno.Error())
		})
	}
}

// TestScrapeUnreadableDirectory: a real mode-000 directory in a fixture
// tree. Root ignores permission bits, so as root the faulty scrape runs on a
// locked OS thread whose filesystem UID is nobody (setfsuid also drops
// CAP_DAC_OVERRIDE for that thread); the thread is discarded afterwards.
func TestScrapeUnreadableDirectory(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	// Let nobody reach the tree: t.TempDir's directories are 0700.
	for d := filepath.Dir(root); d != filepath.Dir(filepath.Dir(filepath.Dir(root))); d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	dir := filepath.Join(root, "sys/fs/cgroup", besteffortRel)
	checkUnlisted(t, root, func(_ *Scraper, scrape func() (pmetric.Metrics, error)) (pmetric.Metrics, error) {
		require.NoError(t, os.Chmod(dir, 0))
		defer func() { require.NoError(t, os.Chmod(dir, 0o755)) }()
		if os.Geteuid() != 0 {
			return scrape()
		}
		type result struct {
			m   pmetric.Metrics
			err error
		}
		done := make(chan result)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
			const nobody = 65534
			_, _, _ = syscall.RawSyscall(syscall.SYS_SETFSUID, nobody, 0, 0) // setfsuid reports no error: it returns the previous fsuid
			m, err := scrape()
			done <- result{m, err}
		}()
		r := <-done
		return r.m, r.err
	}, "permission denied")
}

// TestScrapeStopsWhenContextEnds: the scrape's context ending half-way (a
// timeout) stops the walk: no further container or pod is read, one partial
// error counts the points of those left out and names the cause, and their
// state is kept (no start-time reset on the next scrape).
func TestScrapeStopsWhenContextEnds(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	clk := &fakeClock{now: t0}
	var cancel context.CancelFunc
	var after []string // files opened after the cancel
	var first string   // the file whose read cancelled: the container being read
	cancelled := false
	containerDir := filepath.Join(root, "sys/fs/cgroup/kubepods.slice")
	s := New(newSettings(), Options{
		Host: testHost(root), NodeName: "node-1", MetricsBuilderConfig: defaultMBC(), Now: clk.Now,
		TraceRead: func(p string) {
			switch {
			case cancelled:
				after = append(after, p)
			case cancel != nil && strings.HasPrefix(p, containerDir) && strings.Contains(p, ".scope/"):
				cancel() // during the first container's reads
				cancelled, first = true, p
			}
		},
	})
	require.NoError(t, s.Start(context.Background(), nil))
	defer func() { require.NoError(t, s.Shutdown(context.Background())) }()
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	containers := len(s.series) - 1 - 3 - 3 // the node, its 3 system containers and 3 pods
	require.Equal(t, 4, containers)
	starts := startTimes(m, "container.id", v2Ctr3)

	ctx, c := context.WithCancel(context.Background())
	cancel = c
	clk.now = t0.Add(10 * time.Second)
	_, err = s.Scrape(ctx)
	require.True(t, cancelled)
	require.Error(t, err)
	require.True(t, scrapererror.IsPartialScrapeError(err), "%v", err)
	assert.Contains(t, err.Error(), "scrape stopped before 3 of 4 containers and 3 of 3 pods: context canceled")
	var pe scrapererror.PartialScrapeError
	require.ErrorAs(t, err, &pe)
	want := 0 // what the 3 unread containers and 3 pods cost: each its families' points
	for k := range s.series {
		if k.kind == kindPod || k.kind == kindContainer && !strings.Contains(first, k.id) {
			want += seriesPoints(s, k.kind, k.id)
		}
	}
	assert.Equal(t, want, pe.Failed)
	for _, p := range after {
		assert.True(t, strings.HasPrefix(p, filepath.Join(root, victimDir)+"/") || strings.HasPrefix(p, filepath.Join(root, "proc")+"/"),
			"only the container being read finishes: %s", p)
	}
	assert.Len(t, s.series, 1+3+3+4, "nothing evicted")

	clk.now = t0.Add(20 * time.Second)
	cancel = nil
	m, err = s.Scrape(context.Background())
	require.NoError(t, err)
	assert.Equal(t, starts, startTimes(m, "container.id", v2Ctr3), "no start-time reset")
}

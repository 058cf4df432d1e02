// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/fsstats"
	"github.com/containerstats/containerstatsreceiver/internal/opt"
)

// fakeFS is a Filesystem with a fixed snapshot and node statfs.
type fakeFS struct {
	snap    *fsstats.Snapshot
	node    fsstats.Space
	nodeErr error
	started int
	stopped int
}

func (f *fakeFS) Snapshot() *fsstats.Snapshot    { return f.snap }
func (f *fakeFS) NodeFS() (fsstats.Space, error) { return f.node, f.nodeErr }
func (f *fakeFS) Start(context.Context) error    { f.started++; return nil }
func (f *fakeFS) Shutdown(context.Context) error { f.stopped++; return nil }
func u(v uint64) opt.Value[uint64]               { return opt.Some(v) }
func onlyFilesystem(m pmetric.Metrics) pmetric.Metrics {
	return onlyMetrics(m, "filesystem", "ephemeral_storage")
}

// onlyMetrics keeps the metrics whose name contains one of parts.
func onlyMetrics(m pmetric.Metrics, parts ...string) pmetric.Metrics {
	out := pmetric.NewMetrics()
	m.CopyTo(out)
	out.ResourceMetrics().RemoveIf(func(rm pmetric.ResourceMetrics) bool {
		rm.ScopeMetrics().RemoveIf(func(sm pmetric.ScopeMetrics) bool {
			sm.Metrics().RemoveIf(func(x pmetric.Metric) bool {
				return !slices.ContainsFunc(parts, func(p string) bool { return strings.Contains(x.Name(), p) })
			})
			return sm.Metrics().Len() == 0
		})
		return rm.ScopeMetrics().Len() == 0
	})
	return out
}

// fixtureFS gives every container of the layout a writable layer with
// distinct values, in sorted ID order: the first has bytes only (its
// runtime had not measured inodes), the second nothing at all (0 with
// timestamp 0: absent), the rest both. Two image filesystems: one statted,
// one whose mountpoint cannot be statted (usage only).
func fixtureFS(t *testing.T, root string, standalone bool) *fakeFS {
	t.Helper()
	l, err := cgroupfs.Detect(root)
	require.NoError(t, err)
	tree, err := l.Discover(standalone)
	require.NoError(t, err)
	var ids []string
	for _, c := range tree.Containers {
		ids = append(ids, c.ContainerID)
	}
	sort.Strings(ids)
	layers := map[string]fsstats.Usage{}
	for i, id := range ids {
		switch i {
		case 0:
			layers[id] = fsstats.Usage{Bytes: u(4096*1031 + 7)}
		case 1:
			layers[id] = fsstats.Usage{}
		default:
			layers[id] = fsstats.Usage{Bytes: u(uint64(8388608*i + 11*i)), Inodes: u(uint64(37 + i))}
		}
	}
	return &fakeFS{
		snap: &fsstats.Snapshot{
			Layers: layers,
			Images: []fsstats.Image{
				{ImageFS: fsstats.ImageFS{Mountpoint: "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs", Usage: fsstats.Usage{Bytes: u(2147483659), Inodes: u(40961)}},
					Space: opt.Some(fsstats.Space{Capacity: 53687091201, Available: 21474836483})},
				{ImageFS: fsstats.ImageFS{Mountpoint: "/mnt/images", Usage: fsstats.Usage{Bytes: u(1073741831)}}},
			},
			Logs: map[fsstats.LogDir]uint64{
				{PodUID: uidBu, Container: "nginx"}:   1543,
				{PodUID: uidBu, Container: "sidecar"}: 0,
				{PodUID: uidBe, Container: "other"}:   991,
			},
		},
		node: fsstats.Space{Capacity: 107374182407, Available: 42949672967, Used: 64424509447, Inodes: u(6553603), InodesFree: u(5242883)},
	}
}

// TestScrapeGoldenFilesystem: the filesystem metrics of every layout
// (only they are in the golden files) with a fake background snapshot:
// writable layers by container ID, log sizes by pod UID and container
// name (v1-cgroupfs, whose identity names containers), node and image
// filesystems. The scraper starts and stops the collection.
func TestScrapeGoldenFilesystem(t *testing.T) {
	for _, lt := range layouts {
		t.Run(lt.name, func(t *testing.T) {
			root := copyFixture(t, lt.name)
			clk := &fakeClock{now: t0}
			ffs := fixtureFS(t, root, lt.standalone)
			s := startScraper(t, root, lt.standalone, clk, func(o *Options) {
				o.Filesystem = ffs
				if lt.name == "v1-cgroupfs" {
					o.Identity = fullIdentity()
				}
			})
			assert.Equal(t, 1, ffs.started)
			got := twoScrapes(t, s, root, clk)
			requireGolden(t, filepath.Join("..", "..", "testdata", "golden", "filesystem-"+lt.name+".yaml"), onlyFilesystem(got))
			require.NoError(t, s.Shutdown(context.Background()))
			assert.Equal(t, 1, ffs.stopped)
		})
	}
}

// TestScrapeFilesystemAbsent: an empty snapshot (no runtime, before the
// first collection) has no container or image points, never zeros; the
// node statfs still reports.
func TestScrapeFilesystemAbsent(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	clk := &fakeClock{now: t0}
	ffs := &fakeFS{snap: &fsstats.Snapshot{}, node: fsstats.Space{Capacity: 3, Available: 2, Used: 1}}
	s := startScraper(t, root, false, clk, func(o *Options) { o.Filesystem = ffs })
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	names := fsMetricNames(onlyFilesystem(m))
	assert.ElementsMatch(t, []string{"k8s.node.filesystem.capacity", "k8s.node.filesystem.available", "k8s.node.filesystem.usage"}, names)
}

// TestScrapeFilesystemNodeError: a failed node statfs is one partial error
// naming the node, counting its points; the rest of the scrape stays.
func TestScrapeFilesystemNodeError(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	clk := &fakeClock{now: t0}
	ffs := &fakeFS{snap: &fsstats.Snapshot{}, nodeErr: errors.New("statfs /x: permission denied")}
	s := startScraper(t, root, false, clk, func(o *Options) { o.Filesystem = ffs })
	m, err := s.Scrape(context.Background())
	require.Error(t, err)
	var pe scrapererror.PartialScrapeError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 5, pe.Failed, "capacity, available, usage, inodes, free inodes")
	assert.Contains(t, err.Error(), "node: filesystem: statfs /x")
	assert.Positive(t, m.DataPointCount())
	assert.Empty(t, fsMetricNames(onlyFilesystem(m)))
}

// TestScrapeFilesystemRealCollector runs the real collector (no runtime)
// on a fixture with a log directory: the container's log size appears once
// the background collection has run.
func TestScrapeFilesystemRealCollector(t *testing.T) {
	root := copyFixture(t, "v1-cgroupfs")
	dir := filepath.Join(root, "var/log/pods", "shop_web-0_"+uidBu, "nginx")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "3.log"), make([]byte, 1237), 0o644))
	col := fsstats.New(fsstats.Config{Root: root, Interval: time.Hour, Timeout: time.Second})
	clk := &fakeClock{now: t0}
	s := startScraper(t, root, false, clk, func(o *Options) { o.Filesystem = col; o.Identity = fullIdentity() })
	require.Eventually(t, func() bool { return len(col.Snapshot().Logs) > 0 }, 10*time.Second, 5*time.Millisecond)
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	rm, found := containerRM(m, idA1)
	require.True(t, found)
	v, ok := intPoint(rm, "k8s.container.ephemeral_storage.usage", "logs")
	require.True(t, ok)
	assert.Equal(t, int64(1237), v)
	_, ok = intPoint(rm, "container.filesystem.usage", "")
	assert.False(t, ok, "no runtime: no writable layer point")
	_, ok = intPoint(rm, "k8s.container.ephemeral_storage.usage", "rootfs")
	assert.False(t, ok, "no runtime: no rootfs part")
}

func fsMetricNames(m pmetric.Metrics) []string {
	seen := map[string]bool{}
	var out []string
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		sms := m.ResourceMetrics().At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			for k := 0; k < sms.At(j).Metrics().Len(); k++ {
				if n := sms.At(j).Metrics().At(k).Name(); !seen[n] {
					seen[n] = true
					out = append(out, n)
				}
			}
		}
	}
	return out
}

// intPoint is the int value of metric name (a gauge or a sum) on rm: its
// first point, or with fsType set the point of that
// k8s.container.ephemeral_storage.fs_type.
func intPoint(rm pmetric.ResourceMetrics, name, fsType string) (int64, bool) {
	sms := rm.ScopeMetrics()
	for j := 0; j < sms.Len(); j++ {
		for k := 0; k < sms.At(j).Metrics().Len(); k++ {
			x := sms.At(j).Metrics().At(k)
			if x.Name() != name {
				continue
			}
			dps := numberPoints(x)
			for l := 0; l < dps.Len(); l++ {
				if v, _ := dps.At(l).Attributes().Get("k8s.container.ephemeral_storage.fs_type"); fsType == "" || v.Str() == fsType {
					return dps.At(l).IntValue(), true
				}
			}
		}
	}
	return 0, false
}

func containerRM(m pmetric.Metrics, id string) (pmetric.ResourceMetrics, bool) {
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		if v, ok := rm.Resource().Attributes().Get("container.id"); ok && v.Str() == id {
			return rm, true
		}
	}
	return pmetric.ResourceMetrics{}, false
}

// numberPoints is the number data points of a gauge or a sum; none for
// another type.
func numberPoints(x pmetric.Metric) pmetric.NumberDataPointSlice {
	switch x.Type() {
	case pmetric.MetricTypeGauge:
		return x.Gauge().DataPoints()
	case pmetric.MetricTypeSum:
		return x.Sum().DataPoints()
	}
	return pmetric.NewNumberDataPointSlice()
}

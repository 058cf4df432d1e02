// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/scraper/scrapererror"

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
	return onlyMetrics(m, "filesystem", "ephemeral_storage", "volume")
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
// timestamp 0: absent; so its pod's ephemeral storage is absent too) where
// the layout has more than two containers, the rest both. Two image
// filesystems: one statted, one whose mountpoint cannot be statted (usage
// only). The pods' volumes
// are the real collection's of the layout's
// var/lib/kubelet/pods (fixtureVolumes).
func fixtureFS(t *testing.T, root string, standalone bool) *fakeFS {
	t.Helper()
	_, cts, _ := layoutContainers(t, root, standalone)
	ids := make([]string, len(cts))
	for i, c := range cts {
		ids[i] = c.ContainerID
	}
	logs := map[fsstats.LogDir]uint64{
		{PodUID: uidBu, Container: "nginx"}:   1543,
		{PodUID: uidBu, Container: "sidecar"}: 0,
		{PodUID: uidBe, Container: "other"}:   991,
	}
	logsAlloc := map[fsstats.LogDir]uint64{
		{PodUID: uidBu, Container: "nginx"}:   4096,
		{PodUID: uidBu, Container: "sidecar"}: 0,
		{PodUID: uidBe, Container: "other"}:   1024 * 3,
	}
	// The log directories of layoutIdentity's names (ctr-<i>, in the same
	// order), from the third container on: the first two have none.
	for i, c := range cts {
		if c.PodUID != "" && i >= 2 {
			d := fsstats.LogDir{PodUID: c.PodUID, Container: layoutName(i)}
			logs[d], logsAlloc[d] = uint64(2000+17*i), uint64(4096*(i+1))
		}
	}
	layers := map[string]fsstats.Usage{}
	for i, id := range ids {
		switch i {
		case 0:
			layers[id] = fsstats.Usage{Bytes: u(4096*1031 + 7)}
		case 1:
			if len(ids) > 2 {
				layers[id] = fsstats.Usage{}
				break
			}
			layers[id] = fsstats.Usage{Bytes: u(4096*2063 + 5), Inodes: u(29)}
		default:
			layers[id] = fsstats.Usage{Bytes: u(uint64(8388608*i + 11*i)), Inodes: u(uint64(37 + i))}
		}
	}
	return &fakeFS{
		snap: &fsstats.Snapshot{
			Layers: layers,
			Images: []fsstats.Image{
				{
					ImageFS: fsstats.ImageFS{Mountpoint: "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs", Usage: fsstats.Usage{Bytes: u(2147483659), Inodes: u(40961)}},
					Space:   opt.Some(fsstats.Space{Capacity: 53687091201, Available: 21474836483}),
				},
				{ImageFS: fsstats.ImageFS{Mountpoint: "/mnt/images", Usage: fsstats.Usage{Bytes: u(1073741831)}}},
			},
			Logs:             logs,
			LogsAllocated:    logsAlloc,
			PodLogsAllocated: map[string]uint64{uidBu: 512 * 3, uidBe: 0},
			Volumes:          fixtureVolumes(t, root),
		},
		node: fsstats.Space{Capacity: 107374182407, Available: 42949672967, Used: 64424509447, Inodes: u(6553603), InodesFree: u(5242883)},
	}
}

// fixtureVolumes runs the real volume collection on the layout's
// var/lib/kubelet/pods with a deterministic statfs and lstat: each path's
// statfs has its own distinct values (from a hash of the path under root);
// secret, projected and downwardAPI volumes and emptyDirs named mem-* are
// tmpfs mounts (their own device, statfs type tmpfs); files take whole
// 4 KiB blocks, directories one, links none, whatever the test machine's
// filesystem.
func fixtureVolumes(t *testing.T, root string) map[string]*fsstats.PodVolumes {
	t.Helper()
	memory := func(p string) bool {
		rel, _ := filepath.Rel(root, p)
		parts := strings.Split(rel, string(filepath.Separator))
		// var/lib/kubelet/pods/<uid>/volumes/<plugin>/<name>/...
		if len(parts) < 8 || parts[5] != "volumes" {
			return false
		}
		return parts[6] == "kubernetes.io~secret" || parts[6] == "kubernetes.io~projected" || parts[6] == "kubernetes.io~downward-api" ||
			parts[6] == "kubernetes.io~empty-dir" && strings.HasPrefix(parts[7], "mem-")
	}
	statfs := func(p string) (fsstats.Space, error) {
		if _, err := os.Stat(p); err != nil {
			return fsstats.Space{}, err
		}
		rel, _ := filepath.Rel(root, p)
		h := uint64(crc32.ChecksumIEEE([]byte(rel)) % 100000)
		sp := fsstats.Space{
			Type: 0xEF53, Capacity: 107374182400 + h*4096, Available: 53687091200 + h*4096 + 1, Used: 42949672960 + h*4096 + 2,
			Inodes: u(6553600 + 3*h), InodesFree: u(5242880 + h + 3),
		}
		if memory(p) {
			sp = fsstats.Space{
				Type: fsstats.TmpfsMagic, Capacity: 8589934592 + h*4096, Available: 8589934592 + h*4096 - 12288, Used: 12288,
				Inodes: u(2000000 + 3*h), InodesFree: u(1999990 + h),
			}
		}
		return sp, nil
	}
	lstat := func(p string) (fsstats.FileStat, error) {
		st, err := fsstats.Lstat(p)
		if err != nil {
			return st, err
		}
		switch {
		case st.Regular:
			st.Blocks = uint64((st.Size+4095)/4096) * 8
		case st.Dir:
			st.Blocks = 8
		default:
			st.Blocks = 0
		}
		if memory(p) {
			st.Dev += 1000
		}
		return st, nil
	}
	col := fsstats.New(fsstats.Config{Root: root, NoLogs: true, Statfs: statfs, Lstat: lstat})
	col.Collect(context.Background(), nil)
	return col.Snapshot().Volumes
}

// TestScrapeGoldenFilesystem: the filesystem metrics of every layout
// (only they are in the golden files) with a fake background snapshot:
// writable layers by container ID, log sizes by pod UID and container
// name (the layout's identity, identityFor, names containers), node and image
// filesystems. The scraper starts and stops the collection.
func TestScrapeGoldenFilesystem(t *testing.T) {
	for _, lt := range layouts {
		t.Run(lt.name, func(t *testing.T) {
			root := copyFixture(t, lt.name)
			clk := &fakeClock{now: t0}
			ffs := fixtureFS(t, root, lt.standalone)
			s := startScraper(t, root, lt.standalone, clk, func(o *Options) {
				o.Filesystem = ffs
				o.Identity = identityFor(t, lt.name, root, lt.standalone)
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
// first collection) has no container, image, volume or pod points, never
// zeros; the node statfs still reports.
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
	require.NoError(t, os.WriteFile(filepath.Join(dir, "3.log"), make([]byte, 1237), 0o600))
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

// podRM is the resource of pod uid (not one of its containers').
func podRM(m pmetric.Metrics, uid string) (pmetric.ResourceMetrics, bool) {
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		attrs := rm.Resource().Attributes()
		v, ok := attrs.Get("k8s.pod.uid")
		if _, ctr := attrs.Get("container.id"); ok && !ctr && v.Str() == uid {
			return rm, true
		}
	}
	return pmetric.ResourceMetrics{}, false
}

// volumePoints is every point of metric name on rm by k8s.volume.name,
// with its k8s.volume.type ("-" when absent).
func volumePoints(rm pmetric.ResourceMetrics, name string) map[string]string {
	out := map[string]string{}
	sms := rm.ScopeMetrics()
	for j := 0; j < sms.Len(); j++ {
		for k := 0; k < sms.At(j).Metrics().Len(); k++ {
			x := sms.At(j).Metrics().At(k)
			if x.Name() != name {
				continue
			}
			dps := numberPoints(x)
			for l := 0; l < dps.Len(); l++ {
				n, _ := dps.At(l).Attributes().Get("k8s.volume.name")
				typ := "-"
				if v, ok := dps.At(l).Attributes().Get("k8s.volume.type"); ok {
					typ = v.Str()
				}
				out[n.Str()] = typ + "=" + strconv.FormatInt(dps.At(l).IntValue(), 10)
			}
		}
	}
	return out
}

// TestScrapePodEphemeralStorage: k8s.pod.filesystem.usage is the sum the
// kubelet makes, part by part (v1-cgroupfs: pod Bu runs nginx and
// sidecar, Be batch, Gu only its sandbox d4, which is not counted), and
// absent, not partial, when one part is unknown; capacity and available
// are the node filesystem's; volumes carry their type when it has one.
func TestScrapePodEphemeralStorage(t *testing.T) {
	node := fsstats.Space{Capacity: 107374182407, Available: 42949672967, Used: 64424509447}
	snapshot := func() *fsstats.Snapshot {
		return &fsstats.Snapshot{
			Layers: map[string]fsstats.Usage{
				idA1: {Bytes: u(1000003)}, idB2: {Bytes: u(20000017)}, idC3: {Bytes: u(300000029)}, idD4: {Bytes: u(7777)},
			},
			Images: []fsstats.Image{{
				ImageFS: fsstats.ImageFS{Mountpoint: "/var/lib/containerd/x"},
				Space:   opt.Some(fsstats.Space{Capacity: 53687091201, Available: 21474836483}),
			}},
			Logs: map[fsstats.LogDir]uint64{},
			LogsAllocated: map[fsstats.LogDir]uint64{
				{PodUID: uidBu, Container: "nginx"}: 40961, {PodUID: uidBu, Container: "sidecar"}: 409603, {PodUID: uidBe, Container: "batch"}: 4096007,
			},
			PodLogsAllocated: map[string]uint64{uidBu: 512, uidBe: 0},
			Volumes: map[string]*fsstats.PodVolumes{
				uidBu: {Ephemeral: u(50000021), Volumes: []fsstats.Volume{
					{
						Name: "cache", Type: fsstats.TypeEmptyDir, Space: opt.Some(fsstats.Space{Capacity: 1001, Available: 1002, Inodes: u(1003), InodesFree: u(1004)}),
						Used: u(50000021 - 4096), InodesUsed: u(1005), Ephemeral: true,
					},
					{Name: "kube-api-access", Space: opt.Some(fsstats.Space{Capacity: 2001, Available: 2002}), Used: u(2006), Memory: true},
				}},
				uidBe: {Volumes: []fsstats.Volume{{Name: "scratch", Type: fsstats.TypeEmptyDir, Ephemeral: true}}},
				uidGu: {Ephemeral: u(4096)},
			},
		}
	}
	sandboxes := false
	scrape := func(snap *fsstats.Snapshot) pmetric.Metrics {
		root := copyFixture(t, "v1-cgroupfs")
		ffs := &fakeFS{snap: snap, node: node}
		s := startScraper(t, root, false, &fakeClock{now: t0}, func(o *Options) {
			o.Filesystem = ffs
			o.Identity = fullIdentity()
			o.IncludeSandboxes = sandboxes
		})
		m, err := s.Scrape(context.Background())
		require.NoError(t, err)
		return m
	}
	usage := func(m pmetric.Metrics, uid string) (int64, bool) {
		rm, ok := podRM(m, uid)
		require.True(t, ok, uid)
		return intPoint(rm, "k8s.pod.filesystem.usage", "")
	}

	m := scrape(snapshot())
	v, ok := usage(m, uidBu)
	require.True(t, ok)
	assert.Equal(t, int64(1000003+20000017+40961+409603+512+50000021), v, "layers + logs + pod logs + ephemeral volumes and etc-hosts")
	_, ok = usage(m, uidBe)
	assert.False(t, ok, "Be's emptyDir has no usage: no sum")
	v, ok = usage(m, uidGu)
	require.True(t, ok)
	assert.Equal(t, int64(4096), v, "Gu: etc-hosts only, its sandbox's layer not counted")
	for _, uid := range []string{uidBu, uidBe, uidGu} {
		rm, _ := podRM(m, uid)
		c, found := intPoint(rm, "k8s.pod.filesystem.capacity", "")
		assert.True(t, found)
		assert.Equal(t, int64(node.Capacity), c)
		a, _ := intPoint(rm, "k8s.pod.filesystem.available", "")
		assert.Equal(t, int64(node.Available), a)
	}
	rm, _ := podRM(m, uidBu)
	assert.Equal(t, map[string]string{"cache": "emptyDir=" + strconv.Itoa(50000021-4096), "kube-api-access": "-=2006"}, volumePoints(rm, "k8s.pod.volume.usage"))
	assert.Equal(t, map[string]string{"cache": "emptyDir=1001", "kube-api-access": "-=2001"}, volumePoints(rm, "k8s.pod.volume.capacity"))
	assert.Equal(t, map[string]string{"cache": "emptyDir=1002", "kube-api-access": "-=2002"}, volumePoints(rm, "k8s.pod.volume.available"))
	assert.Equal(t, map[string]string{"cache": "emptyDir=1003"}, volumePoints(rm, "k8s.pod.volume.inode.count"), "no inode table: no point")
	assert.Equal(t, map[string]string{"cache": "emptyDir=1004"}, volumePoints(rm, "k8s.pod.volume.inode.free"))
	assert.Equal(t, map[string]string{"cache": "emptyDir=1005"}, volumePoints(rm, "k8s.pod.volume.inode.used"))
	rm, _ = podRM(m, uidBe)
	assert.Empty(t, volumePoints(rm, "k8s.pod.volume.usage"), "not walked: no usage, never 0")
	assert.Empty(t, volumePoints(rm, "k8s.pod.volume.capacity"), "not statted")
	ctr, ok := containerRM(m, idA1)
	require.True(t, ok)
	c, ok := intPoint(ctr, "container.filesystem.capacity", "")
	require.True(t, ok)
	assert.Equal(t, int64(53687091201), c)
	a, _ := intPoint(ctr, "container.filesystem.available", "")
	assert.Equal(t, int64(21474836483), a)

	for name, change := range map[string]func(*fsstats.Snapshot){
		"a container not measured":  func(s *fsstats.Snapshot) { s.Layers[idB2] = fsstats.Usage{} },
		"a container without layer": func(s *fsstats.Snapshot) { delete(s.Layers, idA1) },
		"no runtime":                func(s *fsstats.Snapshot) { s.Layers = nil },
		"no log walk":               func(s *fsstats.Snapshot) { s.LogsAllocated, s.PodLogsAllocated = nil, nil },
		"ephemeral volumes unknown": func(s *fsstats.Snapshot) { s.Volumes[uidBu].Ephemeral = opt.Value[uint64]{} },
		"no pod directory":          func(s *fsstats.Snapshot) { delete(s.Volumes, uidBu) },
	} {
		t.Run(name, func(t *testing.T) {
			snap := snapshot()
			change(snap)
			_, ok := usage(scrape(snap), uidBu)
			assert.False(t, ok, "absent, not a partial sum")
		})
	}
	t.Run("no log directory is no log", func(t *testing.T) {
		snap := snapshot()
		delete(snap.LogsAllocated, fsstats.LogDir{PodUID: uidBu, Container: "sidecar"})
		v, ok := usage(scrape(snap), uidBu)
		require.True(t, ok)
		assert.Equal(t, int64(1000003+20000017+40961+512+50000021), v)
	})
	t.Run("sandboxes scraped, not counted", func(t *testing.T) {
		sandboxes = true
		defer func() { sandboxes = false }()
		m := scrape(snapshot())
		_, ok := containerRM(m, idD4)
		require.True(t, ok, "the sandbox is scraped")
		v, ok := usage(m, uidGu)
		require.True(t, ok)
		assert.Equal(t, int64(4096), v, "its writable layer is not the pod's")
	})
	t.Run("before the first volume collection", func(t *testing.T) {
		snap := snapshot()
		snap.Volumes = nil
		rm, ok := podRM(scrape(snap), uidGu)
		require.True(t, ok)
		assert.Empty(t, fsMetricNames(onlyMetrics(pmetricOf(rm), "k8s.pod.filesystem", "k8s.pod.volume")))
	})
}

// pmetricOf wraps one resource's metrics.
func pmetricOf(rm pmetric.ResourceMetrics) pmetric.Metrics {
	m := pmetric.NewMetrics()
	rm.CopyTo(m.ResourceMetrics().AppendEmpty())
	return m
}

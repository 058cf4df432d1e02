// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/filter"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/metadatatest"
)

// IDs and UIDs of the v1-cgroupfs and hybrid fixtures.
var (
	idA1   = strings.Repeat("a1", 32)
	idB2   = strings.Repeat("b2", 32)
	idC3   = strings.Repeat("c3", 32)
	idD4   = strings.Repeat("d4", 32)
	id18   = strings.Repeat("18", 32)
	uidBu  = "1a2b3c4d-0000-4000-8000-00000000000a"
	uidBe  = "2b3c4d5e-0000-4000-8000-00000000000b"
	uidGu  = "3c4d5e6f-0000-4000-8000-00000000000c"
	tStart = time.Date(2025, 12, 31, 23, 0, 0, 0, time.UTC)
)

// fakeIdentity is an in-memory Identity.
type fakeIdentity struct {
	containers map[string]identity.Container
	pods       map[string]identity.Pod
	sandboxes  map[string]bool
	prepared   [][]string
}

func (f *fakeIdentity) Prepare(_ context.Context, ids []string) { f.prepared = append(f.prepared, ids) }

func (f *fakeIdentity) Container(id, podUID string) (identity.Container, bool) {
	if c, ok := f.containers[id]; ok {
		return c, true
	}
	return identity.Container{ID: id, PodUID: podUID}, false
}

func (f *fakeIdentity) Pod(uid string) (identity.Pod, bool) {
	p, ok := f.pods[uid]
	return p, ok
}
func (f *fakeIdentity) IsSandbox(id string) bool { return f.sandboxes[id] }

// No runtime to ask: nothing pending, no listing, nothing to start.
func (f *fakeIdentity) Pending(string) bool             { return false }
func (f *fakeIdentity) Instances() []identity.Container { return nil }
func (f *fakeIdentity) Start(context.Context) error     { return nil }
func (f *fakeIdentity) Shutdown(context.Context) error  { return nil }

// fullIdentity gives every field a distinct value. d4 (the guaranteed pod's
// only container) is that pod's sandbox and is excluded by default.
func fullIdentity() *fakeIdentity {
	return &fakeIdentity{
		containers: map[string]identity.Container{
			idA1: {
				ID: idA1, Name: "nginx-a", ContainerName: "nginx", ImageName: "docker.io/library/nginx", ImageTag: "1.27.1", Runtime: "containerd",
				PodUID: uidBu, PodName: "web-0", Namespace: "shop", RestartCount: 3, HasRestart: true, StartTime: tStart.Add(1 * time.Second), Source: identity.SourceCRI,
			},
			idB2: {
				ID: idB2, Name: "sidecar-b", ContainerName: "sidecar", ImageName: "registry:5000/team/sidecar", ImageTag: "v7", Runtime: "containerd",
				PodUID: uidBu, PodName: "web-0", Namespace: "shop", RestartCount: 0, HasRestart: true, StartTime: tStart.Add(2 * time.Second), Source: identity.SourceCRI,
			},
			idC3: {
				ID: idC3, Name: "batch-c", ContainerName: "batch", ImageName: "quay.io/ops/batch", Runtime: "docker",
				PodUID: uidBe, PodName: "cron-9", Namespace: "ops", StartTime: tStart.Add(3 * time.Second), Source: identity.SourceContainerd,
			},
		},
		pods: map[string]identity.Pod{
			uidBu: {UID: uidBu, Name: "web-0", Namespace: "shop", Labels: map[string]string{"app": "web", "tier": "front"}, StartTime: tStart.Add(4 * time.Second), Source: identity.SourceCRI},
			uidBe: {UID: uidBe, Name: "cron-9", Namespace: "ops", Labels: map[string]string{"app": "cron"}, StartTime: tStart.Add(5 * time.Second), Source: identity.SourceContainerd},
			uidGu: {UID: uidGu, Name: "db-1", Namespace: "data", StartTime: tStart.Add(6 * time.Second), Source: identity.SourceCRI},
		},
		sandboxes: map[string]bool{idD4: true},
	}
}

func startScraper(t *testing.T, root string, standalone bool, clk *fakeClock, mod func(*Options)) *Scraper {
	t.Helper()
	o := Options{Host: testHost(root), NodeName: "node-1", StandaloneContainers: standalone, MetricsBuilderConfig: defaultMBC(), Now: clk.Now}
	mod(&o)
	s := New(newSettings(), o)
	require.NoError(t, s.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	return s
}

func twoScrapes(t *testing.T, s *Scraper, root string, clk *fakeClock) pmetric.Metrics {
	t.Helper()
	_, err := s.Scrape(context.Background())
	require.NoError(t, err)
	bumpCPU(t, root)
	clk.now = t0.Add(10 * time.Second)
	got, err := s.Scrape(context.Background())
	require.NoError(t, err)
	return got
}

// TestScrapeGoldenIdentity: full runtime identity, pod labels on; the
// sandbox d4 is not reported; start times are the runtime's.
func TestScrapeGoldenIdentity(t *testing.T) {
	root := copyFixture(t, "v1-cgroupfs")
	clk := &fakeClock{now: t0}
	fi := fullIdentity()
	s := startScraper(t, root, false, clk, func(o *Options) { o.Identity = fi; o.PodLabels = true })
	got := twoScrapes(t, s, root, clk)
	requireGolden(t, filepath.Join("..", "..", "testdata", "golden", "identity-v1-cgroupfs.yaml"), got)
	assert.Nil(t, findContainer(got, idD4), "sandbox excluded")
	require.Len(t, fi.prepared, 2)
	assert.ElementsMatch(t, []string{idA1, idB2, idC3, idD4}, fi.prepared[0])
}

// TestScrapeGoldenPodLogs: no runtime at all, the cache's /var/log/pods
// fallback gives namespace, pod and container names; start times are the
// first-seen times.
func TestScrapeGoldenPodLogs(t *testing.T) {
	root := copyFixture(t, "v1-cgroupfs")
	for _, d := range []string{
		"var/log/pods/shop_web-0_" + uidBu + "/nginx", "var/log/pods/shop_web-0_" + uidBu + "/sidecar",
		"var/log/pods/ops_cron-9_" + uidBe + "/batch", "var/log/containers",
	} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "var/log/containers/web-0_shop_sidecar-"+idB2+".log"), nil, 0o600))
	cache := identity.NewCache(identity.CacheConfig{PodLogs: identity.NewPodLogs(root)})
	clk := &fakeClock{now: t0}
	s := startScraper(t, root, false, clk, func(o *Options) { o.Identity = cache })
	got := twoScrapes(t, s, root, clk)
	requireGolden(t, filepath.Join("..", "..", "testdata", "golden", "identity-podlogs-v1-cgroupfs.yaml"), got)
	a1 := findContainer(got, idA1)
	require.NotNil(t, a1)
	_, hasName := a1.Get("k8s.container.name")
	assert.False(t, hasName, "two containers in the pod and no /var/log/containers link: name unknown, omitted")
}

// TestSameIDTwoPathsOneSeries: the hybrid fixture shows docker container
// 1818... under /docker/<id> and /system.slice/docker.service/docker/<id>;
// it is one series with the runtime's start time on both scrapes.
func TestSameIDTwoPathsOneSeries(t *testing.T) {
	root := copyFixture(t, "hybrid")
	for _, p := range []string{"sys/fs/cgroup/memory/docker/" + id18, "sys/fs/cgroup/memory/system.slice/docker.service/docker/" + id18} {
		_, err := os.Stat(filepath.Join(root, p))
		require.NoError(t, err, "fixture must show the ID twice")
	}
	fi := &fakeIdentity{containers: map[string]identity.Container{
		id18: {ID: id18, Name: "redis", ImageName: "docker.io/library/redis", ImageTag: "7.4", Runtime: "docker", StartTime: tStart, Source: identity.SourceContainerd},
	}}
	clk := &fakeClock{now: t0}
	s := startScraper(t, root, true, clk, func(o *Options) { o.Identity = fi })
	for i := 0; i < 2; i++ {
		m, err := s.Scrape(context.Background())
		require.NoError(t, err)
		n := 0
		forEachResource(m, func(rm pmetric.ResourceMetrics) {
			if v, ok := rm.Resource().Attributes().Get("container.id"); ok && v.Str() == id18 {
				n++
				assertStartTimes(t, rm, pcommon.NewTimestampFromTime(tStart))
			}
		})
		assert.Equal(t, 1, n, "scrape %d", i)
		clk.now = clk.now.Add(10 * time.Second)
	}
}

func TestExitedFilteredAndSwitches(t *testing.T) {
	root := copyFixture(t, "v1-cgroupfs")
	fi := fullIdentity()
	c := fi.containers[idB2]
	c.Exited = true
	fi.containers[idB2] = c
	ns, err := identity.CompileRules(nil, []filter.Config{{Strict: "ops"}})
	require.NoError(t, err)
	clk := &fakeClock{now: t0}
	s := startScraper(t, root, false, clk, func(o *Options) {
		o.Identity = fi
		o.Filter = identity.Filter{Namespaces: ns}
		o.NoNodeSeries = true
		o.IncludeSandboxes = true
	})
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	assert.NotNil(t, findContainer(m, idA1))
	assert.Nil(t, findContainer(m, idB2), "exited")
	assert.Nil(t, findContainer(m, idC3), "namespace ops excluded")
	assert.NotNil(t, findContainer(m, idD4), "sandboxes included on request")
	var pods []string
	nodes := 0
	forEachResource(m, func(rm pmetric.ResourceMetrics) {
		a := rm.Resource().Attributes()
		_, isCtr := a.Get("container.id")
		uid, isPod := a.Get("k8s.pod.uid")
		switch {
		case !isCtr && isPod:
			pods = append(pods, uid.Str())
		case !isCtr:
			nodes++
		}
	})
	assert.Zero(t, nodes, "node series off")
	assert.ElementsMatch(t, []string{uidBu, uidGu}, pods, "pod of namespace ops filtered")

	s2 := startScraper(t, root, false, clk, func(o *Options) { o.Identity = fi; o.NoPodSeries = true })
	m, err = s2.Scrape(context.Background())
	require.NoError(t, err)
	forEachResource(m, func(rm pmetric.ResourceMetrics) {
		a := rm.Resource().Attributes()
		_, isCtr := a.Get("container.id")
		_, isPod := a.Get("k8s.pod.uid")
		assert.False(t, isPod && !isCtr, "pod series off")
	})
}

func forEachResource(m pmetric.Metrics, fn func(pmetric.ResourceMetrics)) {
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		fn(m.ResourceMetrics().At(i))
	}
}

func findContainer(m pmetric.Metrics, id string) *pcommon.Map {
	var out *pcommon.Map
	forEachResource(m, func(rm pmetric.ResourceMetrics) {
		a := rm.Resource().Attributes()
		if v, ok := a.Get("container.id"); ok && v.Str() == id {
			out = &a
		}
	})
	return out
}

func assertStartTimes(t *testing.T, rm pmetric.ResourceMetrics, want pcommon.Timestamp) {
	t.Helper()
	checked := 0
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			if ms.At(j).Type() != pmetric.MetricTypeSum {
				continue
			}
			dps := ms.At(j).Sum().DataPoints()
			for k := 0; k < dps.Len(); k++ {
				assert.Equal(t, want, dps.At(k).StartTimestamp(), ms.At(j).Name())
				checked++
			}
		}
	}
	assert.NotZero(t, checked, "no cumulative point checked")
}

// TestTelemetry: containers by identity source and the scrape duration.
func TestTelemetry(t *testing.T) {
	root := copyFixture(t, "v1-cgroupfs")
	tt := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tt.Shutdown(context.Background())) })
	tb, err := metadata.NewTelemetryBuilder(metadatatest.NewSettings(tt).TelemetrySettings)
	require.NoError(t, err)
	fi := fullIdentity()
	delete(fi.containers, idC3) // c3: path only
	b2 := fi.containers[idB2]
	b2.Source = identity.SourceDocker // b2: the Docker Engine API
	fi.containers[idB2] = b2
	clk := &fakeClock{now: t0}
	s := startScraper(t, root, false, clk, func(o *Options) { o.Identity = fi; o.Telemetry = tb })
	_, err = s.Scrape(context.Background())
	require.NoError(t, err)
	metadatatest.AssertEqualContainerStatsContainers(t, tt, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("source", "path"))},
		{Value: 1, Attributes: attribute.NewSet(attribute.String("source", "cri"))},
		{Value: 0, Attributes: attribute.NewSet(attribute.String("source", "containerd"))},
		{Value: 1, Attributes: attribute.NewSet(attribute.String("source", "docker"))},
	}, metricdatatest.IgnoreTimestamp())
	m, err := tt.GetMetric("otelcol_container_stats_scrape_duration")
	require.NoError(t, err)
	h, ok := m.Data.(metricdata.Histogram[float64])
	require.True(t, ok)
	require.Len(t, h.DataPoints, 1)
	assert.EqualValues(t, 1, h.DataPoints[0].Count)
}

// The start time of a container's cumulative points never moves once it came
// from a runtime: not when the container was first seen path-only (it is
// replaced by the runtime's once), and not when a later scrape's identity
// comes from another source whose creation time differs slightly
// (containerd's CreatedAt vs CRI's, while CRI is down).
func TestStartTimeStableAcrossSources(t *testing.T) {
	root := copyFixture(t, "hybrid")
	fi := &fakeIdentity{containers: map[string]identity.Container{}}
	clk := &fakeClock{now: t0}
	s := startScraper(t, root, true, clk, func(o *Options) { o.Identity = fi })
	startOf := func() pcommon.Timestamp {
		m, err := s.Scrape(context.Background())
		require.NoError(t, err)
		clk.now = clk.now.Add(10 * time.Second)
		var got pcommon.Timestamp
		forEachResource(m, func(rm pmetric.ResourceMetrics) {
			if v, ok := rm.Resource().Attributes().Get("container.id"); ok && v.Str() == id18 {
				ms := rm.ScopeMetrics().At(0).Metrics()
				for i := 0; i < ms.Len(); i++ {
					if ms.At(i).Name() == "container.cpu.time" {
						got = ms.At(i).Sum().DataPoints().At(0).StartTimestamp()
					}
				}
			}
		})
		require.NotZero(t, got)
		return got
	}
	firstSeen := pcommon.NewTimestampFromTime(t0)
	assert.Equal(t, firstSeen, startOf(), "path-only: first seen")

	fi.containers[id18] = identity.Container{ID: id18, StartTime: tStart, Source: identity.SourceCRI}
	assert.Equal(t, pcommon.NewTimestampFromTime(tStart), startOf(), "the runtime's time replaces first seen")

	fi.containers[id18] = identity.Container{ID: id18, StartTime: tStart.Add(1300 * time.Microsecond), Source: identity.SourceContainerd}
	assert.Equal(t, pcommon.NewTimestampFromTime(tStart), startOf(), "another source's creation time does not move it")
}

// pendingFake is fakeIdentity with containers whose identity is not
// fetched yet (identity.Cache.Pending).
type pendingFake struct {
	*fakeIdentity
	pending map[string]bool
}

func (p *pendingFake) Pending(id string) bool { return p.pending[id] }

// A new pod whose containers' identity is not fetched yet (they appeared
// after the runtime's last listing, and the scrape may not refresh) is left
// to the next scrape, containers and pod: no series with the path's
// identity alone that then splits from the named one, no sandbox taken
// for a container. The next scrape reports them with their identity.
// Pods and containers already known are reported as always.
func TestPendingLeftToTheNextScrape(t *testing.T) {
	root := copyFixture(t, "v1-cgroupfs")
	clk := &fakeClock{now: t0}
	full := fullIdentity()
	// The guaranteed pod (uidGu, only its sandbox d4) and the burstable
	// pod's second container b2 are new: unknown and pending.
	fi := &fakeIdentity{containers: map[string]identity.Container{}, pods: map[string]identity.Pod{}, sandboxes: map[string]bool{}}
	for id, c := range full.containers {
		if id != idB2 {
			fi.containers[id] = c
		}
	}
	for uid, p := range full.pods {
		if uid != uidGu {
			fi.pods[uid] = p
		}
	}
	pf := &pendingFake{fakeIdentity: fi, pending: map[string]bool{idB2: true, idD4: true}}
	s := startScraper(t, root, false, clk, func(o *Options) { o.Identity = pf })

	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	assert.Nil(t, findContainer(m, idB2), "b2 waits for its identity")
	assert.Nil(t, findContainer(m, idD4), "the sandbox is not reported as a container")
	assert.NotNil(t, findContainer(m, idA1), "a1 is known")
	assert.Nil(t, resourceWith(m, "k8s.pod.uid", uidGu, 3), "the new pod waits with its sandbox")
	assert.NotNil(t, resourceWith(m, "k8s.pod.uid", uidBu, 4), "the known pod of b2 is reported")

	// The runtime's listing lands: everything, with identity.
	fi.containers[idB2] = full.containers[idB2]
	fi.pods[uidGu] = full.pods[uidGu]
	fi.sandboxes[idD4] = true
	pf.pending = map[string]bool{}
	clk.now = clk.now.Add(10 * time.Second)
	m, err = s.Scrape(context.Background())
	require.NoError(t, err)
	b2 := findContainer(m, idB2)
	require.NotNil(t, b2)
	name, _ := b2.Get("k8s.container.name")
	assert.Equal(t, "sidecar", name.Str(), "b2's first series carries its names")
	assert.Nil(t, findContainer(m, idD4))
	pod := resourceWith(m, "k8s.pod.uid", uidGu, 4)
	require.NotNil(t, pod)
	pn, _ := pod.Get("k8s.pod.name")
	assert.Equal(t, "db-1", pn.Str())
}

// resourceWith is the attributes of the first resource whose attr is val
// and that has n attributes (pods: uid, QoS, node, and when named, name and
// namespace).
func resourceWith(m pmetric.Metrics, attr, val string, minAttrs int) *pcommon.Map {
	var out *pcommon.Map
	forEachResource(m, func(rm pmetric.ResourceMetrics) {
		a := rm.Resource().Attributes()
		if _, isCtr := a.Get("container.id"); isCtr {
			return
		}
		if v, ok := a.Get(attr); ok && v.Str() == val && a.Len() >= minAttrs && out == nil {
			out = &a
		}
	})
	return out
}

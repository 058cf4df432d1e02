// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// optional reports whether metric name is off by default and covered by
// the extras golden files: every optional metric but the PSI averages,
// whose golden files are their own (psi_test.go). A new optional family
// is in the extras golden files without a change here.
func optional(name string) bool {
	if strings.Contains(name, ".pressure.avg") {
		return false
	}
	on, ok := metricEnabled(metadata.NewDefaultMetricsBuilderConfig(), name)
	return ok && !on
}

// metricEnabled reports whether metric name is enabled in mbc; ok is false
// for an unknown name.
func metricEnabled(mbc metadata.MetricsBuilderConfig, name string) (on, ok bool) {
	v := reflect.ValueOf(mbc.Metrics)
	for i := 0; i < v.NumField(); i++ {
		if v.Type().Field(i).Tag.Get("mapstructure") == name {
			return v.Field(i).FieldByName("Enabled").Bool(), true
		}
	}
	return false, false
}

// allExtras enables every optional metric (optional) on top of the
// defaults: hugetlb, file descriptors, memory peak, ... (container.network.*
// is on by default).
func allExtras() metadata.MetricsBuilderConfig {
	mbc := defaultMBC()
	v := reflect.ValueOf(&mbc.Metrics).Elem()
	for i := 0; i < v.NumField(); i++ {
		if optional(v.Type().Field(i).Tag.Get("mapstructure")) {
			v.Field(i).FieldByName("Enabled").SetBool(true)
		}
	}
	return mbc
}

func isExtra(name string) bool {
	return optional(name) || strings.HasPrefix(name, "container.network.")
}

// onlyExtras keeps the optional metrics and container network, and the
// resources that have some.
func onlyExtras(m pmetric.Metrics) pmetric.Metrics {
	out := pmetric.NewMetrics()
	m.CopyTo(out)
	out.ResourceMetrics().RemoveIf(func(rm pmetric.ResourceMetrics) bool {
		rm.ScopeMetrics().RemoveIf(func(sm pmetric.ScopeMetrics) bool {
			sm.Metrics().RemoveIf(func(x pmetric.Metric) bool { return !isExtra(x.Name()) })
			return sm.Metrics().Len() == 0
		})
		return rm.ScopeMetrics().Len() == 0
	})
	return out
}

// With every optional metric on, every layout's second scrape (10 s after
// the first, CPU counters advanced) matches its extras golden file:
// hugetlb per page size at container, pod and (v1 root) node level, finite
// limits only; fd counts of the containers whose cgroup.procs lists
// processes; container network for the hybrid fixture's standalone docker
// container in its own namespace; CPU limit utilization of the containers
// with a CPU quota.
func TestScrapeGoldenExtras(t *testing.T) {
	for _, lt := range layouts {
		t.Run(lt.name, func(t *testing.T) {
			root := copyFixture(t, lt.name)
			clk := &fakeClock{now: t0}
			s := scraperWith(t, root, allExtras(), clk, nil)
			got := onlyExtras(twoScrapes(t, s, root, clk))
			names := metricNames(got)
			assert.True(t, names["k8s.container.cpu.limit.utilization"], "a container with a CPU quota, second scrape")
			assert.True(t, names["container.memory.hugetlb.usage"], "container hugetlb")
			_, _, pods := layoutContainers(t, root, lt.standalone)
			assert.Equal(t, len(pods) > 0, names["k8s.pod.memory.hugetlb.usage"], "pod hugetlb, where the layout has pods (v2-standalone has none)")
			assert.True(t, names["container.file_descriptor.count"], "fds")
			assert.Equal(t, !strings.HasPrefix(lt.name, "v2") && lt.name != "hybrid", names["k8s.node.memory.hugetlb.usage"],
				"node hugetlb from the v1 root only (the unified root has no hugetlb files)")
			requireGolden(t, filepath.Join("..", "..", "testdata", "golden", lt.name+"-extras.yaml"), got)
		})
	}
}

// Off by default: no hugetlb or fd point, and no huge page size listed.
func TestScrapeExtrasOffByDefault(t *testing.T) {
	s := scraperWith(t, copyFixture(t, "v1-cgroupfs"), defaultMBC(), &fakeClock{now: t0}, nil)
	assert.False(t, hasFamily[*hugetlbFamily](s), "sizes are listed only when a hugetlb metric is on")
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	for name := range metricNames(m) {
		assert.NotContains(t, name, "hugetlb")
		assert.NotEqual(t, "container.file_descriptor.count", name)
	}
}

// A cgroup without hugetlb files (controller not enabled there) and a node
// without huge page sizes have no hugetlb points, never zeros, no error.
func TestScrapeHugetlbAbsent(t *testing.T) {
	root := copyFixture(t, "v2-cgroupfs")
	require.NoError(t, filepath.WalkDir(filepath.Join(root, "sys/fs/cgroup/kubepods/burstable"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "hugetlb.") {
			return os.Remove(p) //nolint:gosec // G122: a test: walks a tree the test made itself
		}
		return err
	}))
	s := scraperWith(t, root, allExtras(), &fakeClock{now: t0}, nil)
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	burst := points(m, "container.id", "e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5")
	require.NotEmpty(t, burst)
	for k := range burst {
		assert.NotContains(t, k, "hugetlb")
	}
	assert.Contains(t, points(m, "container.id", "f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6f6"), "container.memory.hugetlb.usage/2MB")

	root = copyFixture(t, "v1-cgroupfs")
	require.NoError(t, os.RemoveAll(filepath.Join(root, "sys/kernel/mm/hugepages")))
	s = scraperWith(t, root, allExtras(), &fakeClock{now: t0}, nil)
	m, err = s.Scrape(context.Background())
	require.NoError(t, err)
	for name := range metricNames(m) {
		assert.NotContains(t, name, "hugetlb")
	}
}

// A process that exits mid-count (its /proc/<pid>/fd is gone) is left
// out; a directory that cannot be listed costs the container's point and
// is a partial error naming the container, nothing else.
func TestScrapeFileDescriptorsVanishedAndUnreadable(t *testing.T) {
	const a1 = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
	root := copyFixture(t, "v1-cgroupfs")
	procs := filepath.Join(root, "sys/fs/cgroup/memory/kubepods/burstable/pod1a2b3c4d-0000-4000-8000-00000000000a", a1, "cgroup.procs")
	require.NoError(t, os.WriteFile(procs, []byte("7101\n7199\n"), 0o600)) // 7199 has no /proc entry: exited
	s := scraperWith(t, root, allExtras(), &fakeClock{now: t0}, nil)
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	ents, err := os.ReadDir(filepath.Join(root, "proc/7101/fd"))
	require.NoError(t, err)
	assert.Equal(t, float64(len(ents)), points(m, "container.id", a1)["container.file_descriptor.count"])

	fd := filepath.Join(root, "proc/7101/fd")
	require.NoError(t, os.RemoveAll(fd))
	require.NoError(t, os.WriteFile(fd, nil, 0o600)) // ENOTDIR: listing fails as EACCES would
	m, err = s.Scrape(context.Background())
	require.Error(t, err)
	var pe scrapererror.PartialScrapeError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 1, pe.Failed)
	assert.Contains(t, err.Error(), "container "+a1)
	assert.Contains(t, err.Error(), "proc/7101/fd")
	p := points(m, "container.id", a1)
	assert.NotContains(t, p, "container.file_descriptor.count", "no partial count")
	assert.Contains(t, p, "container.memory.usage", "the container's other points stay")
}

// A standalone container sharing the host's network namespace has no
// container network points (its traffic is the node's); containers in pods
// never have any.
func TestScrapeContainerNetworkHostNamespace(t *testing.T) {
	const docker = "1818181818181818181818181818181818181818181818181818181818181818"
	root := copyFixture(t, "hybrid")
	s := scraperWith(t, root, defaultMBC(), &fakeClock{now: t0}, nil)
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	p := points(m, "container.id", docker)
	assert.Contains(t, p, "container.network.io/eth0/receive")
	assert.NotContains(t, p, "container.network.io/lo/receive", "lo is left out")
	assert.Empty(t, onlyNetwork(points(m, "container.id", "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1")), "a pod's container")

	ns := filepath.Join(root, "proc/7600/ns/net")
	require.NoError(t, os.Remove(ns))
	require.NoError(t, os.Symlink("net:[4026531840]", ns)) // the host's
	m, err = s.Scrape(context.Background())
	require.NoError(t, err)
	p = points(m, "container.id", docker)
	require.NotEmpty(t, p)
	assert.Empty(t, onlyNetwork(p), "host network namespace: no container network points")
}

func onlyNetwork(p map[string]float64) []string {
	var out []string
	for k := range p {
		if strings.HasPrefix(k, "container.network.") {
			out = append(out, k)
		}
	}
	return out
}

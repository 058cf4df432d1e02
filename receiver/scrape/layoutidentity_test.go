// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
)

// layoutContainers discovers root's layout as the scraper does: the layout
// and its containers in sorted ID order (the order layoutIdentity names
// them in and fixtureFS gives them layers in), and its pods' UIDs, sorted.
func layoutContainers(tb testing.TB, root string, standalone bool) (*cgroupfs.Layout, []cgroupfs.Cgroup, []string) {
	tb.Helper()
	l, err := cgroupfs.Detect(root)
	require.NoError(tb, err)
	tree, err := l.Discover(standalone)
	require.NoError(tb, err)
	cts := append([]cgroupfs.Cgroup(nil), tree.Containers...)
	sort.Slice(cts, func(a, b int) bool { return cts[a].ContainerID < cts[b].ContainerID })
	var uids []string
	for _, p := range tree.Pods {
		uids = append(uids, p.PodUID)
	}
	sort.Strings(uids)
	return l, cts, uids
}

// layoutName is layoutIdentity's name of the layout's i-th container.
func layoutName(i int) string { return fmt.Sprintf("ctr-%d", i) }

// layoutIdentity is a runtime identity for every container and pod the
// scraper discovers in a fixture layout, every field distinct: container
// i (sorted ID order, as fixtureFS's layers) is named ctr-<i> with image
// registry.example/img-<i>:v<i>, restart count i, created at tStart + 10s
// + i; pod j (sorted UID order) is pod-<j> in namespace ns-<j>, labels
// app=app-<j>, created at tStart + 100s + j. A container keeps the pod its
// cgroup path gives; a standalone one has none. v1-cgroupfs has its own,
// richer one (fullIdentity).
func layoutIdentity(tb testing.TB, root string, standalone bool) *fakeIdentity {
	tb.Helper()
	_, cts, uids := layoutContainers(tb, root, standalone)
	fi := &fakeIdentity{containers: map[string]identity.Container{}, pods: map[string]identity.Pod{}, sandboxes: map[string]bool{}}
	for j, uid := range uids {
		fi.pods[uid] = identity.Pod{
			UID: uid, Name: fmt.Sprintf("pod-%d", j), Namespace: fmt.Sprintf("ns-%d", j),
			Labels: map[string]string{"app": fmt.Sprintf("app-%d", j)}, StartTime: tStart.Add(time.Duration(100+j) * time.Second), Source: identity.SourceCRI,
		}
	}
	for i, c := range cts {
		ct := identity.Container{
			ID: c.ContainerID, Name: layoutName(i), ContainerName: layoutName(i),
			ImageName: fmt.Sprintf("registry.example/img-%d", i), ImageTag: fmt.Sprintf("v%d", i), Runtime: "containerd",
			RestartCount: int64(i), HasRestart: true, StartTime: tStart.Add(time.Duration(10+i) * time.Second), Source: identity.SourceCRI,
		}
		if p, ok := fi.pods[c.PodUID]; ok {
			ct.PodUID, ct.PodName, ct.Namespace = p.UID, p.Name, p.Namespace
		} else {
			ct.Source = identity.SourceContainerd
		}
		fi.containers[c.ContainerID] = ct
	}
	require.NotEmpty(tb, fi.containers, "the layout has containers")
	return fi
}

// identityFor is the identity of layout's goldens: fullIdentity on
// v1-cgroupfs (identity-v1-cgroupfs.yaml), layoutIdentity elsewhere.
func identityFor(tb testing.TB, layout, root string, standalone bool) *fakeIdentity {
	if layout == "v1-cgroupfs" {
		return fullIdentity()
	}
	return layoutIdentity(tb, root, standalone)
}

// TestScrapeGoldenIdentityLayouts: every other layout with a full runtime
// identity (layoutIdentity), pod labels on, two scrapes: the runtime's
// names, images and restart counts on the resources, container.uptime and
// k8s.pod.uptime from the runtime's creation times, cumulative start
// times the runtime's. v1-cgroupfs is TestScrapeGoldenIdentity.
func TestScrapeGoldenIdentityLayouts(t *testing.T) {
	for _, lt := range layouts {
		if lt.name == "v1-cgroupfs" {
			continue
		}
		t.Run(lt.name, func(t *testing.T) {
			root := copyFixture(t, lt.name)
			clk := &fakeClock{now: t0}
			fi := layoutIdentity(t, root, lt.standalone)
			s := startScraper(t, root, lt.standalone, clk, func(o *Options) { o.Identity = fi; o.PodLabels = true })
			got := twoScrapes(t, s, root, clk)
			names := metricNames(got)
			require.True(t, names["container.uptime"], "container uptime")
			require.Equal(t, len(fi.pods) > 0, names["k8s.pod.uptime"], "pod uptime, where the layout has pods (v2-standalone has none)")
			for _, ct := range fi.containers {
				res := findContainer(got, ct.ID)
				require.NotNil(t, res, "container %s", ct.ID)
				v, ok := res.Get("k8s.container.name")
				if ct.PodUID != "" {
					require.True(t, ok)
					require.Equal(t, ct.ContainerName, v.Str())
				}
			}
			requireGolden(t, filepath.Join("..", "..", "testdata", "golden", "identity-"+lt.name+".yaml"), got)
		})
	}
}

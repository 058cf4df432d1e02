// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/containerstats/containerstatsreceiver/internal/fsstats"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
)

// BenchmarkScrapeFilesystem is BenchmarkScrape with the filesystem
// metrics fed: a background snapshot holding every container's writable
// layer and log size (what a collection with CRI gives), names from an
// identity, and the node statfs. Compared with BenchmarkScrape at the same
// size it is the per-container cost of the default-on filesystem metrics
// at scrape time (three points and two map lookups per container; the
// runtime calls and log walk run in the background, not here).
func BenchmarkScrapeFilesystem(b *testing.B) {
	for _, spec := range benchSpecs() {
		for _, n := range []int{100, 1000} {
			if n > maxBenchN() {
				continue
			}
			for _, fs := range []bool{false, true} {
				b.Run(fmt.Sprintf("layout=%s/N=%d/filesystem=%v", spec.Name(), n, fs), func(b *testing.B) {
					tree := genTree(b, spec, n)
					fi := &fakeIdentity{containers: map[string]identity.Container{}}
					snap := &fsstats.Snapshot{Layers: map[string]fsstats.Usage{}, Logs: map[fsstats.LogDir]uint64{}}
					for i, c := range tree.Containers {
						name := fmt.Sprintf("c%d", i)
						fi.containers[c.ID] = identity.Container{ID: c.ID, PodUID: c.PodUID, ContainerName: name, Namespace: "ns", PodName: "p"}
						snap.Layers[c.ID] = fsstats.Usage{Bytes: u(uint64(4096 * (i + 1))), Inodes: u(uint64(i + 3))}
						snap.Logs[fsstats.LogDir{PodUID: c.PodUID, Container: name}] = uint64(1000 + i)
					}
					clk := &fakeClock{now: t0}
					o := Options{Host: testHost(tree.Root), NodeName: "node-1", MetricsBuilderConfig: defaultMBC(), Now: clk.Now, Identity: fi}
					if fs {
						o.Filesystem = &fakeFS{snap: snap, node: fsstats.Space{Capacity: 1 << 40, Available: 1 << 39, Used: 1 << 38, Inodes: u(1 << 20), InodesFree: u(1 << 19)}}
					}
					s := New(newSettings(), o)
					require.NoError(b, s.Start(context.Background(), componenttest.NewNopHost()))
					b.Cleanup(func() { require.NoError(b, s.Shutdown(context.Background())) })
					benchSteadyScrapes(b, s, clk, n)
				})
			}
		}
	}
}

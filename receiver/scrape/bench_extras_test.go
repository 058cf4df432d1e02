// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/hosttree"
)

// BenchmarkScrapeFileDescriptors is the cost of the optional
// container.file_descriptor.count: the same steady-state scrape of a tree
// whose containers list 4 processes with 16 /proc/<pid>/fd entries each,
// with the metric off and on. The difference per container is one
// cgroup.procs read and 4 directory listings; ns/process divides it by the
// processes listed. The trees are on a disk filesystem, not procfs:
// procfs's own cost per listing is BenchmarkFDCounterRealProc
// (internal/procfs).
func BenchmarkScrapeFileDescriptors(b *testing.B) {
	const procs = 4
	n := min(1000, maxBenchN())
	for _, spec := range []hosttree.Spec{
		{V2: true, Systemd: true, ThreadsPerContainer: procs, PSI: true, FDsPerProcess: 16},
		{V2: false, Systemd: false, ThreadsPerContainer: procs, PSI: true, FDsPerProcess: 16},
	} {
		for _, on := range []bool{false, true} {
			b.Run(fmt.Sprintf("layout=%s/N=%d/fds=%v", spec.Name(), n, on), func(b *testing.B) {
				tree := genTree(b, spec, n)
				mbc := defaultMBC()
				mbc.Metrics.ContainerFileDescriptorCount.Enabled = on
				clk := &fakeClock{now: t0}
				s := New(newSettings(), Options{Host: testHost(tree.Root), NodeName: "node-1", MetricsBuilderConfig: mbc, Now: clk.Now})
				require.NoError(b, s.Start(context.Background(), nil))
				b.Cleanup(func() { require.NoError(b, s.Shutdown(context.Background())) })
				benchSteadyScrapes(b, s, clk, n)
			})
		}
	}
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/hosttree"
)

// heapAfterGC is the live heap once garbage is collected.
func heapAfterGC() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// The live heap after 1000 scrapes of a constant tree equals the heap after
// 10 (within a small allowance for runtime noise): nothing accumulates per
// scrape.
func TestHeapSteadyConstantTree(t *testing.T) {
	if testing.Short() {
		t.Skip("1000 scrapes")
	}
	tree, err := hosttree.Generate(hosttree.TempDir(t), hosttree.Spec{V2: true, Systemd: true, Containers: 40, ThreadsPerContainer: 2, PSI: true})
	require.NoError(t, err)
	clk := &fakeClock{now: t0}
	s := newTestScraper(t, tree.Root, false, clk)
	scrapeN := func(n int) {
		for i := 0; i < n; i++ {
			clk.now = clk.now.Add(10 * time.Second)
			_, err := s.Scrape(context.Background())
			require.NoError(t, err)
		}
	}
	scrapeN(10)
	after10 := heapAfterGC()
	scrapeN(990)
	after1000 := heapAfterGC()
	t.Logf("live heap after 10 scrapes: %d B, after 1000: %d B", after10, after1000)
	assert.Less(t, int64(after1000)-int64(after10), int64(64<<10), "heap grew by more than 64 KiB over 990 scrapes")
	assert.Len(t, s.series, 1+1+20+40, "one state entry per node, system container (the pods' root: no kubelet process here), pod and container")
}

// A churning tree (every container replaced by a new one each scrape) keeps
// the live heap bounded: state for gone containers is evicted.
func TestHeapBoundedUnderChurn(t *testing.T) {
	if testing.Short() {
		t.Skip("500 churn scrapes")
	}
	tree, err := hosttree.Generate(hosttree.TempDir(t), hosttree.Spec{V2: true, Containers: 20, ThreadsPerContainer: 1})
	require.NoError(t, err)
	clk := &fakeClock{now: t0}
	s := newTestScraper(t, tree.Root, false, clk)
	churn := func(n int) {
		for i := 0; i < n; i++ {
			for len(tree.Containers) > 0 {
				require.NoError(t, tree.RemoveContainer(0))
			}
			for j := 0; j < 10; j++ {
				require.NoError(t, tree.AddPod(2))
			}
			clk.now = clk.now.Add(time.Second)
			_, err := s.Scrape(context.Background())
			require.NoError(t, err)
		}
	}
	churn(50)
	after50 := heapAfterGC()
	churn(450)
	after500 := heapAfterGC()
	t.Logf("live heap after 50 churn scrapes: %d B, after 500: %d B (%d containers replaced)", after50, after500, 500*20)
	assert.Less(t, int64(after500)-int64(after50), int64(256<<10), "heap grows with churn")
	assert.Len(t, s.series, 1+1+10+20, "state holds only what the last scrape saw: node, the pods' root system container, 10 pods, 20 containers")
}

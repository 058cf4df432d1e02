// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/cgroups/v3/cgroup2"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/testing/hosttree"
)

// benchSizes are the container counts of the scaling benchmarks. BENCH_MAX_N
// caps them (CI's smoke run uses a small cap).
var benchSizes = []int{10, 100, 1000, 5000}

func benchSpecs() []hosttree.Spec {
	return []hosttree.Spec{
		{V2: true, Systemd: true, ThreadsPerContainer: 4, PSI: true},
		{V2: true, Systemd: false, ThreadsPerContainer: 4, PSI: true},
		{V2: false, Systemd: true, ThreadsPerContainer: 4, PSI: true},
		{V2: false, Systemd: false, ThreadsPerContainer: 4, PSI: true},
	}
}

func maxBenchN() int {
	if v, err := strconv.Atoi(os.Getenv("BENCH_MAX_N")); err == nil && v > 0 {
		return v
	}
	return 1 << 30
}

// benchTrees caches generated host trees for one test binary run, so the
// scrape and floor benchmarks of a size read the same tree and a 5000
// container tree is written once. TestMain removes it.
var benchTrees = struct {
	dir   string
	trees map[string]*hosttree.Tree
}{trees: map[string]*hosttree.Tree{}}

func removeBenchTrees() {
	if benchTrees.dir != "" {
		_ = os.RemoveAll(benchTrees.dir)
	}
}

// genTree returns the host tree of spec with n containers, generated on
// first use (outside the timer). Benchmarks must not modify it.
func genTree(b *testing.B, spec hosttree.Spec, n int) *hosttree.Tree {
	b.Helper()
	spec.Containers = n
	key := fmt.Sprintf("%s-%d-%d-%v-%d", spec.Name(), n, spec.ThreadsPerContainer, spec.PSI, spec.FDsPerProcess)
	if t, ok := benchTrees.trees[key]; ok {
		return t
	}
	if benchTrees.dir == "" {
		dir, err := os.MkdirTemp("", "containerstats-bench-")
		require.NoError(b, err)
		benchTrees.dir = dir
	}
	tree, err := hosttree.Generate(filepath.Join(benchTrees.dir, key), spec)
	require.NoError(b, err)
	benchTrees.trees[key] = tree
	return tree
}

// reportPerContainer adds per-container figures to a benchmark's output.
func reportPerContainer(b *testing.B, n int) {
	b.Helper()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/container")
}

// benchSteadyScrapes times b.N steady-state scrapes of s (one warm-up
// scrape first, the clock 10 s further each time) and reports them per
// container of the tree's n.
func benchSteadyScrapes(b *testing.B, s *Scraper, clk *fakeClock, n int) {
	b.Helper()
	_, err := s.Scrape(context.Background()) // warm: series state, buffers
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		clk.now = clk.now.Add(10 * time.Second)
		if _, err := s.Scrape(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportPerContainer(b, n)
}

// BenchmarkScrape is a full scrape through the receiver's scrape function:
// discovery, reads, derived values and pdata assembly, steady state (the
// previous scrape's state is warm).
func BenchmarkScrape(b *testing.B) {
	for _, spec := range benchSpecs() {
		for _, n := range benchSizes {
			if n > maxBenchN() {
				continue
			}
			b.Run(fmt.Sprintf("layout=%s/N=%d", spec.Name(), n), func(b *testing.B) {
				tree := genTree(b, spec, n)
				clk := &fakeClock{now: t0}
				s := newTestScraper(b, tree.Root, false, clk)
				_, err := s.Scrape(context.Background()) // warm: series state, buffers
				require.NoError(b, err)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					clk.now = clk.now.Add(10 * time.Second)
					m, err := s.Scrape(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					if m.ResourceMetrics().Len() < n {
						b.Fatalf("scraped %d resources, want >= %d", m.ResourceMetrics().Len(), n)
					}
				}
				b.StopTimer()
				reportPerContainer(b, n)
			})
		}
	}
}

// scrapeFileSet returns the paths one steady-state scrape opens (files) and
// lists (directories, with a trailing "/"), in order.
func scrapeFileSet(b *testing.B, root string) []string {
	b.Helper()
	var paths []string
	clk := &fakeClock{now: t0}
	s := New(newSettings(), Options{
		Host: testHost(root), NodeName: "node-1", MetricsBuilderConfig: defaultMBC(), Now: clk.Now,
		TraceRead: func(p string) { paths = append(paths, p) },
	})
	require.NoError(b, s.Start(context.Background(), nil))
	defer func() { require.NoError(b, s.Shutdown(context.Background())) }()
	_, err := s.Scrape(context.Background())
	require.NoError(b, err)
	paths = paths[:0]
	clk.now = clk.now.Add(10 * time.Second)
	_, err = s.Scrape(context.Background())
	require.NoError(b, err)
	return paths
}

// readFloor reads every path with raw syscalls into one reused buffer, no
// parsing: open/read/close for files, open/getdents/close for directories.
func readFloor(paths []string, buf []byte) error {
	for _, p := range paths {
		dir := strings.HasSuffix(p, "/")
		fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", p, err)
		}
		for {
			var n int
			if dir {
				n, err = syscall.Getdents(fd, buf)
			} else {
				n, err = syscall.Read(fd, buf)
			}
			if err != nil || n == 0 {
				break
			}
		}
		syscall.Close(fd)
		if err != nil {
			return fmt.Errorf("read %s: %w", p, err)
		}
	}
	return nil
}

// BenchmarkFloor reads exactly the set of files (and lists exactly the
// directories) that a steady-state scrape of the same tree reads, with one
// reused buffer and no parsing: the cost of the syscalls alone on this
// filesystem. BenchmarkScrape / BenchmarkFloor is the scrape's overhead.
func BenchmarkFloor(b *testing.B) {
	for _, spec := range benchSpecs() {
		for _, n := range benchSizes {
			if n > maxBenchN() {
				continue
			}
			b.Run(fmt.Sprintf("layout=%s/N=%d", spec.Name(), n), func(b *testing.B) {
				tree := genTree(b, spec, n)
				paths := scrapeFileSet(b, tree.Root)
				buf := make([]byte, 64<<10)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := readFloor(paths, buf); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				reportPerContainer(b, n)
				b.ReportMetric(float64(len(paths))/float64(n), "files/container")
			})
		}
	}
}

// BenchmarkDiscover is the tree walk alone.
func BenchmarkDiscover(b *testing.B) {
	for _, spec := range benchSpecs() {
		n := min(1000, maxBenchN())
		b.Run(fmt.Sprintf("layout=%s/N=%d", spec.Name(), n), func(b *testing.B) {
			tree := genTree(b, spec, n)
			l, err := cgroupfs.Detect(tree.Root)
			require.NoError(b, err)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := l.Discover(false); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportPerContainer(b, n)
		})
	}
}

// BenchmarkCgroupsV3Stat reads the same v2 containers through
// github.com/containerd/cgroups/v3 (cgroup2.Load with WithMountpoint, then
// StatFiltered for CPU, memory, memory events and pids: what our CPU and
// memory metrics need) without building any metric, for the decision
// recorded in BENCHMARKS.md: its stat path alone against our whole scrape.
func BenchmarkCgroupsV3Stat(b *testing.B) {
	for _, spec := range benchSpecs()[:2] { // the v2 layouts
		n := min(1000, maxBenchN())
		b.Run(fmt.Sprintf("layout=%s/N=%d", spec.Name(), n), func(b *testing.B) {
			tree := genTree(b, spec, n)
			mnt := filepath.Join(tree.Root, "sys/fs/cgroup")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, c := range tree.Containers {
					m, err := cgroup2.Load(c.Rel, cgroup2.WithMountpoint(mnt))
					if err != nil {
						b.Fatal(err)
					}
					if _, err := m.StatFiltered(cgroup2.StatCPU | cgroup2.StatMemory | cgroup2.StatMemoryEvents | cgroup2.StatPids); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.StopTimer()
			reportPerContainer(b, n)
		})
	}
}

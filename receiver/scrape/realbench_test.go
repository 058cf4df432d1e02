//go:build realmachine

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

	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
)

// BenchmarkRealCgroupFloor is the floor comparison of BenchmarkScrape and
// BenchmarkFloor on the real kernel's cgroup files instead of ext4 copies:
// BENCH_REAL_N (default 200) real container cgroups under kubepods (every
// hierarchy, one sleeping process each, cgrouptest), scraped through the
// machine's root (root path "/", the machine lock held), then:
//
//   - scrape: a steady-state scrape of the machine (only our containers are
//     under kubepods while the lock is held)
//   - floor: the file set that scrape read, replayed with full-path opens,
//     one reused buffer, no parsing
//   - floor-dirfd: the same set opened relative to a descriptor of each
//     file's directory opened beforehand (the floor of the reader's
//     directory cache, internal/cgroupfs/dirfd.go)
//
// Needs root and cgroupfs; skipped otherwise.
func BenchmarkRealCgroupFloor(b *testing.B) {
	if why := cgrouptest.Available(); why != "" {
		b.Skip(why)
	}
	n := 200
	if v, err := strconv.Atoi(os.Getenv("BENCH_REAL_N")); err == nil && v > 0 {
		n = v
	}
	for i := 0; i < n; i++ {
		qos := "burstable"
		if i%2 == 1 {
			qos = "besteffort"
		}
		c := cgrouptest.NewContainer(b, qos) // takes the machine lock
		c.Start(b, cgrouptest.ModeSleep)
	}
	clk := &fakeClock{now: time.Now()}
	var paths []string
	record := false
	s := New(newSettings(), Options{
		Host: testHost("/"), NodeName: "node-1", MetricsBuilderConfig: defaultMBC(), Now: clk.Now,
		TraceRead: func(p string) {
			if record {
				paths = append(paths, p)
			}
		},
	})
	require.NoError(b, s.Start(context.Background(), nil))
	b.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	_, _ = s.Scrape(context.Background()) // warm
	record = true
	clk.now = clk.now.Add(10 * time.Second)
	_, _ = s.Scrape(context.Background())
	record = false

	b.Run(fmt.Sprintf("scrape/N=%d", n), func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			clk.now = clk.now.Add(10 * time.Second)
			m, _ := s.Scrape(context.Background()) // other cgroups of the machine may come and go: partial errors are theirs
			if m.ResourceMetrics().Len() < n {
				b.Fatalf("scraped %d resources, want >= %d", m.ResourceMetrics().Len(), n)
			}
		}
		reportPerContainer(b, n)
		b.ReportMetric(float64(len(paths))/float64(n), "files/container")
	})
	buf := make([]byte, 64<<10)
	b.Run(fmt.Sprintf("floor/N=%d", n), func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := readFloor(paths, buf); err != nil {
				b.Fatal(err)
			}
		}
		reportPerContainer(b, n)
	})
	b.Run(fmt.Sprintf("floor-dirfd/N=%d", n), func(b *testing.B) {
		dirs := map[string]int{}
		defer func() {
			for _, fd := range dirs {
				syscall.Close(fd)
			}
		}()
		type rel struct {
			dirfd int
			name  string
			list  bool
		}
		var set []rel
		for _, p := range paths {
			list := strings.HasSuffix(p, "/")
			dir, name := filepath.Split(strings.TrimSuffix(p, "/"))
			if list {
				dir, name = strings.TrimSuffix(p, "/"), "."
			}
			fd, ok := dirs[dir]
			if !ok {
				var err error
				fd, err = syscall.Open(dir, 0x200000|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0) // O_PATH
				require.NoError(b, err)
				dirs[dir] = fd
			}
			set = append(set, rel{fd, name, list})
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for _, f := range set {
				fd, err := syscall.Openat(f.dirfd, f.name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
				if err != nil {
					b.Fatal(err)
				}
				for {
					var m int
					if f.list {
						m, err = syscall.Getdents(fd, buf)
					} else {
						m, err = syscall.Read(fd, buf)
					}
					if err != nil || m == 0 {
						break
					}
				}
				syscall.Close(fd)
			}
		}
		reportPerContainer(b, n)
	})
}

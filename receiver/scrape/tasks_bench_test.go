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
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkTaskStates scrapes the v2-systemd fixture with 5000 extra threads
// in one container (one /proc/<tid>/stat per thread), with the task-state
// and load-average metrics on and off. "tasks=true" advances every cgroup's
// CPU time between scrapes (outside the timer), so every thread is read;
// "tasks=true-idle" leaves it, so the states of the first scrape are reused
// (tasks.go); the "off" case shows that nothing per-thread is read when no
// enabled metric needs it.
func BenchmarkTaskStates(b *testing.B) {
	const n = 5000
	root := copyFixture(b, "v2-systemd")
	var list strings.Builder
	for i := 0; i < n; i++ {
		tid := 100000 + i
		fmt.Fprintf(&list, "%d\n", tid)
		dir := filepath.Join(root, "proc", strconv.Itoa(tid))
		require.NoError(b, os.MkdirAll(dir, 0o755))
		line := fmt.Sprintf("%d (worker) %c 1 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 100 1000 10\n", tid, "RSDI"[i%4])
		require.NoError(b, os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o600))
	}
	require.NoError(b, os.MkdirAll(filepath.Join(root, v2A1Dir, "many"), 0o755))
	require.NoError(b, os.WriteFile(filepath.Join(root, v2A1Dir, "many", "cgroup.threads"), []byte(list.String()), 0o600))

	for _, c := range []struct {
		name     string
		on, busy bool
	}{{"tasks=true", true, true}, {"tasks=true-idle", true, false}, {"tasks=false", false, false}} {
		b.Run(c.name, func(b *testing.B) {
			on := c.on
			mbc := defaultMBC()
			m := &mbc.Metrics
			m.ContainerTasks.Enabled, m.ContainerCPULoadAverage10s.Enabled = on, on
			m.K8sPodTasks.Enabled, m.K8sPodCPULoadAverage10s.Enabled = on, on
			clk := &fakeClock{now: t0}
			s := scraperWith(b, root, mbc, clk, nil)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if c.busy {
					b.StopTimer()
					bumpCPU(b, root)
					b.StartTimer()
				}
				if _, err := s.Scrape(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/thread")
		})
	}
}

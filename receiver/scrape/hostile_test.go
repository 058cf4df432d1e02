// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/scraper/scrapererror"
)

// The victim of the fault tests is container c3 of pod 2b3c (v2-systemd);
// every other container and pod must keep exactly the points it has on an
// intact tree.
const (
	victimPod = "2b3c4d5e-0000-4000-8000-00000000000b"
	victimDir = "sys/fs/cgroup/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod2b3c4d5e_0000_4000_8000_00000000000b.slice/cri-containerd-" + v2Ctr3 + ".scope"
)

var bystanders = []struct{ attr, val string }{
	{"container.id", v2Ctr1},
	{"container.id", "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"},
	{"container.id", "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4"},
	{"k8s.pod.uid", "1a2b3c4d-0000-4000-8000-00000000000a"},
	{"k8s.pod.uid", "3c4d5e6f-0000-4000-8000-00000000000c"},
}

func scrapeOnce(t *testing.T, root string, trace func(string)) (pmetric.Metrics, error) {
	t.Helper()
	clk := &fakeClock{now: t0}
	s := New(newSettings(), Options{Host: testHost(root), NodeName: "node-1", MetricsBuilderConfig: defaultMBC(), Now: clk.Now, TraceRead: trace})
	require.NoError(t, s.Start(context.Background(), nil))
	defer func() { require.NoError(t, s.Shutdown(context.Background())) }()
	return s.Scrape(context.Background())
}

// TestHostileFiles: each fault hits one container; the scrape never panics,
// the others' points are intact, and an error (when the fault is one) is
// partial and names the container and the file.
func TestHostileFiles(t *testing.T) {
	baseline, err := scrapeOnce(t, copyFixture(t, "v2-systemd"), nil)
	require.NoError(t, err)

	cases := []struct {
		name    string
		mutate  func(t *testing.T, root string)
		trace   func(root string) func(string)
		wantErr []string // substrings of a partial error; nil: no error
		check   func(t *testing.T, victim map[string]float64)
	}{
		{
			name: "file that cannot be read",
			mutate: func(t *testing.T, root string) {
				p := filepath.Join(root, victimDir, "memory.stat")
				require.NoError(t, os.Remove(p))
				require.NoError(t, os.Mkdir(p, 0o755)) // read(2) gives EISDIR
			},
			wantErr: []string{"container " + v2Ctr3, "memory.stat"},
			check: func(t *testing.T, v map[string]float64) {
				assert.NotContains(t, v, "container.memory.working_set")
				assert.Contains(t, v, "container.cpu.time/user", "CPU points survive a memory fault")
			},
		},
		{
			name:    "malformed single value",
			mutate:  writeVictim("memory.current", "twelve\n"),
			wantErr: []string{"container " + v2Ctr3, "memory.current"},
		},
		{
			name:    "malformed keyed file",
			mutate:  writeVictim("cpu.stat", "usage_usec 1\nuser_usec -5\n"),
			wantErr: []string{"container " + v2Ctr3, "cpu.stat"},
		},
		{
			name:    "empty value file",
			mutate:  writeVictim("memory.current", ""),
			wantErr: []string{"container " + v2Ctr3, "memory.current"},
		},
		{
			name:   "empty keyed file means no keys: no points, no error",
			mutate: writeVictim("cpu.stat", ""),
			check: func(t *testing.T, v map[string]float64) {
				assert.NotContains(t, v, "container.cpu.time/user")
				assert.Contains(t, v, "container.memory.usage")
			},
		},
		{
			name:   "2^64-1 does not wrap negative",
			mutate: writeVictim("memory.current", "18446744073709551615\n"),
			check: func(t *testing.T, v map[string]float64) {
				assert.Equal(t, float64(math.MaxInt64), v["container.memory.usage"])
				assert.GreaterOrEqual(t, v["container.memory.working_set"], 0.0)
			},
		},
		{
			name:   "max limit is no limit",
			mutate: writeVictim("memory.max", "max\n"),
			check: func(t *testing.T, v map[string]float64) {
				assert.NotContains(t, v, "container.memory.limit")
				assert.NotContains(t, v, "container.memory.available")
			},
		},
		{
			name: "kernel without a key",
			mutate: func(t *testing.T, root string) {
				p := filepath.Join(root, victimDir, "memory.stat")
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				var kept []string
				for _, l := range strings.Split(string(data), "\n") {
					if !strings.HasPrefix(l, "inactive_file ") {
						kept = append(kept, l)
					}
				}
				require.NoError(t, os.WriteFile(p, []byte(strings.Join(kept, "\n")), 0o600)) //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
			},
			check: func(t *testing.T, v map[string]float64) {
				assert.Contains(t, v, "container.memory.usage")
				assert.NotContains(t, v, "container.memory.working_set", "no inactive_file: no working set, not usage")
			},
		},
		{
			name: "/proc/<tid> gone",
			// The listed threads exited before their stat files were read.
			mutate: writeVictim("cgroup.threads", "424242\n424243\n"),
			check: func(t *testing.T, v map[string]float64) {
				assert.Contains(t, v, "container.memory.usage")
				for k, x := range v {
					if strings.HasPrefix(k, "container.tasks/") {
						assert.Zero(t, x, k)
					}
				}
			},
		},
		{
			name: "cgroup removed mid-scrape",
			trace: func(root string) func(string) {
				dir := filepath.Join(root, victimDir)
				done := false
				return func(p string) {
					if !done && strings.HasPrefix(p, dir+"/") {
						done = true
						require.NoError(t, os.RemoveAll(dir))
					}
				}
			},
			wantErr: []string{"container " + v2Ctr3, "cgroup vanished"},
			check: func(t *testing.T, v map[string]float64) {
				assert.Empty(t, v, "a vanished container has no points at all")
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := copyFixture(t, "v2-systemd")
			if c.mutate != nil {
				c.mutate(t, root)
			}
			var trace func(string)
			if c.trace != nil {
				trace = c.trace(root)
			}
			m, err := scrapeOnce(t, root, trace)
			if c.wantErr == nil {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				require.True(t, scrapererror.IsPartialScrapeError(err), "a fault in one container must be a partial error: %v", err)
				for _, s := range c.wantErr {
					assert.Contains(t, err.Error(), s)
				}
			}
			for _, b := range bystanders {
				assert.Equal(t, points(baseline, b.attr, b.val), points(m, b.attr, b.val), "%s=%s changed", b.attr, b.val)
			}
			assert.NotEmpty(t, points(m, "k8s.pod.uid", victimPod), "the victim's pod is still reported")
			if c.check != nil {
				c.check(t, points(m, "container.id", v2Ctr3))
			}
		})
	}
}

func writeVictim(name, content string) func(*testing.T, string) {
	return func(t *testing.T, root string) {
		require.NoError(t, os.WriteFile(filepath.Join(root, victimDir, name), []byte(content), 0o600))
	}
}

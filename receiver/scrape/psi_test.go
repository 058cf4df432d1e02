// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// allPSI enables the optional PSI averages too.
func allPSI() metadata.MetricsBuilderConfig {
	mbc := defaultMBC()
	m := &mbc.Metrics
	m.ContainerPressureAvg10.Enabled, m.ContainerPressureAvg60.Enabled, m.ContainerPressureAvg300.Enabled = true, true, true
	m.K8sPodPressureAvg10.Enabled, m.K8sPodPressureAvg60.Enabled, m.K8sPodPressureAvg300.Enabled = true, true, true
	m.K8sNodePressureAvg10.Enabled, m.K8sNodePressureAvg60.Enabled, m.K8sNodePressureAvg300.Enabled = true, true, true
	return mbc
}

// With every PSI metric on, the layouts that have pressure files match their
// golden files (the averages as ratios 0-1).
func TestScrapeGoldenPSIAverages(t *testing.T) {
	for _, lt := range []string{"v2-systemd", "hybrid", "v2-standalone"} {
		t.Run(lt, func(t *testing.T) {
			s := scraperWith(t, copyFixture(t, lt), allPSI(), &fakeClock{now: t0}, nil)
			m, err := s.Scrape(context.Background())
			require.NoError(t, err)
			requireGolden(t, filepath.Join("..", "..", "testdata", "golden", lt+"-psi-averages.yaml"), m)
		})
	}
}

// A layout with a unified tree but no pressure files (v2-cgroupfs), and one
// with neither (v1-systemd), yield no PSI point at all, never zeros, and
// say so once at info level however many cgroups and scrapes.
func TestScrapeNoPressureFilesNoPSIPoints(t *testing.T) {
	for _, lt := range []string{"v2-cgroupfs", "v1-systemd"} {
		t.Run(lt, func(t *testing.T) {
			core, logs := observer.New(zapcore.InfoLevel)
			clk := &fakeClock{now: t0}
			s := scraperWith(t, copyFixture(t, lt), allPSI(), clk, zap.New(core))
			for i := 0; i < 2; i++ {
				m, err := s.Scrape(context.Background())
				require.NoError(t, err)
				require.Positive(t, m.DataPointCount())
				for name := range metricNames(m) {
					assert.NotContains(t, name, "pressure", "no PSI point without pressure files")
				}
				clk.now = clk.now.Add(10 * time.Second)
			}
			psiLogs := logs.FilterMessageSnippet("PSI").All()
			require.Len(t, psiLogs, 1, "PSI unavailability is logged once per receiver")
			assert.Equal(t, zapcore.InfoLevel, psiLogs[0].Level)
		})
	}
}

// Where pressure files exist the log stays quiet about them: on v2-systemd
// only the cgroups without files trigger the single message.
func TestScrapePSIPresentNoZerosForMissing(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	// The fixture's pod has all three pressure files, as a real v2 pod
	// slice does: remove one.
	require.NoError(t, os.Remove(filepath.Join(root, "sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice",
		"kubepods-burstable-pod1a2b3c4d_0000_4000_8000_00000000000a.slice", "memory.pressure")))
	s := scraperWith(t, root, allPSI(), &fakeClock{now: t0}, nil)
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	a1 := points(m, "container.id", v2Ctr1)
	assert.InDelta(t, 3.1, a1["container.pressure.stall_time/cpu/some"], 1e-12, "total µs -> s")
	assert.InDelta(t, 0.2211, a1["container.pressure.avg10/cpu/some"], 1e-12, "percent -> ratio")
	assert.InDelta(t, 0.2266, a1["container.pressure.avg300/cpu/full"], 1e-12)
	pod := points(m, "k8s.pod.uid", podUID1)
	assert.Contains(t, pod, "k8s.pod.pressure.stall_time/cpu/some")
	assert.NotContains(t, pod, "k8s.pod.pressure.stall_time/memory/some", "the pod has no memory.pressure: no point, not 0")
	for k := range points(m, "container.id", v2Ctr2) {
		assert.NotContains(t, k, "pressure")
	}
}

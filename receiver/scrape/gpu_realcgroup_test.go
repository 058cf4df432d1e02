//go:build cgo && realmachine

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/gputest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// TestRealGPUProcessAttribution: a simulated GPU reports the host PID of a
// real child process in a real kubepods-shaped cgroup on this machine; the
// scrape maps it through the real /proc/<pid>/cgroup (v1 lines and the v2
// line on a hybrid node) to that container. The test process itself, in
// no container, is on the GPU too and is attributed to nobody.
func TestRealGPUProcessAttribution(t *testing.T) {
	machine.Lock(t)
	c := cgrouptest.NewContainer(t, "besteffort")
	ch := c.Start(t, cgrouptest.ModeSleep)
	node := gputest.A100(1)
	node.SetProcs(0, true,
		gputest.Proc{PID: uint32(ch.Cmd.Process.Pid), Mem: 123 * gputest.MiB, SM: []uint32{37}},
		gputest.Proc{PID: uint32(os.Getpid()), Mem: 45 * gputest.MiB, SM: []uint32{11}},
	)
	s := New(newSettings(), Options{
		Host: testHost("/"), NodeName: "real", MetricsBuilderConfig: defaultMBC(),
		GPU: GPUOptions{Enabled: true, ProcessAttribution: true, NVML: node.Server},
	})
	require.NoError(t, s.Start(context.Background(), nil))
	defer func() { require.NoError(t, s.Shutdown(context.Background())) }()

	m := mustScrape(t, s, c)
	used := map[string]int64{}
	duty := map[string]float64{}
	forEachPoint(m, func(res map[string]any, name string, attrs map[string]any, v float64, iv int64) {
		id, _ := res["container.id"].(string)
		switch name {
		case "container.accelerator.memory.used":
			assert.Equal(t, gputest.UUID(0), attrs["hw.id"])
			used[id] = iv
		case "container.accelerator.duty_cycle":
			duty[id] = v
		}
	})
	assert.Equal(t, map[string]int64{c.ID: 123 * gputest.MiB}, used, "only the real container, with its own process's memory")
	assert.Equal(t, map[string]float64{c.ID: 0.37}, duty)
}

//go:build realmachine

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/containerevents"
	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// TestRealOOMKillEvent: a child OOM-killed in a real kubepods-shaped
// cgroup under a 32 MiB limit is exactly one k8s.container.oom_kill record
// for its container (count 1, from the kernel's counter), from a scraper
// on the machine's own root; the scrape before it is the baseline, the
// one after it adds nothing. (The logs-only case runs this same scrape
// with every metric off: TestEventsOnlyScrape.)
func TestRealOOMKillEvent(t *testing.T) {
	machine.Lock(t)
	c := cgrouptest.NewContainer(t, "burstable")
	c.SetMemoryLimit(t, 32<<20)
	sink := &eventSink{active: true}
	s := New(newSettings(), Options{Host: testHost("/"), NodeName: "real", MetricsBuilderConfig: defaultMBC(), Events: sink})
	require.NoError(t, s.Start(context.Background(), nil))
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	ofC := func() []event {
		var out []event
		for _, e := range sink.drain() {
			if v, ok := e.res.Get("container.id"); ok && v.Str() == c.ID {
				out = append(out, e)
			}
		}
		return out
	}

	mustScrape(t, s, c)
	require.Empty(t, ofC(), "baseline")

	ch := c.Start(t, cgrouptest.ModeBurn, "threads=0", "mib=128")
	require.Error(t, ch.WaitTimeout(t, 10*time.Second), "the child must die")
	ws, ok := ch.Cmd.ProcessState.Sys().(syscall.WaitStatus)
	require.True(t, ok)
	require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "killed by the OOM killer (SIGKILL), got %v", ch.Cmd.ProcessState)

	mustScrape(t, s, c)
	got := ofC()
	require.Len(t, got, 1)
	assert.Equal(t, containerevents.EventOOMKill, got[0].lr.EventName())
	assert.Equal(t, map[string]any{containerevents.AttrOOMKillCount: int64(1), containerevents.AttrOOMKillSource: containerevents.OOMSourceCgroup}, withoutUID(t, got[0].lr))
	assert.Equal(t, c.PodUID, got[0].res.AsRaw()["k8s.pod.uid"])
	assert.Equal(t, "burstable", got[0].res.AsRaw()["k8s.pod.qos_class"])

	mustScrape(t, s, c)
	assert.Empty(t, ofC(), "one kill, one record")
}

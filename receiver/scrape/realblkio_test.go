//go:build realmachine

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
)

// TestRealBlockIO: a container writes with O_DIRECT to a loop device made
// for the test (a fresh request queue, so no earlier throttle rule has
// activated blk-throttle on it).
//
// cgroup v1 (this machine): before any throttle rule on the device the
// kernel accounts nothing in the container's blkio.throttle files (they
// list no device): no point for the device, not a zero. Then the test, as
// the node's operator, gives the container a generous write_bps_device
// rule (1 TiB/s) on the device; the next 8 MiB show as container and pod
// write bytes of exactly 8 MiB (raw device, 1 MiB O_DIRECT writes: no
// metadata), the earlier unaccounted MiB not included.
//
// cgroup v2: io.stat accounts without rules: write bytes grow by >= 8 MiB.
func TestRealBlockIO(t *testing.T) {
	const mib = 8
	c := cgrouptest.NewContainer(t, "burstable")
	v2 := cgrouptest.V2()
	if !v2 {
		if _, err := os.Stat(filepath.Join(c.Dir("blkio"), "blkio.throttle.io_service_bytes_recursive")); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("no v1 blkio hierarchy: %v", err)
			}
			t.Skip("no v1 blkio hierarchy")
		}
	}
	loop := cgrouptest.NewLoop(t, 64)
	write := func(n int) {
		t.Helper()
		ch := c.Start(t, cgrouptest.ModeDirectWrite, "file="+loop.Path, fmt.Sprintf("mib=%d", n))
		require.NoError(t, ch.WaitTimeout(t, 30*time.Second), "the O_DIRECT writer")
	}
	s := realScraper(t, defaultMBC(), &fakeClock{now: time.Now()})
	wkey := "container.disk.io/" + loop.Name + "/write"
	devNum := fmt.Sprintf("%d:%d", loop.Major, loop.Minor)

	if v2 {
		before := scrapeContainer(t, s, c)[wkey]
		write(mib)
		got := scrapeContainer(t, s, c)[wkey]
		assert.GreaterOrEqual(t, got-before, float64(mib<<20), "io.stat wbytes grew by the written bytes")
		return
	}

	write(2)
	thr, err := os.ReadFile(filepath.Join(c.Dir("blkio"), "blkio.throttle.io_service_bytes_recursive"))
	require.NoError(t, err)
	require.NotContains(t, string(thr), devNum+" ", "kernel fact: without a throttle rule on the device, the v1 files do not account it")
	p := scrapeContainer(t, s, c)
	for k := range p {
		assert.NotContains(t, k, "/"+loop.Name+"/", "not accounted: no %s point (a 0 would be false)", k)
	}

	// The node's operator enables accounting; the receiver never writes.
	c.Write(t, "blkio", "blkio.throttle.write_bps_device", devNum+" 1099511627776")
	write(mib)
	m := mustScrape(t, s, c)
	p = points(m, "container.id", c.ID)
	assert.Equal(t, float64(mib<<20), p[wkey], "write bytes since accounting began: the 8 MiB, not the 2 before")
	assert.Equal(t, 0.0, p["container.disk.io/"+loop.Name+"/read"], "accounted and nothing read: a real 0")
	assert.GreaterOrEqual(t, p["container.disk.operations/"+loop.Name+"/write"], float64(mib), "at least one bio per MiB")
	t.Logf("%s after the rule and %d MiB: write %v B, read %v B, write ops %v", loop.Name, mib,
		p[wkey], p["container.disk.io/"+loop.Name+"/read"], p["container.disk.operations/"+loop.Name+"/write"])
	pod := points(m, "k8s.pod.uid", c.PodUID)
	assert.Equal(t, float64(mib<<20), pod["k8s.pod.disk.io/"+loop.Name+"/write"], "the pod's recursive files hold its container's")
}

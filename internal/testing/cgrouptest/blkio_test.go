// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package cgrouptest

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
)

func TestMain(m *testing.M) {
	MaybeRunChild() // ProbeBlkio's child
	os.Exit(m.Run())
}

// blkioVerdict, both answers and the edges: v1's "Total 0" (no device
// listed) is not accounted; a listed device with the probe's bytes is; a
// listed device short of them (the write went elsewhere) is not; v2 lists
// what the cgroup did; no files at all is not.
func TestBlkioVerdict(t *testing.T) {
	const wrote = 4 << 20
	dev := func(maj, minor uint32, w cgroupfs.U64) cgroupfs.IODevice {
		return cgroupfs.IODevice{Major: maj, Minor: minor, WriteBytes: w, ReadBytes: cgroupfs.Some(0)}
	}
	for _, c := range []struct {
		name      string
		st        cgroupfs.IOStat
		accounted bool
		why       string
	}{
		{
			"v1 without a throttle rule on the device",
			cgroupfs.IOStat{Source: cgroupfs.IOUnaccountedV1},
			false, "blkio (unaccounted) lists no device (Total 0): not accounted",
		},
		{
			"v1 with blk-throttle active on the device",
			cgroupfs.IOStat{Source: cgroupfs.IOThrottleV1, Devices: []cgroupfs.IODevice{dev(254, 0, cgroupfs.Some(wrote))}},
			true, "blkio.throttle lists 254:0 Write 4194304: accounted",
		},
		{
			"v1 BFQ",
			cgroupfs.IOStat{Source: cgroupfs.IOBFQV1, Devices: []cgroupfs.IODevice{dev(8, 0, cgroupfs.Some(wrote+4096))}},
			true, "blkio.bfq lists 8:0 Write 4198400: accounted",
		},
		{
			"listed, but not the write",
			cgroupfs.IOStat{Source: cgroupfs.IOThrottleV1, Devices: []cgroupfs.IODevice{dev(7, 240, cgroupfs.Some(0))}},
			false, "blkio.throttle lists 7:240 Write 0: not accounted (no device with 4194304 bytes written)",
		},
		{
			"v2",
			cgroupfs.IOStat{Source: cgroupfs.IOStatV2, Devices: []cgroupfs.IODevice{dev(7, 240, cgroupfs.U64{}), dev(259, 1, cgroupfs.Some(wrote))}},
			true, "io.stat lists 7:240 Write absent, 259:1 Write 4194304: accounted",
		},
		{"no block I/O files", cgroupfs.IOStat{}, false, "no block I/O files"},
	} {
		t.Run(c.name, func(t *testing.T) {
			accounted, why := blkioVerdict(c.st, wrote)
			assert.Equal(t, c.accounted, accounted)
			assert.Equal(t, c.why, why)
		})
	}
}

// ProbeBlkio on the real kernel, both answers: a new loop device (a fresh
// request queue) is not accounted on cgroup v1 until a throttle rule is
// set on it (any rule, in any cgroup: here a throw-away one's), then it
// is. On cgroup v2 both probes are accounted.
func TestProbeBlkio(t *testing.T) {
	c := NewStandaloneContainer(t) // the lock and the machine check first
	loop := NewLoop(t, 16)
	before, why := ProbeBlkio(t, loop.Path)
	t.Logf("before a rule: %v: %s", before, why)
	if !V2() {
		c.Write(t, "blkio", "blkio.throttle.write_bps_device", fmt.Sprintf("%d:%d 1099511627776", loop.Major, loop.Minor))
	}
	after, why := ProbeBlkio(t, loop.Path)
	t.Logf("after a rule: %v: %s", after, why)
	assert.Equal(t, V2(), before, "a fresh queue is accounted on v2 only")
	assert.True(t, after, "accounted once blk-throttle is active on the device")
}

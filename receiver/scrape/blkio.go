// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/calc"
	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/procfs"
)

// ignoredDiskPrefixes are the node's block devices that are not disks:
// loop devices (images, snaps), RAM disks and floppies. Partitions are left
// out too (their disk counts their I/O); device-mapper and md devices stay.
var ignoredDiskPrefixes = [...]string{"loop", "ram", "zram", "fd"}

type ioRecorder = func(*metadata.MetricsBuilder, pcommon.Timestamp, int64, string, metadata.AttributeDiskIoDirection)

// discardRecorder records a device's discards: not a disk.io.direction
// (the semantic conventions define read and write only), metrics of their
// own.
type discardRecorder = func(*metadata.MetricsBuilder, pcommon.Timestamp, int64, string)

// blkioRecorders are the block I/O metrics of one entity kind.
type blkioRecorders struct {
	io, ops               recorder[ioRecorder]
	discardIO, discardOps recorder[discardRecorder]
}

func blkioTable(m *metadata.MetricsConfig) [numKinds]blkioRecorders {
	return [numKinds]blkioRecorders{
		kindNode: {
			io:         rec(m.K8sNodeDiskIo.Enabled, mbT.RecordK8sNodeDiskIoDataPoint),
			ops:        rec(m.K8sNodeDiskOperations.Enabled, mbT.RecordK8sNodeDiskOperationsDataPoint),
			discardIO:  rec(m.K8sNodeDiskDiscardIo.Enabled, mbT.RecordK8sNodeDiskDiscardIoDataPoint),
			discardOps: rec(m.K8sNodeDiskDiscardOperations.Enabled, mbT.RecordK8sNodeDiskDiscardOperationsDataPoint),
		},
		kindPod: {
			io:         rec(m.K8sPodDiskIo.Enabled, mbT.RecordK8sPodDiskIoDataPoint),
			ops:        rec(m.K8sPodDiskOperations.Enabled, mbT.RecordK8sPodDiskOperationsDataPoint),
			discardIO:  rec(m.K8sPodDiskDiscardIo.Enabled, mbT.RecordK8sPodDiskDiscardIoDataPoint),
			discardOps: rec(m.K8sPodDiskDiscardOperations.Enabled, mbT.RecordK8sPodDiskDiscardOperationsDataPoint),
		},
		kindContainer: {
			io:         rec(m.ContainerDiskIo.Enabled, mbT.RecordContainerDiskIoDataPoint),
			ops:        rec(m.ContainerDiskOperations.Enabled, mbT.RecordContainerDiskOperationsDataPoint),
			discardIO:  rec(m.ContainerDiskDiscardIo.Enabled, mbT.RecordContainerDiskDiscardIoDataPoint),
			discardOps: rec(m.ContainerDiskDiscardOperations.Enabled, mbT.RecordContainerDiskDiscardOperationsDataPoint),
		},
	}
}

// blkioFamily is block I/O: bytes and operations per device and direction,
// and discards per device, from the cgroup's io.stat (v2) or blkio files
// (v1) for pods and containers, from /proc/diskstats for the node. The
// number of devices varies per entity: a vanished one costs what it
// recorded last time.
type blkioFamily struct {
	noSums
	v           *env
	slot        int
	rec         [numKinds]blkioRecorders
	devPts      [numKinds]int // a failed read's cost: one device's points, 2 directions per metric and 1 per discard metric (the count of devices is unknown)
	names       map[uint64]procfs.BlockDevice
	unaccounted bool // the v1 "not accounted" case was logged (once per receiver)

	devs  []cgroupfs.IODevice // the scraper's buffer
	disks []procfs.DiskStat   // the scraper's buffer
	cur   cgroupfs.IOStat
	node  []procfs.DiskStat // the node's disks of this read
	none  bool              // the node has no /proc/diskstats
	err   error
}

func devKey(maj, minor uint32) uint64 { return uint64(maj)<<32 | uint64(minor) }

func newBlkioFamily(v *env, m *metadata.MetricsConfig, slot int) family {
	f := &blkioFamily{v: v, slot: slot, rec: blkioTable(m)}
	for k := range f.rec {
		r := &f.rec[k]
		f.devPts[k] = 2*count(r.io.on, r.ops.on) + count(r.discardIO.on, r.discardOps.on)
	}
	if f.devPts == [numKinds]int{} {
		return nil
	}
	return f
}

func (f *blkioFamily) readErr() error { return f.err }

func (f *blkioFamily) points(_ cgroupKind, st *series) int { return lastPts(st, f.slot) }

// read reads the cgroup's block I/O files (pods, containers) or the node's
// /proc/diskstats when one of the kind's metrics is enabled.
func (f *blkioFamily) read(e *entity) {
	f.cur, f.node, f.none, f.err = cgroupfs.IOStat{}, nil, false, nil
	if f.devPts[e.kind] == 0 {
		return
	}
	if e.kind == kindNode {
		disks, err := f.v.proc.DiskStats(f.disks[:0])
		f.disks = disks[:0]
		switch {
		case errors.Is(err, fs.ErrNotExist):
			f.none = true // no /proc/diskstats under root_path: absent, as any missing file
		case err != nil:
			f.err = err
		default:
			f.node = disks
		}
		return
	}
	f.cur, f.err = f.v.reader.IO(e.rel, f.devs)
	f.devs = f.cur.Devices[:0]
}

// deviceName is the kernel's name of block device maj:min, from the
// uevent under root_path, remembered; "maj:min" when it has none.
func (f *blkioFamily) deviceName(maj, minor uint32) procfs.BlockDevice {
	return f.blockDevice(maj, minor, strconv.FormatUint(uint64(maj), 10)+":"+strconv.FormatUint(uint64(minor), 10))
}

// blockDevice is what the uevent of maj:min says, remembered for the
// receiver's life; a device without one is named fallback (not a
// partition).
func (f *blkioFamily) blockDevice(maj, minor uint32, fallback string) procfs.BlockDevice {
	k := devKey(maj, minor)
	if d, ok := f.names[k]; ok {
		return d
	}
	d, err := f.v.proc.BlockDevice(maj, minor)
	if err != nil {
		d = procfs.BlockDevice{Name: fallback}
	}
	if f.names == nil {
		f.names = map[uint64]procfs.BlockDevice{}
	}
	f.names[k] = d
	return d
}

// record records bytes and operations per device and direction, and
// discards per device. A pod or container with no device listed (v2: no
// I/O yet; v1: not accounted) has no point.
func (f *blkioFamily) record(e *entity, errs *scrapererror.ScrapeErrors) {
	if f.devPts[e.kind] == 0 {
		return
	}
	if f.err != nil {
		errs.AddPartial(f.devPts[e.kind], fmt.Errorf("%s: block I/O: %w", e.name, f.err))
		return
	}
	if e.kind == kindNode {
		e.st.fam[f.slot].pts = f.recordNode(e.ts)
		return
	}
	if f.cur.Source == cgroupfs.IOUnaccountedV1 && !f.unaccounted {
		f.unaccounted = true
		f.v.logger.Info("cgroup v1 block I/O is not accounted for some cgroups: their blkio.throttle and blkio.bfq files list no device, "+
			"which the kernel does on devices without an active blk-throttle (no blkio.throttle.*_device rule set since boot) and a non-BFQ scheduler. "+
			"No container.disk.* or k8s.pod.disk.* points for them (not zeros). A node operator can enable accounting by setting a throttle rule "+
			"on the device (e.g. a very high blkio.throttle.read_bps_device on the kubepods cgroup); cgroup v2 (io.stat) needs none. Logged once.",
			zap.String("first", e.name))
	}
	rec, mb, ts := &f.rec[e.kind], f.v.mb, e.ts
	n := 0
	for i := range f.cur.Devices {
		d := &f.cur.Devices[i]
		name := f.deviceName(d.Major, d.Minor).Name
		if rec.io.on {
			n += recordDir(mb, ts, rec.io.record, d.ReadBytes, name, metadata.AttributeDiskIoDirectionRead)
			n += recordDir(mb, ts, rec.io.record, d.WriteBytes, name, metadata.AttributeDiskIoDirectionWrite)
		}
		if rec.discardIO.on {
			n += recordDiscard(mb, ts, rec.discardIO.record, d.DiscBytes, name)
		}
		if rec.ops.on {
			n += recordDir(mb, ts, rec.ops.record, d.ReadOps, name, metadata.AttributeDiskIoDirectionRead)
			n += recordDir(mb, ts, rec.ops.record, d.WriteOps, name, metadata.AttributeDiskIoDirectionWrite)
		}
		if rec.discardOps.on {
			n += recordDiscard(mb, ts, rec.discardOps.record, d.DiscOps, name)
		}
	}
	e.st.fam[f.slot].pts = n // what this entity's vanishing costs next time
}

// recordDir records v when present and returns the points recorded.
func recordDir(mb *metadata.MetricsBuilder, ts pcommon.Timestamp, rec ioRecorder, v cgroupfs.U64, dev string, dir metadata.AttributeDiskIoDirection) int {
	if !v.OK {
		return 0
	}
	rec(mb, ts, calc.ClampInt64(v.V), dev, dir)
	return 1
}

// recordDiscard records v when present and returns the points recorded.
func recordDiscard(mb *metadata.MetricsBuilder, ts pcommon.Timestamp, rec discardRecorder, v cgroupfs.U64, dev string) int {
	if !v.OK {
		return 0
	}
	rec(mb, ts, calc.ClampInt64(v.V), dev)
	return 1
}

// wholeDisk reports whether a /proc/diskstats line is a disk of the node:
// not a partition (uevent DEVTYPE), not a loop, RAM or floppy device. A
// device without a uevent counts as a disk.
func (f *blkioFamily) wholeDisk(d *procfs.DiskStat) bool {
	for _, p := range ignoredDiskPrefixes {
		if strings.HasPrefix(d.Name, p) {
			return false
		}
	}
	bd := f.blockDevice(d.Major, d.Minor, d.Name)
	return !bd.Partition
}

// recordNode records the node's disks from /proc/diskstats and returns
// the points recorded.
func (f *blkioFamily) recordNode(ts pcommon.Timestamp) int {
	rec, mb := &f.rec[kindNode], f.v.mb
	n := 0
	for i := range f.node {
		d := &f.node[i]
		if !f.wholeDisk(d) {
			continue
		}
		for _, x := range [...]struct {
			on, discardOn        bool
			rec                  ioRecorder
			discardRec           discardRecorder
			read, write, discard uint64
		}{
			{rec.io.on, rec.discardIO.on, rec.io.record, rec.discardIO.record, d.ReadBytes, d.WriteBytes, d.DiscardBytes},
			{rec.ops.on, rec.discardOps.on, rec.ops.record, rec.discardOps.record, d.ReadOps, d.WriteOps, d.DiscardOps},
		} {
			if x.on {
				x.rec(mb, ts, calc.ClampInt64(x.read), d.Name, metadata.AttributeDiskIoDirectionRead)
				x.rec(mb, ts, calc.ClampInt64(x.write), d.Name, metadata.AttributeDiskIoDirectionWrite)
				n += 2
			}
			if x.discardOn && d.HasDiscard {
				x.discardRec(mb, ts, calc.ClampInt64(x.discard), d.Name)
				n++
			}
		}
	}
	return n
}

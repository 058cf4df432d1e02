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

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/procfs"
)

// ioPoints is what a failed block I/O read costs: an unknown number of
// devices; counted as one device's 2 metrics x 2 directions.
const ioPoints = 4

// ignoredDiskPrefixes are the node's block devices that are not disks:
// loop devices (images, snaps), RAM disks and floppies. Partitions are left
// out too (their disk counts their I/O); device-mapper and md devices stay.
var ignoredDiskPrefixes = [...]string{"loop", "ram", "zram", "fd"}

// ioState is what block I/O keeps across scrapes: reused buffers, the
// device names (maj:min -> uevent), and whether the v1 "not accounted"
// case has been logged.
type ioState struct {
	devs        []cgroupfs.IODevice
	disks       []procfs.DiskStat
	names       map[uint64]procfs.BlockDevice
	unaccounted bool // logged once per receiver
}

// ioRead is one entity's block I/O in one scrape.
type ioRead struct {
	st  cgroupfs.IOStat
	err error
}

func devKey(maj, minor uint32) uint64 { return uint64(maj)<<32 | uint64(minor) }

// wantIO reports whether a block I/O metric of kind is enabled.
func (s *Scraper) wantIO(k cgroupKind) bool {
	m := &s.opts.MetricsBuilderConfig.Metrics
	switch k {
	case kindNode:
		return m.K8sNodeDiskIo.Enabled || m.K8sNodeDiskOperations.Enabled
	case kindPod:
		return m.K8sPodDiskIo.Enabled || m.K8sPodDiskOperations.Enabled
	}
	return m.ContainerDiskIo.Enabled || m.ContainerDiskOperations.Enabled
}

// readIO reads the cgroup's block I/O files (pods, containers) when one of
// the kind's metrics is enabled; the node's come from /proc/diskstats
// (recordNodeIO).
func (s *Scraper) readIO(e entity, r *ioRead) {
	if e.kind == kindNode || !s.wantIO(e.kind) {
		return
	}
	r.st, r.err = s.reader.IO(e.rel, s.io.devs)
	s.io.devs = r.st.Devices[:0]
}

// deviceName is the kernel's name of block device maj:min, from the
// uevent under root_path, remembered; "maj:min" when it has none.
func (s *Scraper) deviceName(maj, minor uint32) procfs.BlockDevice {
	return s.blockDevice(maj, minor, strconv.FormatUint(uint64(maj), 10)+":"+strconv.FormatUint(uint64(minor), 10))
}

// blockDevice is what the uevent of maj:min says, remembered for the
// receiver's life; a device without one is named fallback (not a
// partition).
func (s *Scraper) blockDevice(maj, minor uint32, fallback string) procfs.BlockDevice {
	k := devKey(maj, minor)
	if d, ok := s.io.names[k]; ok {
		return d
	}
	d, err := s.proc.BlockDevice(maj, minor)
	if err != nil {
		d = procfs.BlockDevice{Name: fallback}
	}
	if s.io.names == nil {
		s.io.names = map[uint64]procfs.BlockDevice{}
	}
	s.io.names[k] = d
	return d
}

// recordIO records a pod's or container's bytes and operations per device
// and direction. No device listed (v2: no I/O yet; v1: not accounted) is
// no point.
func (s *Scraper) recordIO(ts pcommon.Timestamp, e entity, r *ioRead, errs *scrapererror.ScrapeErrors) {
	if e.kind == kindNode {
		return
	}
	if r.err != nil {
		errs.AddPartial(ioPoints, fmt.Errorf("%s: block I/O: %w", e.name, r.err))
		return
	}
	if r.st.Source == cgroupfs.IOUnaccountedV1 && !s.io.unaccounted {
		s.io.unaccounted = true
		s.logger.Info("cgroup v1 block I/O is not accounted for some cgroups: their blkio.throttle and blkio.bfq files list no device, "+
			"which the kernel does on devices without an active blk-throttle (no blkio.throttle.*_device rule set since boot) and a non-BFQ scheduler. "+
			"No container.disk.* or k8s.pod.disk.* points for them (not zeros). A node operator can enable accounting by setting a throttle rule "+
			"on the device (e.g. a very high blkio.throttle.read_bps_device on the kubepods cgroup); cgroup v2 (io.stat) needs none. Logged once.",
			zap.String("first", e.name))
	}
	m := &s.opts.MetricsBuilderConfig.Metrics
	io, ops := s.mb.RecordContainerDiskIoDataPoint, s.mb.RecordContainerDiskOperationsDataPoint
	ioOn, opsOn := m.ContainerDiskIo.Enabled, m.ContainerDiskOperations.Enabled
	if e.kind == kindPod {
		io, ops = s.mb.RecordK8sPodDiskIoDataPoint, s.mb.RecordK8sPodDiskOperationsDataPoint
		ioOn, opsOn = m.K8sPodDiskIo.Enabled, m.K8sPodDiskOperations.Enabled
	}
	n := 0
	for i := range r.st.Devices {
		d := &r.st.Devices[i]
		name := s.deviceName(d.Major, d.Minor).Name
		if ioOn {
			n += recordDir(ts, io, d.ReadBytes, name, metadata.AttributeDiskIoDirectionRead)
			n += recordDir(ts, io, d.WriteBytes, name, metadata.AttributeDiskIoDirectionWrite)
			n += recordDir(ts, io, d.DiscBytes, name, metadata.AttributeDiskIoDirectionDiscard)
		}
		if opsOn {
			n += recordDir(ts, ops, d.ReadOps, name, metadata.AttributeDiskIoDirectionRead)
			n += recordDir(ts, ops, d.WriteOps, name, metadata.AttributeDiskIoDirectionWrite)
			n += recordDir(ts, ops, d.DiscOps, name, metadata.AttributeDiskIoDirectionDiscard)
		}
	}
	e.st.ioPts = n // what this entity's vanishing costs next time (cgroup.go)
}

// recordDir records v when present and returns the points recorded.
func recordDir(ts pcommon.Timestamp, rec func(pcommon.Timestamp, int64, string, metadata.AttributeDiskIoDirection), v cgroupfs.U64, dev string, dir metadata.AttributeDiskIoDirection) int {
	if !v.OK {
		return 0
	}
	rec(ts, clampInt64(v.V), dev, dir)
	return 1
}

// wholeDisk reports whether a /proc/diskstats line is a disk of the node:
// not a partition (uevent DEVTYPE), not a loop, RAM or floppy device. A
// device without a uevent counts as a disk.
func (s *Scraper) wholeDisk(d *procfs.DiskStat) bool {
	for _, p := range ignoredDiskPrefixes {
		if strings.HasPrefix(d.Name, p) {
			return false
		}
	}
	bd := s.blockDevice(d.Major, d.Minor, d.Name)
	return !bd.Partition
}

// scrapeNodeIO records the node's disks from /proc/diskstats. A read
// error costs these points only.
func (s *Scraper) scrapeNodeIO(ts pcommon.Timestamp, errs *scrapererror.ScrapeErrors) {
	if !s.wantIO(kindNode) {
		return
	}
	disks, err := s.proc.DiskStats(s.io.disks[:0])
	s.io.disks = disks[:0]
	if errors.Is(err, fs.ErrNotExist) {
		return // no /proc/diskstats under root_path: absent, as any missing file
	}
	if err != nil {
		errs.AddPartial(ioPoints, fmt.Errorf("node: block I/O: %w", err))
		return
	}
	m := &s.opts.MetricsBuilderConfig.Metrics
	for i := range disks {
		d := &disks[i]
		if !s.wholeDisk(d) {
			continue
		}
		if m.K8sNodeDiskIo.Enabled {
			s.mb.RecordK8sNodeDiskIoDataPoint(ts, clampInt64(d.ReadBytes), d.Name, metadata.AttributeDiskIoDirectionRead)
			s.mb.RecordK8sNodeDiskIoDataPoint(ts, clampInt64(d.WriteBytes), d.Name, metadata.AttributeDiskIoDirectionWrite)
			if d.HasDiscard {
				s.mb.RecordK8sNodeDiskIoDataPoint(ts, clampInt64(d.DiscardBytes), d.Name, metadata.AttributeDiskIoDirectionDiscard)
			}
		}
		if m.K8sNodeDiskOperations.Enabled {
			s.mb.RecordK8sNodeDiskOperationsDataPoint(ts, clampInt64(d.ReadOps), d.Name, metadata.AttributeDiskIoDirectionRead)
			s.mb.RecordK8sNodeDiskOperationsDataPoint(ts, clampInt64(d.WriteOps), d.Name, metadata.AttributeDiskIoDirectionWrite)
			if d.HasDiscard {
				s.mb.RecordK8sNodeDiskOperationsDataPoint(ts, clampInt64(d.DiscardOps), d.Name, metadata.AttributeDiskIoDirectionDiscard)
			}
		}
	}
}

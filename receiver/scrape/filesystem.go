// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/fsstats"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/opt"
)

// Filesystem is the background filesystem collection (fsstats.Collector):
// the scrape reads its latest snapshot, which never waits on a runtime,
// and takes the node filesystem's statfs itself. When it also has
// Start/Shutdown methods the scraper calls them.
type Filesystem interface {
	Snapshot() *fsstats.Snapshot
	NodeFS() (fsstats.Space, error)
}

// filesystemFamily is the background filesystem collection's figures
// (its latest snapshot, taken by the scraper once per scrape) and the node
// filesystem's statfs, taken at scrape time: the node filesystem and image
// filesystems on the node, writable layers and log sizes on containers.
// The number of image filesystems varies: the node costs what it recorded
// last time.
type filesystemFamily struct {
	s       *Scraper
	slot    int
	nodePts int // the node statfs' points: capacity, available, usage, inodes, free inodes
	ctrPts  int // a container's: writable layer bytes and inodes, ephemeral storage's rootfs and logs parts
	eph     bool

	node   fsstats.Space
	nodeOK bool
	err    error
}

func newFilesystemFamily(s *Scraper, m *metadata.MetricsConfig, slot int) family {
	if s.opts.Filesystem == nil {
		return nil
	}
	eph := m.K8sContainerEphemeralStorageUsage.Enabled
	return &filesystemFamily{
		s: s, slot: slot, eph: eph,
		nodePts: count(m.K8sNodeFilesystemCapacity.Enabled, m.K8sNodeFilesystemAvailable.Enabled, m.K8sNodeFilesystemUsage.Enabled,
			m.K8sNodeFilesystemInodeCount.Enabled, m.K8sNodeFilesystemInodeFree.Enabled),
		ctrPts: count(m.ContainerFilesystemUsage.Enabled, m.ContainerFilesystemInodeUsed.Enabled, eph, eph),
	}
}

// read takes the node filesystem's statfs (one syscall); containers read
// nothing (their figures are in the snapshot).
func (f *filesystemFamily) read(e *entity) {
	f.node, f.nodeOK, f.err = fsstats.Space{}, false, nil
	if e.kind != kindNode || f.nodePts == 0 {
		return
	}
	f.node, f.err = f.s.opts.Filesystem.NodeFS()
	f.nodeOK = f.err == nil
}

func (f *filesystemFamily) readErr() error { return f.err }

func (f *filesystemFamily) points(k cgroupKind, st *series) int {
	switch k {
	case kindNode:
		return f.nodePts + lastPts(st, f.slot)
	case kindContainer:
		return f.ctrPts
	}
	return 0
}

func (f *filesystemFamily) record(e *entity, errs *scrapererror.ScrapeErrors) {
	switch e.kind {
	case kindNode:
		e.st.fam[f.slot].pts = f.recordNode(e.ts, errs)
	case kindContainer:
		f.recordContainer(e.ts, e.id, e.pod, e.ct)
	}
}

// recordNode records the node filesystem (statfs now) and the image
// filesystems of the current snapshot; it returns the image filesystems'
// points.
func (f *filesystemFamily) recordNode(ts pcommon.Timestamp, errs *scrapererror.ScrapeErrors) int {
	mb := f.s.mb
	if f.err != nil {
		errs.AddPartial(f.nodePts, fmt.Errorf("node: filesystem: %w", f.err))
	} else if f.nodeOK {
		sp := &f.node
		mb.RecordK8sNodeFilesystemCapacityDataPoint(ts, clampInt64(sp.Capacity))
		mb.RecordK8sNodeFilesystemAvailableDataPoint(ts, clampInt64(sp.Available))
		mb.RecordK8sNodeFilesystemUsageDataPoint(ts, clampInt64(sp.Used))
		recordOpt(ts, sp.Inodes, mb.RecordK8sNodeFilesystemInodeCountDataPoint)
		recordOpt(ts, sp.InodesFree, mb.RecordK8sNodeFilesystemInodeFreeDataPoint)
	}
	n := 0
	snap := f.s.fsSnap
	for i := range snap.Images {
		im := &snap.Images[i]
		mp := im.Mountpoint
		n += recordOptAttr(ts, im.Bytes, mp, mb.RecordK8sNodeImageFilesystemUsageDataPoint)
		n += recordOptAttr(ts, im.Inodes, mp, mb.RecordK8sNodeImageFilesystemInodeUsedDataPoint)
		if im.Space.OK {
			mb.RecordK8sNodeImageFilesystemCapacityDataPoint(ts, clampInt64(im.Space.V.Capacity), mp)
			mb.RecordK8sNodeImageFilesystemAvailableDataPoint(ts, clampInt64(im.Space.V.Available), mp)
			n += 2
		}
	}
	return n
}

// recordContainer records a container's writable layer (by container ID)
// and log files (by pod UID and container name) from the current
// snapshot: the writable layer as container.filesystem.* and, with the log
// files, as the parts of its ephemeral storage
// (k8s.container.ephemeral_storage.usage{fs_type}); what the snapshot
// lacks has no point.
func (f *filesystemFamily) recordContainer(ts pcommon.Timestamp, id, podUID string, ct *identity.Container) {
	mb, snap := f.s.mb, f.s.fsSnap
	if l, ok := snap.Layers[id]; ok {
		recordOpt(ts, l.Bytes, mb.RecordContainerFilesystemUsageDataPoint)
		recordOpt(ts, l.Inodes, mb.RecordContainerFilesystemInodeUsedDataPoint)
		if f.eph && l.Bytes.OK {
			mb.RecordK8sContainerEphemeralStorageUsageDataPoint(ts, clampInt64(l.Bytes.V), metadata.AttributeK8sContainerEphemeralStorageFsTypeRootfs)
		}
	}
	if podUID == "" {
		podUID = ct.PodUID
	}
	if podUID == "" || ct.ContainerName == "" {
		return
	}
	if n, ok := snap.Logs[fsstats.LogDir{PodUID: podUID, Container: ct.ContainerName}]; ok {
		mb.RecordK8sContainerEphemeralStorageUsageDataPoint(ts, clampInt64(n), metadata.AttributeK8sContainerEphemeralStorageFsTypeLogs)
	}
}

func recordOpt(ts pcommon.Timestamp, v opt.Value[uint64], rec func(pcommon.Timestamp, int64)) {
	if v.OK {
		rec(ts, clampInt64(v.V))
	}
}

// recordOptAttr records v when present and returns the points recorded.
func recordOptAttr(ts pcommon.Timestamp, v opt.Value[uint64], attr string, rec func(pcommon.Timestamp, int64, string)) int {
	if !v.OK {
		return 0
	}
	rec(ts, clampInt64(v.V), attr)
	return 1
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/fsstats"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
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

// nodeFSPoints is what a failed node statfs costs: capacity, available,
// usage, inodes and free inodes.
const nodeFSPoints = 5

func (s *Scraper) wantNodeFS() bool {
	m := &s.opts.MetricsBuilderConfig.Metrics
	return m.K8sNodeFilesystemCapacity.Enabled || m.K8sNodeFilesystemAvailable.Enabled || m.K8sNodeFilesystemUsage.Enabled ||
		m.K8sNodeFilesystemInodes.Enabled || m.K8sNodeFilesystemInodesFree.Enabled
}

// recordNodeFS records the node filesystem (statfs now) and the image
// filesystems of the current snapshot.
func (s *Scraper) recordNodeFS(ts pcommon.Timestamp, errs *scrapererror.ScrapeErrors) {
	if s.opts.Filesystem == nil {
		return
	}
	if s.wantNodeFS() {
		sp, err := s.opts.Filesystem.NodeFS()
		if err != nil {
			errs.AddPartial(nodeFSPoints, fmt.Errorf("node: filesystem: %w", err))
		} else {
			s.mb.RecordK8sNodeFilesystemCapacityDataPoint(ts, clampInt64(sp.Capacity))
			s.mb.RecordK8sNodeFilesystemAvailableDataPoint(ts, clampInt64(sp.Available))
			s.mb.RecordK8sNodeFilesystemUsageDataPoint(ts, clampInt64(sp.Used))
			recordOpt(ts, sp.Inodes, s.mb.RecordK8sNodeFilesystemInodesDataPoint)
			recordOpt(ts, sp.InodesFree, s.mb.RecordK8sNodeFilesystemInodesFreeDataPoint)
		}
	}
	for i := range s.fsSnap.Images {
		im := &s.fsSnap.Images[i]
		mp := im.Mountpoint
		recordOptAttr(ts, im.Bytes, mp, s.mb.RecordK8sNodeImageFilesystemUsageDataPoint)
		recordOptAttr(ts, im.Inodes, mp, s.mb.RecordK8sNodeImageFilesystemInodesUsedDataPoint)
		if im.Space.OK {
			s.mb.RecordK8sNodeImageFilesystemCapacityDataPoint(ts, clampInt64(im.Space.V.Capacity), mp)
			s.mb.RecordK8sNodeImageFilesystemAvailableDataPoint(ts, clampInt64(im.Space.V.Available), mp)
		}
	}
}

// recordContainerFS records a container's writable layer (by container
// ID) and log files (by pod UID and container name) from the current
// snapshot; what the snapshot lacks has no point.
func (s *Scraper) recordContainerFS(ts pcommon.Timestamp, id, podUID string, ct *identity.Container) {
	if s.opts.Filesystem == nil {
		return
	}
	if l, ok := s.fsSnap.Layers[id]; ok {
		recordOpt(ts, l.Bytes, s.mb.RecordContainerFilesystemUsageDataPoint)
		recordOpt(ts, l.Inodes, s.mb.RecordContainerFilesystemInodesUsedDataPoint)
	}
	if podUID == "" {
		podUID = ct.PodUID
	}
	if podUID == "" || ct.ContainerName == "" {
		return
	}
	if n, ok := s.fsSnap.Logs[fsstats.LogDir{PodUID: podUID, Container: ct.ContainerName}]; ok {
		s.mb.RecordContainerFilesystemLogsUsageDataPoint(ts, clampInt64(n))
	}
}

func recordOpt(ts pcommon.Timestamp, v opt.Value[uint64], rec func(pcommon.Timestamp, int64)) {
	if v.OK {
		rec(ts, clampInt64(v.V))
	}
}

func recordOptAttr(ts pcommon.Timestamp, v opt.Value[uint64], attr string, rec func(pcommon.Timestamp, int64, string)) {
	if v.OK {
		rec(ts, clampInt64(v.V), attr)
	}
}

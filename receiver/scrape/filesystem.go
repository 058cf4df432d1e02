// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"context"

	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/calc"
	"github.com/containerstats/containerstatsreceiver/internal/fsstats"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/opt"
)

// Filesystem is the background filesystem collection (fsstats.Collector):
// the scrape reads its latest snapshot, which never waits on a runtime,
// and takes the node filesystem's statfs itself. The scraper starts it in
// its Start and stops it in its Shutdown.
type Filesystem interface {
	Snapshot() *fsstats.Snapshot
	NodeFS() (fsstats.Space, error)
	Start(ctx context.Context) error
	Shutdown(ctx context.Context) error
}

// filesystemFamily is the background filesystem collection's figures
// (its latest snapshot, taken by the scraper once per scrape) and the node
// filesystem's statfs, taken at scrape time: the node filesystem and image
// filesystems on the node, writable layers and log sizes on containers.
// Pods have their volumes and their ephemeral storage (volumes.go of
// fsstats, and the sums of their containers' parts, kept during the
// scrape: containers are recorded before pods). The number of image
// filesystems and of volumes varies: the node and pods cost what they
// recorded last time.
type filesystemFamily struct {
	s       *Scraper
	slot    int
	nodePts int // the node statfs' points: capacity, available, usage, inodes, free inodes
	ctrPts  int // a container's: writable layer bytes and inodes, ephemeral storage's rootfs and logs parts, its filesystem's capacity and available
	eph     bool
	ctrFS   bool // container.filesystem.capacity or .available
	vol     volumeMetrics
	podCap  bool // k8s.pod.filesystem.capacity or .available
	podUse  bool // k8s.pod.filesystem.usage

	node   fsstats.Space
	nodeOK bool
	err    error

	// The node filesystem's statfs of scrape statGen (Scraper.gen): taken
	// once, for the node or else the first pod (their ephemeral storage's
	// capacity and available).
	statGen uint64
	stat    fsstats.Space
	statErr error
	// The pods' ephemeral storage in this scrape: each pod's containers'
	// parts.
	pods     map[string]*podEphemeral
	typeOpts map[string][]metadata.MetricAttributeOption
}

// volumeMetrics is which k8s.pod.volume.* metrics are enabled.
type volumeMetrics struct {
	available, capacity, usage, inodes, inodesFree, inodesUsed bool
}

func (v volumeMetrics) any() bool {
	return v.available || v.capacity || v.usage || v.inodes || v.inodesFree || v.inodesUsed
}

// podEphemeral is the sum of a pod's containers' parts of its ephemeral
// storage: writable layers and log files; unknown when one of them is.
type podEphemeral struct {
	bytes   uint64
	unknown bool
}

// NewFilesystem is the background filesystem collection the enabled
// metrics of m need, configured by cfg: nil when every filesystem metric
// is disabled; without runtime calls (cfg.Connect dropped) when the
// writable-layer (container.filesystem.*, k8s.container.ephemeral_storage.usage's
// rootfs part, k8s.pod.filesystem.usage) and image-filesystem metrics
// are; without the log walk when k8s.container.ephemeral_storage.usage
// (its logs part) and k8s.pod.filesystem.usage are; without the volumes
// when k8s.pod.volume.* and k8s.pod.filesystem.* are.
func NewFilesystem(m *metadata.MetricsConfig, cfg fsstats.Config) Filesystem {
	eph := m.K8sContainerEphemeralStorageUsage.Enabled
	podUse := m.K8sPodFilesystemUsage.Enabled
	runtime := m.ContainerFilesystemUsage.Enabled || m.ContainerFilesystemInodeUsed.Enabled || eph || podUse ||
		m.ContainerFilesystemCapacity.Enabled || m.ContainerFilesystemAvailable.Enabled ||
		m.K8sNodeImageFilesystemUsage.Enabled || m.K8sNodeImageFilesystemInodeUsed.Enabled ||
		m.K8sNodeImageFilesystemCapacity.Enabled || m.K8sNodeImageFilesystemAvailable.Enabled
	logs := eph || podUse
	volumes := podUse || m.K8sPodFilesystemCapacity.Enabled || m.K8sPodFilesystemAvailable.Enabled ||
		m.K8sPodVolumeAvailable.Enabled || m.K8sPodVolumeCapacity.Enabled || m.K8sPodVolumeUsage.Enabled ||
		m.K8sPodVolumeInodeCount.Enabled || m.K8sPodVolumeInodeFree.Enabled || m.K8sPodVolumeInodeUsed.Enabled
	node := m.K8sNodeFilesystemCapacity.Enabled || m.K8sNodeFilesystemAvailable.Enabled || m.K8sNodeFilesystemUsage.Enabled ||
		m.K8sNodeFilesystemInodeCount.Enabled || m.K8sNodeFilesystemInodeFree.Enabled
	if !runtime && !logs && !node && !volumes {
		return nil
	}
	if !runtime {
		cfg.Connect = nil
	}
	cfg.NoLogs = !logs
	cfg.NoVolumes = !volumes
	return fsstats.New(cfg)
}

func newFilesystemFamily(s *Scraper, m *metadata.MetricsConfig, slot int) family {
	if s.opts.Filesystem == nil {
		return nil
	}
	eph := m.K8sContainerEphemeralStorageUsage.Enabled
	return &filesystemFamily{
		s: s, slot: slot, eph: eph,
		ctrFS: m.ContainerFilesystemCapacity.Enabled || m.ContainerFilesystemAvailable.Enabled,
		vol: volumeMetrics{
			available: m.K8sPodVolumeAvailable.Enabled, capacity: m.K8sPodVolumeCapacity.Enabled, usage: m.K8sPodVolumeUsage.Enabled,
			inodes: m.K8sPodVolumeInodeCount.Enabled, inodesFree: m.K8sPodVolumeInodeFree.Enabled, inodesUsed: m.K8sPodVolumeInodeUsed.Enabled,
		},
		podCap: m.K8sPodFilesystemCapacity.Enabled || m.K8sPodFilesystemAvailable.Enabled,
		podUse: m.K8sPodFilesystemUsage.Enabled,
		nodePts: count(m.K8sNodeFilesystemCapacity.Enabled, m.K8sNodeFilesystemAvailable.Enabled, m.K8sNodeFilesystemUsage.Enabled,
			m.K8sNodeFilesystemInodeCount.Enabled, m.K8sNodeFilesystemInodeFree.Enabled),
		ctrPts: count(m.ContainerFilesystemUsage.Enabled, m.ContainerFilesystemInodeUsed.Enabled, eph, eph,
			m.ContainerFilesystemCapacity.Enabled, m.ContainerFilesystemAvailable.Enabled),
		pods: map[string]*podEphemeral{},
	}
}

// beginScrape forgets the last scrape's pod sums.
func (f *filesystemFamily) beginScrape() { clear(f.pods) }

// nodeFS is the node filesystem's statfs of this scrape, taken on first
// use in it.
func (f *filesystemFamily) nodeFS() (fsstats.Space, error) {
	if f.statGen != f.s.gen {
		f.statGen = f.s.gen
		f.stat, f.statErr = f.s.opts.Filesystem.NodeFS()
	}
	return f.stat, f.statErr
}

// read takes the node filesystem's statfs (one syscall); containers read
// nothing (their figures are in the snapshot).
func (f *filesystemFamily) read(e *entity) {
	f.node, f.nodeOK, f.err = fsstats.Space{}, false, nil
	if e.kind != kindNode || f.nodePts == 0 {
		return
	}
	f.node, f.err = f.nodeFS()
	f.nodeOK = f.err == nil
}

func (f *filesystemFamily) readErr() error { return f.err }

func (f *filesystemFamily) points(k cgroupKind, st *series) int {
	switch k {
	case kindNode:
		return f.nodePts + lastPts(st, f.slot)
	case kindPod:
		return lastPts(st, f.slot)
	case kindContainer:
		return f.ctrPts
	}
	return 0
}

func (f *filesystemFamily) record(e *entity, errs *scrapererror.ScrapeErrors) {
	switch e.kind {
	case kindNode:
		e.st.fam[f.slot].pts = f.recordNode(e.ts, errs)
	case kindPod:
		e.st.fam[f.slot].pts = f.recordPod(e.ts, e.id)
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
		mb.RecordK8sNodeFilesystemCapacityDataPoint(ts, calc.ClampInt64(sp.Capacity))
		mb.RecordK8sNodeFilesystemAvailableDataPoint(ts, calc.ClampInt64(sp.Available))
		mb.RecordK8sNodeFilesystemUsageDataPoint(ts, calc.ClampInt64(sp.Used))
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
			mb.RecordK8sNodeImageFilesystemCapacityDataPoint(ts, calc.ClampInt64(im.Space.V.Capacity), mp)
			mb.RecordK8sNodeImageFilesystemAvailableDataPoint(ts, calc.ClampInt64(im.Space.V.Available), mp)
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
//
// Its capacity and available are those of the runtime's first image
// filesystem, for a container with a writable layer (the kubelet's
// rootfs.capacityBytes and availableBytes). Its writable layer and log
// files (allocated blocks) are added to its pod's ephemeral storage.
func (f *filesystemFamily) recordContainer(ts pcommon.Timestamp, id, podUID string, ct *identity.Container) {
	mb, snap := f.s.mb, f.s.fsSnap
	l, layer := snap.Layers[id]
	if layer {
		recordOpt(ts, l.Bytes, mb.RecordContainerFilesystemUsageDataPoint)
		recordOpt(ts, l.Inodes, mb.RecordContainerFilesystemInodeUsedDataPoint)
		if f.eph && l.Bytes.OK {
			mb.RecordK8sContainerEphemeralStorageUsageDataPoint(ts, calc.ClampInt64(l.Bytes.V), metadata.AttributeK8sContainerEphemeralStorageFsTypeRootfs)
		}
		if f.ctrFS && len(snap.Images) > 0 && snap.Images[0].Space.OK {
			sp := &snap.Images[0].Space.V
			mb.RecordContainerFilesystemCapacityDataPoint(ts, calc.ClampInt64(sp.Capacity))
			mb.RecordContainerFilesystemAvailableDataPoint(ts, calc.ClampInt64(sp.Available))
		}
	}
	if podUID == "" {
		podUID = ct.PodUID
	}
	var pe *podEphemeral
	if f.podUse && podUID != "" && !ct.Sandbox && !f.s.ident.IsSandbox(id) {
		pe = f.pods[podUID]
		if pe == nil {
			pe = &podEphemeral{}
			f.pods[podUID] = pe
		}
		if layer && l.Bytes.OK {
			pe.bytes += l.Bytes.V
		} else {
			pe.unknown = true
		}
		if ct.ContainerName == "" || snap.LogsAllocated == nil {
			pe.unknown = true
		} else {
			// No log directory is no log file: nothing to add.
			pe.bytes += snap.LogsAllocated[fsstats.LogDir{PodUID: podUID, Container: ct.ContainerName}]
		}
	}
	if podUID == "" || ct.ContainerName == "" {
		return
	}
	if n, ok := snap.Logs[fsstats.LogDir{PodUID: podUID, Container: ct.ContainerName}]; ok {
		mb.RecordK8sContainerEphemeralStorageUsageDataPoint(ts, calc.ClampInt64(n), metadata.AttributeK8sContainerEphemeralStorageFsTypeLogs)
	}
}

// recordPod records a pod's volumes and ephemeral storage from the
// current snapshot (nothing before the first volume collection) and
// returns its points. The ephemeral storage's capacity and available are
// the node filesystem's, statted once per scrape; its usage is the sum of
// its containers' parts (recorded before it), its pod-level log files,
// its local ephemeral volumes and etc-hosts, absent when one is unknown or
// a container of it still waits for its identity.
func (f *filesystemFamily) recordPod(ts pcommon.Timestamp, uid string) int {
	mb, snap := f.s.mb, f.s.fsSnap
	if snap.Volumes == nil {
		return 0
	}
	n := 0
	pv := snap.Volumes[uid]
	if pv != nil && f.vol.any() {
		n += f.recordVolumes(ts, pv)
	}
	if f.podCap {
		if sp, err := f.nodeFS(); err == nil {
			mb.RecordK8sPodFilesystemCapacityDataPoint(ts, calc.ClampInt64(sp.Capacity))
			mb.RecordK8sPodFilesystemAvailableDataPoint(ts, calc.ClampInt64(sp.Available))
			n += 2
		}
	}
	if f.podUse && pv != nil && pv.Ephemeral.OK && snap.Layers != nil && snap.PodLogsAllocated != nil && !f.s.deferred[uid] {
		if pe := f.pods[uid]; pe == nil || !pe.unknown {
			total := pv.Ephemeral.V + snap.PodLogsAllocated[uid]
			if pe != nil {
				total += pe.bytes
			}
			mb.RecordK8sPodFilesystemUsageDataPoint(ts, calc.ClampInt64(total))
			n++
		}
	}
	return n
}

// recordVolumes records a pod's volumes; it returns the points.
func (f *filesystemFamily) recordVolumes(ts pcommon.Timestamp, pv *fsstats.PodVolumes) int {
	mb, n := f.s.mb, 0
	for i := range pv.Volumes {
		v := &pv.Volumes[i]
		var opts []metadata.MetricAttributeOption
		if v.Type != "" {
			opts = f.typeOpt(v.Type)
		}
		rec := func(on bool, val opt.Value[uint64], r func(pcommon.Timestamp, int64, string, ...metadata.MetricAttributeOption)) {
			if on && val.OK {
				r(ts, calc.ClampInt64(val.V), v.Name, opts...)
				n++
			}
		}
		if v.Space.OK {
			sp := &v.Space.V
			rec(f.vol.available, opt.Some(sp.Available), mb.RecordK8sPodVolumeAvailableDataPoint)
			rec(f.vol.capacity, opt.Some(sp.Capacity), mb.RecordK8sPodVolumeCapacityDataPoint)
			rec(f.vol.inodes, sp.Inodes, mb.RecordK8sPodVolumeInodeCountDataPoint)
			rec(f.vol.inodesFree, sp.InodesFree, mb.RecordK8sPodVolumeInodeFreeDataPoint)
		}
		rec(f.vol.usage, v.Used, mb.RecordK8sPodVolumeUsageDataPoint)
		rec(f.vol.inodesUsed, v.InodesUsed, mb.RecordK8sPodVolumeInodeUsedDataPoint)
	}
	return n
}

// typeOpt is the k8s.volume.type option of a type, one slice per value
// kept by the family (no allocation per point).
func (f *filesystemFamily) typeOpt(typ string) []metadata.MetricAttributeOption {
	if f.typeOpts == nil {
		f.typeOpts = map[string][]metadata.MetricAttributeOption{}
	}
	o, ok := f.typeOpts[typ]
	if !ok {
		o = []metadata.MetricAttributeOption{metadata.WithK8sVolumeTypeMetricAttribute(typ)}
		f.typeOpts[typ] = o
	}
	return o
}

func recordOpt(ts pcommon.Timestamp, v opt.Value[uint64], rec func(pcommon.Timestamp, int64)) {
	if v.OK {
		rec(ts, calc.ClampInt64(v.V))
	}
}

// recordOptAttr records v when present and returns the points recorded.
func recordOptAttr(ts pcommon.Timestamp, v opt.Value[uint64], attr string, rec func(pcommon.Timestamp, int64, string)) int {
	if !v.OK {
		return 0
	}
	rec(ts, calc.ClampInt64(v.V), attr)
	return 1
}

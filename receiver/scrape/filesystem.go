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
	v    *env
	slot int
	filesystemPlan

	node   fsstats.Space
	nodeOK bool
	err    error

	// The node filesystem's statfs of scrape statGen (pass.gen): taken
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

type (
	imageFn  = func(mbT, pcommon.Timestamp, int64, string)
	volumeFn = func(mbT, pcommon.Timestamp, int64, string, ...metadata.MetricAttributeOption)
)

// filesystemRecorders are the filesystem family's metrics, by what they
// are taken from; planFilesystem derives from them both what the
// background collection collects and what the family records.
type filesystemRecorders struct {
	// The node filesystem's statfs, taken at scrape time.
	nodeCapacity, nodeAvailable, nodeUsage, nodeInodes, nodeInodesFree recorder[gaugeFn]
	// The runtime's image filesystems (the snapshot's Images).
	imageUsage, imageInodesUsed, imageCapacity, imageAvailable recorder[imageFn]
	// A container's writable layer (Layers), and the space of the first
	// image filesystem.
	ctrUsage, ctrInodesUsed, ctrCapacity, ctrAvailable recorder[gaugeFn]
	// A container's ephemeral storage: its writable layer and log files.
	ephemeral recorder[func(mbT, pcommon.Timestamp, int64, metadata.AttributeK8sContainerEphemeralStorageFsType)]
	// A pod's ephemeral storage: the node filesystem's capacity and
	// available, the usage summed over its parts.
	podCapacity, podAvailable, podUsage recorder[gaugeFn]
	// A pod's volumes (Volumes).
	volAvailable, volCapacity, volUsage, volInodes, volInodesFree, volInodesUsed recorder[volumeFn]
}

func filesystemTable(m *metadata.MetricsConfig) filesystemRecorders {
	return filesystemRecorders{
		nodeCapacity:   rec(m.K8sNodeFilesystemCapacity.Enabled, mbT.RecordK8sNodeFilesystemCapacityDataPoint),
		nodeAvailable:  rec(m.K8sNodeFilesystemAvailable.Enabled, mbT.RecordK8sNodeFilesystemAvailableDataPoint),
		nodeUsage:      rec(m.K8sNodeFilesystemUsage.Enabled, mbT.RecordK8sNodeFilesystemUsageDataPoint),
		nodeInodes:     rec(m.K8sNodeFilesystemInodeCount.Enabled, mbT.RecordK8sNodeFilesystemInodeCountDataPoint),
		nodeInodesFree: rec(m.K8sNodeFilesystemInodeFree.Enabled, mbT.RecordK8sNodeFilesystemInodeFreeDataPoint),

		imageUsage:      rec(m.K8sNodeImageFilesystemUsage.Enabled, mbT.RecordK8sNodeImageFilesystemUsageDataPoint),
		imageInodesUsed: rec(m.K8sNodeImageFilesystemInodeUsed.Enabled, mbT.RecordK8sNodeImageFilesystemInodeUsedDataPoint),
		imageCapacity:   rec(m.K8sNodeImageFilesystemCapacity.Enabled, mbT.RecordK8sNodeImageFilesystemCapacityDataPoint),
		imageAvailable:  rec(m.K8sNodeImageFilesystemAvailable.Enabled, mbT.RecordK8sNodeImageFilesystemAvailableDataPoint),

		ctrUsage:      rec(m.ContainerFilesystemUsage.Enabled, mbT.RecordContainerFilesystemUsageDataPoint),
		ctrInodesUsed: rec(m.ContainerFilesystemInodeUsed.Enabled, mbT.RecordContainerFilesystemInodeUsedDataPoint),
		ctrCapacity:   rec(m.ContainerFilesystemCapacity.Enabled, mbT.RecordContainerFilesystemCapacityDataPoint),
		ctrAvailable:  rec(m.ContainerFilesystemAvailable.Enabled, mbT.RecordContainerFilesystemAvailableDataPoint),
		ephemeral:     rec(m.K8sContainerEphemeralStorageUsage.Enabled, mbT.RecordK8sContainerEphemeralStorageUsageDataPoint),

		podCapacity:  rec(m.K8sPodFilesystemCapacity.Enabled, mbT.RecordK8sPodFilesystemCapacityDataPoint),
		podAvailable: rec(m.K8sPodFilesystemAvailable.Enabled, mbT.RecordK8sPodFilesystemAvailableDataPoint),
		podUsage:     rec(m.K8sPodFilesystemUsage.Enabled, mbT.RecordK8sPodFilesystemUsageDataPoint),

		volAvailable:  rec(m.K8sPodVolumeAvailable.Enabled, mbT.RecordK8sPodVolumeAvailableDataPoint),
		volCapacity:   rec(m.K8sPodVolumeCapacity.Enabled, mbT.RecordK8sPodVolumeCapacityDataPoint),
		volUsage:      rec(m.K8sPodVolumeUsage.Enabled, mbT.RecordK8sPodVolumeUsageDataPoint),
		volInodes:     rec(m.K8sPodVolumeInodeCount.Enabled, mbT.RecordK8sPodVolumeInodeCountDataPoint),
		volInodesFree: rec(m.K8sPodVolumeInodeFree.Enabled, mbT.RecordK8sPodVolumeInodeFreeDataPoint),
		volInodesUsed: rec(m.K8sPodVolumeInodeUsed.Enabled, mbT.RecordK8sPodVolumeInodeUsedDataPoint),
	}
}

// filesystemPlan is what the enabled filesystem metrics need: what the
// background collection collects (NewFilesystem) and what the family
// records.
type filesystemPlan struct {
	rec     filesystemRecorders
	nodePts int // the node statfs' points: capacity, available, usage, inodes, free inodes
	ctrPts  int // a container's: writable layer bytes and inodes, ephemeral storage's rootfs and logs parts, its filesystem's capacity and available
	eph     bool
	ctrFS   bool // container.filesystem.capacity or .available
	vol     volumeMetrics
	podCap  bool // k8s.pod.filesystem.capacity or .available
	podUse  bool // k8s.pod.filesystem.usage
	// What the background collection collects: writable layers and image
	// filesystems (runtime calls), log files, volumes; node: the node
	// filesystem's statfs is needed.
	layers, logs, volumes, node bool
}

// volumeMetrics is which k8s.pod.volume.* metrics are enabled.
type volumeMetrics struct {
	available, capacity, usage, inodes, inodesFree, inodesUsed bool
}

func (v volumeMetrics) any() bool {
	return v.available || v.capacity || v.usage || v.inodes || v.inodesFree || v.inodesUsed
}

// planFilesystem derives the plan from the recorder table of m.
func planFilesystem(m *metadata.MetricsConfig) filesystemPlan {
	r := filesystemTable(m)
	p := filesystemPlan{
		rec:    r,
		eph:    r.ephemeral.on,
		ctrFS:  r.ctrCapacity.on || r.ctrAvailable.on,
		podCap: r.podCapacity.on || r.podAvailable.on,
		podUse: r.podUsage.on,
		vol: volumeMetrics{
			available: r.volAvailable.on, capacity: r.volCapacity.on, usage: r.volUsage.on,
			inodes: r.volInodes.on, inodesFree: r.volInodesFree.on, inodesUsed: r.volInodesUsed.on,
		},
		nodePts: count(r.nodeCapacity.on, r.nodeAvailable.on, r.nodeUsage.on, r.nodeInodes.on, r.nodeInodesFree.on),
	}
	p.ctrPts = count(r.ctrUsage.on, r.ctrInodesUsed.on, r.ctrCapacity.on, r.ctrAvailable.on) + 2*count(p.eph) // ephemeral: rootfs and logs
	p.layers = p.eph || p.podUse || p.ctrFS || r.ctrUsage.on || r.ctrInodesUsed.on ||
		r.imageUsage.on || r.imageInodesUsed.on || r.imageCapacity.on || r.imageAvailable.on
	p.logs = p.eph || p.podUse
	p.volumes = p.podUse || p.podCap || p.vol.any()
	p.node = p.nodePts > 0
	return p
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
	p := planFilesystem(m)
	if !p.layers && !p.logs && !p.node && !p.volumes {
		return nil
	}
	if !p.layers {
		cfg.Connect = nil
	}
	cfg.NoLogs = !p.logs
	cfg.NoVolumes = !p.volumes
	return fsstats.New(cfg)
}

func newFilesystemFamily(v *env, m *metadata.MetricsConfig, slot int) family {
	if v.fs == nil {
		return nil
	}
	return &filesystemFamily{v: v, slot: slot, filesystemPlan: planFilesystem(m), pods: map[string]*podEphemeral{}}
}

// beginScrape forgets the last scrape's pod sums.
func (f *filesystemFamily) beginScrape() { clear(f.pods) }

// nodeFS is the node filesystem's statfs of this scrape, taken on first
// use in it.
func (f *filesystemFamily) nodeFS(p *pass) (fsstats.Space, error) {
	if gen := p.gen; f.statGen != gen {
		f.statGen = gen
		f.stat, f.statErr = f.v.fs.NodeFS()
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
	f.node, f.err = f.nodeFS(e.pass)
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
		e.st.fam[f.slot].pts = f.recordNode(e.ts, e.pass.fs, errs)
	case kindPod:
		e.st.fam[f.slot].pts = f.recordPod(e.ts, e.pass, e.id)
	case kindContainer:
		f.recordContainer(e.ts, e.pass.fs, e.id, e.pod, e.ct)
	}
}

// recordNode records the node filesystem (statfs now) and the image
// filesystems of the current snapshot; it returns the image filesystems'
// points.
func (f *filesystemFamily) recordNode(ts pcommon.Timestamp, snap *fsstats.Snapshot, errs *scrapererror.ScrapeErrors) int {
	mb := f.v.mb
	if f.err != nil {
		errs.AddPartial(f.nodePts, fmt.Errorf("node: filesystem: %w", f.err))
	} else if f.nodeOK {
		sp := &f.node
		f.rec.nodeCapacity.record(mb, ts, calc.ClampInt64(sp.Capacity))
		f.rec.nodeAvailable.record(mb, ts, calc.ClampInt64(sp.Available))
		f.rec.nodeUsage.record(mb, ts, calc.ClampInt64(sp.Used))
		recordOpt(mb, ts, sp.Inodes, f.rec.nodeInodes.record)
		recordOpt(mb, ts, sp.InodesFree, f.rec.nodeInodesFree.record)
	}
	n := 0
	for i := range snap.Images {
		im := &snap.Images[i]
		mp := im.Mountpoint
		n += recordOptAttr(mb, ts, im.Bytes, mp, f.rec.imageUsage.record)
		n += recordOptAttr(mb, ts, im.Inodes, mp, f.rec.imageInodesUsed.record)
		if im.Space.OK {
			f.rec.imageCapacity.record(mb, ts, calc.ClampInt64(im.Space.V.Capacity), mp)
			f.rec.imageAvailable.record(mb, ts, calc.ClampInt64(im.Space.V.Available), mp)
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
func (f *filesystemFamily) recordContainer(ts pcommon.Timestamp, snap *fsstats.Snapshot, id, podUID string, ct *identity.Container) {
	mb := f.v.mb
	l, layer := snap.Layers[id]
	if layer {
		recordOpt(mb, ts, l.Bytes, f.rec.ctrUsage.record)
		recordOpt(mb, ts, l.Inodes, f.rec.ctrInodesUsed.record)
		if f.eph && l.Bytes.OK {
			f.rec.ephemeral.record(mb, ts, calc.ClampInt64(l.Bytes.V), metadata.AttributeK8sContainerEphemeralStorageFsTypeRootfs)
		}
		if f.ctrFS && len(snap.Images) > 0 && snap.Images[0].Space.OK {
			sp := &snap.Images[0].Space.V
			f.rec.ctrCapacity.record(mb, ts, calc.ClampInt64(sp.Capacity))
			f.rec.ctrAvailable.record(mb, ts, calc.ClampInt64(sp.Available))
		}
	}
	if podUID == "" {
		podUID = ct.PodUID
	}
	var pe *podEphemeral
	if f.podUse && podUID != "" && !ct.Sandbox && !f.v.ident.IsSandbox(id) {
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
		f.rec.ephemeral.record(mb, ts, calc.ClampInt64(n), metadata.AttributeK8sContainerEphemeralStorageFsTypeLogs)
	}
}

// recordPod records a pod's volumes and ephemeral storage from the
// current snapshot (nothing before the first volume collection) and
// returns its points. The ephemeral storage's capacity and available are
// the node filesystem's, statted once per scrape; its usage is the sum of
// its containers' parts (recorded before it), its pod-level log files,
// its local ephemeral volumes and etc-hosts, absent when one is unknown or
// a container of it still waits for its identity.
func (f *filesystemFamily) recordPod(ts pcommon.Timestamp, p *pass, uid string) int {
	mb, snap := f.v.mb, p.fs
	if snap.Volumes == nil {
		return 0
	}
	n := 0
	pv := snap.Volumes[uid]
	if pv != nil && f.vol.any() {
		n += f.recordVolumes(ts, pv)
	}
	if f.podCap {
		if sp, err := f.nodeFS(p); err == nil {
			f.rec.podCapacity.record(mb, ts, calc.ClampInt64(sp.Capacity))
			f.rec.podAvailable.record(mb, ts, calc.ClampInt64(sp.Available))
			n += 2
		}
	}
	if f.podUse && pv != nil && pv.Ephemeral.OK && snap.Layers != nil && snap.PodLogsAllocated != nil && !p.deferred[uid] {
		if pe := f.pods[uid]; pe == nil || !pe.unknown {
			total := pv.Ephemeral.V + snap.PodLogsAllocated[uid]
			if pe != nil {
				total += pe.bytes
			}
			f.rec.podUsage.record(mb, ts, calc.ClampInt64(total))
			n++
		}
	}
	return n
}

// recordVolumes records a pod's volumes; it returns the points.
func (f *filesystemFamily) recordVolumes(ts pcommon.Timestamp, pv *fsstats.PodVolumes) int {
	mb, n := f.v.mb, 0
	for i := range pv.Volumes {
		v := &pv.Volumes[i]
		var opts []metadata.MetricAttributeOption
		if v.Type != "" {
			opts = f.typeOpt(v.Type)
		}
		rec := func(on bool, val opt.Value[uint64], r volumeFn) {
			if on && val.OK {
				r(mb, ts, calc.ClampInt64(val.V), v.Name, opts...)
				n++
			}
		}
		if v.Space.OK {
			sp := &v.Space.V
			rec(f.vol.available, opt.Some(sp.Available), f.rec.volAvailable.record)
			rec(f.vol.capacity, opt.Some(sp.Capacity), f.rec.volCapacity.record)
			rec(f.vol.inodes, sp.Inodes, f.rec.volInodes.record)
			rec(f.vol.inodesFree, sp.InodesFree, f.rec.volInodesFree.record)
		}
		rec(f.vol.usage, v.Used, f.rec.volUsage.record)
		rec(f.vol.inodesUsed, v.InodesUsed, f.rec.volInodesUsed.record)
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

func recordOpt(mb mbT, ts pcommon.Timestamp, v opt.Value[uint64], rec gaugeFn) {
	if v.OK {
		rec(mb, ts, calc.ClampInt64(v.V))
	}
}

// recordOptAttr records v when present and returns the points recorded.
func recordOptAttr(mb mbT, ts pcommon.Timestamp, v opt.Value[uint64], attr string, rec imageFn) int {
	if !v.OK {
		return 0
	}
	rec(mb, ts, calc.ClampInt64(v.V), attr)
	return 1
}

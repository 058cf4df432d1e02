// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/calc"
	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/gpu"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/podresources"
)

// GPUOptions configure NVIDIA GPU metrics. The zero value turns them off.
type GPUOptions struct {
	// Enabled uses NVML when the node has it.
	Enabled bool
	// ProcessAttribution maps the host PIDs NVML reports to containers
	// through /proc/<pid>/cgroup of the host handle's procfs (needs hostPID).
	ProcessAttribution bool
	// PodResourcesEndpoint, when not empty, is the kubelet pod-resources
	// socket as seen on the host; the host handle's root is prefixed to it.
	PodResourcesEndpoint string
	// NVML is the library; nil means the real one (gpu.DefaultLibrary). Tests
	// inject go-nvml's mocks.
	NVML gpu.Library
	// Names resolves a container ID to its Kubernetes names, to join
	// pod-resources allocations; nil uses the names the scraper's Identity
	// gives the container (runtime, else the kubelet's log directories).
	Names ContainerNamer
}

// ContainerNamer resolves a container ID to the namespace, pod and
// container names the pod-resources API uses.
type ContainerNamer interface {
	ContainerRef(ctx context.Context, containerID string) (gpu.Ref, bool)
}

// podResourcesTimeout bounds one List call to the kubelet.
const podResourcesTimeout = 5 * time.Second

// gpuState is the scraper's GPU part, set up in Start when NVML is there.
type gpuState struct {
	v       *env
	coll    *gpu.Collector
	podres  *podresources.Client
	names   ContainerNamer
	snap    *gpu.Snapshot // this scrape's
	ctx     context.Context
	devices map[string]*gpuSeries // device UUID ->
	gen     uint64
}

type gpuSeries struct {
	start      pcommon.Timestamp
	lastEnergy float64
	hasEnergy  bool
	seen       uint64
}

// startGPU opens NVML; nil when GPU metrics are off. A node without
// library, driver or GPU gets one info log and no GPU metrics; a
// pod-resources socket that cannot be set up gets a warning and process
// attribution only. Nothing here fails Start.
func startGPU(o GPUOptions, v *env) *gpuState {
	if !o.Enabled {
		return nil
	}
	lib := o.NVML
	if lib == nil {
		lib = gpu.DefaultLibrary()
	}
	gopts := gpu.Options{Library: lib}
	if o.ProcessAttribution {
		gopts.Procs = v.proc
	}
	var podres *podresources.Client
	if o.PodResourcesEndpoint != "" {
		sock := filepath.Join(v.rootPath, o.PodResourcesEndpoint)
		c, err := podresources.New(sock)
		if err != nil {
			v.logger.Warn("Cannot use the kubelet pod-resources API; GPU attribution by allocation is off", zap.Error(err))
		} else {
			podres = c
			gopts.PodResources = c
		}
	}
	coll := gpu.New(gopts)
	n, err := coll.Open()
	if err != nil {
		_ = podres.Close()
		if errors.Is(err, gpu.ErrUnavailable) {
			v.logger.Info("No NVIDIA GPU metrics on this node; GPU metrics are off, everything else is unaffected", zap.Error(err))
		} else {
			v.logger.Warn("Cannot initialize NVML; GPU metrics are off, everything else is unaffected", zap.Error(err))
		}
		return nil
	}
	g := &gpuState{v: v, coll: coll, podres: podres, names: o.Names, devices: map[string]*gpuSeries{}}
	v.logger.Info("NVIDIA GPU metrics on", zap.Int("gpus", n),
		zap.Bool("process_attribution", gopts.Procs != nil), zap.Bool("pod_resources", podres != nil))
	return g
}

// ownerNames resolves the container IDs NVML's processes map to into
// Kubernetes names, for a device's owner (Snapshot.Owner): Names when set,
// else the scraper's identity, asked with the pod UID the container's
// cgroup path in tree gives (the kubelet's log directories name a
// container only together with its pod), exactly as the container's own
// resource is named (acceleratorFamily). Without names, a device used by
// one container and allocated by the kubelet to the same container would
// look allocated to another, and lose its owner.
func (g *gpuState) ownerNames(ctx context.Context, tree *cgroupfs.Tree) func(string) (gpu.Ref, bool) {
	if names := g.names; names != nil {
		return func(id string) (gpu.Ref, bool) { return names.ContainerRef(ctx, id) }
	}
	var pods map[string]string // container ID -> pod UID, built on first use
	return func(id string) (gpu.Ref, bool) {
		if pods == nil {
			pods = make(map[string]string, len(tree.Containers))
			for i := range tree.Containers {
				pods[tree.Containers[i].ContainerID] = tree.Containers[i].PodUID
			}
		}
		ct, _ := g.v.ident.Container(id, pods[id])
		if ct.Namespace == "" || ct.PodName == "" || ct.ContainerName == "" {
			return gpu.Ref{}, false
		}
		return gpu.Ref{Namespace: ct.Namespace, Pod: ct.PodName, Container: ct.ContainerName}, true
	}
}

// shutdown releases NVML and the pod-resources connection; nil: nothing
// to release.
func (g *gpuState) shutdown() error {
	if g == nil {
		return nil
	}
	return errors.Join(g.coll.Close(), g.podres.Close())
}

// scrape reads NVML once and emits every device's points. As the
// semantic conventions' hardware metrics have them, hw.id and the other
// hw.* attributes are on the points; the resource is the node's, with the
// identity of the container a device belongs to, if any. Each device is
// emitted on its own (its cumulative points carry its start time): devices
// of the same resource make several entries with equal attributes, which
// Scrape merges (mergeEqualResources). The snapshot is kept for the
// container resources recorded after it.
func (g *gpuState) scrape(ctx context.Context, p *pass, tree *cgroupfs.Tree, errs *scrapererror.ScrapeErrors) {
	if g == nil {
		return
	}
	g.gen++
	g.snap, g.ctx = nil, ctx
	cctx, cancel := context.WithTimeout(ctx, podResourcesTimeout)
	defer cancel()
	snap, gerrs := g.coll.Collect(cctx)
	for _, err := range gerrs {
		errs.AddPartial(1, err)
	}
	if snap == nil {
		return
	}
	g.snap = snap
	names := g.ownerNames(ctx, tree)
	ts, mb := pcommon.NewTimestampFromTime(p.now), g.v.mb
	for _, d := range snap.Devices {
		st := g.devices[d.UUID]
		if st == nil {
			st = &gpuSeries{start: ts}
			g.devices[d.UUID] = st
		}
		st.seen = g.gen
		g.recordDevice(ts, d, st)
		rb := mb.NewResourceBuilder()
		g.v.setNodeName(rb)
		// A device (GPU or MIG instance) that belongs to exactly one
		// container carries that container's identity, so that its
		// device-level metrics are the container's; a shared one does not.
		if o, ok := snap.Owner(d.UUID, names); ok {
			if o.ContainerID != "" {
				rb.SetContainerID(o.ContainerID)
			}
			if o.Ref != nil {
				rb.SetK8sNamespaceName(o.Ref.Namespace)
				rb.SetK8sPodName(o.Ref.Pod)
				rb.SetK8sContainerName(o.Ref.Container)
			}
		}
		mb.EmitForResource(metadata.WithResource(rb.Emit()), metadata.WithStartTimeOverride(st.start))
	}
	for k, st := range g.devices {
		if st.seen != g.gen {
			delete(g.devices, k)
		}
	}
}

// deviceAttrs are a device's hw.* point attributes: hw.id and hw.vendor
// passed to each record call, hw.model (gpuOpts) and hw.parent (both
// gpuOpts and commonOpts) as options, set only when known.
type deviceAttrs struct {
	id         string
	gpuOpts    []metadata.MetricAttributeOption // hw.model, hw.parent: the conventions' GPU metrics
	commonOpts []metadata.MetricAttributeOption // hw.parent: the conventions' common hardware attributes
}

func newDeviceAttrs(d *gpu.Device) *deviceAttrs {
	a := &deviceAttrs{id: d.UUID}
	if d.Model != "" {
		a.gpuOpts = append(a.gpuOpts, metadata.WithHwModelMetricAttribute(d.Model))
	}
	if d.Parent != "" {
		p := metadata.WithHwParentMetricAttribute(d.Parent)
		a.gpuOpts = append(a.gpuOpts, p)
		a.commonOpts = append(a.commonOpts, p)
	}
	return a
}

func (g *gpuState) recordDevice(ts pcommon.Timestamp, d *gpu.Device, st *gpuSeries) {
	a := newDeviceAttrs(d)
	id, vendor, o := a.id, gpu.Vendor, a.gpuOpts
	if d.MemoryUsed.OK {
		g.v.mb.RecordHwGpuMemoryUsageDataPoint(ts, calc.ClampInt64(d.MemoryUsed.V), id, vendor, o...)
	}
	if d.MemoryTotal.OK {
		g.v.mb.RecordHwGpuMemoryLimitDataPoint(ts, calc.ClampInt64(d.MemoryTotal.V), id, vendor, o...)
	}
	if u := d.MemoryUtilization(); u.OK {
		g.v.mb.RecordHwGpuMemoryUtilizationDataPoint(ts, u.V, id, vendor, o...)
	}
	for _, u := range []struct {
		v    gpu.Opt[float64]
		task metadata.AttributeHwGpuTask
	}{
		{d.Utilization, metadata.AttributeHwGpuTaskGeneral},
		{d.EncoderUtilization, metadata.AttributeHwGpuTaskEncoder},
		{d.DecoderUtilization, metadata.AttributeHwGpuTaskDecoder},
	} {
		if u.v.OK {
			g.v.mb.RecordHwGpuUtilizationDataPoint(ts, u.v.V, id, vendor, u.task, o...)
		}
	}
	if d.MemoryControllerUtilization.OK {
		g.v.mb.RecordHwGpuMemoryControllerUtilizationDataPoint(ts, d.MemoryControllerUtilization.V, id, vendor, o...)
	}
	if d.PowerW.OK {
		g.v.mb.RecordHwPowerDataPoint(ts, d.PowerW.V, id, metadata.AttributeHwTypeGpu, a.commonOpts...)
	}
	if d.EnergyJ.OK {
		// The counter restarts at 0 when the driver reloads: a new start.
		if st.hasEnergy && d.EnergyJ.V < st.lastEnergy {
			st.start = ts
		}
		st.lastEnergy, st.hasEnergy = d.EnergyJ.V, true
		g.v.mb.RecordHwEnergyDataPoint(ts, d.EnergyJ.V, id, metadata.AttributeHwTypeGpu, a.commonOpts...)
	}
	if d.TemperatureC.OK {
		g.v.mb.RecordHwTemperatureDataPoint(ts, d.TemperatureC.V, id, a.commonOpts...)
	}
	g.recordHealth(ts, d, a)
}

// recordGPUHealth records clocks, PCIe, ECC, remapped rows, power limit,
// fan, P-state, memory temperature, NVLink, GPM activity and XID counts;
// each only when NVML gave it.
func (g *gpuState) recordHealth(ts pcommon.Timestamp, d *gpu.Device, a *deviceAttrs) {
	id, vendor, o := a.id, gpu.Vendor, a.gpuOpts
	for _, c := range []struct {
		cur, max gpu.Opt[float64]
		dom      metadata.AttributeHwGpuClockDomain
	}{
		{d.ClockSMMHz, d.MaxClockSMMHz, metadata.AttributeHwGpuClockDomainSm},
		{d.ClockMemMHz, d.MaxClockMemMHz, metadata.AttributeHwGpuClockDomainMemory},
	} {
		if c.cur.OK {
			g.v.mb.RecordHwGpuClockFrequencyDataPoint(ts, int64(c.cur.V*1e6), id, vendor, c.dom, o...)
		}
		if c.max.OK {
			g.v.mb.RecordHwGpuClockFrequencyLimitDataPoint(ts, int64(c.max.V*1e6), id, vendor, c.dom, o...)
		}
	}
	if d.ClockEventReasons.OK {
		for _, r := range gpu.ClockEventReasons {
			v := int64(0)
			if d.ClockEventReasons.V&r.Bit != 0 {
				v = 1
			}
			g.v.mb.RecordHwGpuClockEventReasonsDataPoint(ts, v, id, vendor, metadata.MapAttributeHwGpuClockEventReason[r.Name], o...)
		}
	}
	if d.PCIeTxBps.OK {
		g.v.mb.RecordHwGpuPcieThroughputDataPoint(ts, d.PCIeTxBps.V, id, vendor, metadata.AttributeNetworkIoDirectionTransmit, o...)
	}
	if d.PCIeRxBps.OK {
		g.v.mb.RecordHwGpuPcieThroughputDataPoint(ts, d.PCIeRxBps.V, id, vendor, metadata.AttributeNetworkIoDirectionReceive, o...)
	}
	if d.PCIeReplays.OK {
		g.v.mb.RecordHwGpuPcieReplaysDataPoint(ts, calc.ClampInt64(d.PCIeReplays.V), id, vendor, o...)
	}
	g.recordECC(ts, d, a)
	if d.RemappedCorrectable.OK {
		g.v.mb.RecordHwGpuMemoryRemapRowsDataPoint(ts, calc.ClampInt64(d.RemappedCorrectable.V), id, vendor, metadata.AttributeHwGpuMemoryRemapCauseCorrectable, o...)
	}
	if d.RemappedUncorrectable.OK {
		g.v.mb.RecordHwGpuMemoryRemapRowsDataPoint(ts, calc.ClampInt64(d.RemappedUncorrectable.V), id, vendor, metadata.AttributeHwGpuMemoryRemapCauseUncorrectable, o...)
	}
	if d.RemapPending.OK {
		g.v.mb.RecordHwGpuMemoryRemapStatusDataPoint(ts, boolInt(d.RemapPending.V), id, vendor, metadata.AttributeHwGpuMemoryRemapStatePending, o...)
	}
	if d.RemapFailure.OK {
		g.v.mb.RecordHwGpuMemoryRemapStatusDataPoint(ts, boolInt(d.RemapFailure.V), id, vendor, metadata.AttributeHwGpuMemoryRemapStateFailed, o...)
	}
	if d.PowerLimitW.OK {
		g.v.mb.RecordHwGpuPowerLimitDataPoint(ts, d.PowerLimitW.V, id, vendor, o...)
	}
	if d.FanSpeed.OK {
		g.v.mb.RecordHwFanSpeedRatioDataPoint(ts, d.FanSpeed.V, id, a.commonOpts...)
	}
	if d.PerformanceState.OK {
		g.v.mb.RecordHwGpuPerformanceStateDataPoint(ts, d.PerformanceState.V, id, vendor, o...)
	}
	if d.MemoryTemperatureC.OK {
		g.v.mb.RecordHwGpuMemoryTemperatureDataPoint(ts, d.MemoryTemperatureC.V, id, vendor, o...)
	}
	for _, l := range d.NVLinks {
		if l.TxBytes.OK {
			g.v.mb.RecordHwGpuIoDataPoint(ts, calc.ClampInt64(l.TxBytes.V), id, vendor, metadata.AttributeNetworkIoDirectionTransmit, int64(l.Link), o...)
		}
		if l.RxBytes.OK {
			g.v.mb.RecordHwGpuIoDataPoint(ts, calc.ClampInt64(l.RxBytes.V), id, vendor, metadata.AttributeNetworkIoDirectionReceive, int64(l.Link), o...)
		}
	}
	for k, x := range d.Activity {
		if kind, ok := metadata.MapAttributeHwGpuActivityKind[string(k)]; ok {
			g.v.mb.RecordHwGpuActivityDataPoint(ts, x, id, vendor, kind, o...)
		}
	}
	for xid, n := range d.XID {
		g.v.mb.RecordHwGpuXidErrorsDataPoint(ts, calc.ClampInt64(n), id, vendor, calc.ClampInt64(xid), o...)
	}
}

// recordGPUECC records the ECC error counts: since the driver loaded
// (NVML's volatile counters) as the conventions' hw.errors{hw.type=gpu,
// error.type}, over the GPU's life (aggregate) as
// hw.gpu.memory.ecc.lifetime_errors. The same errors, never in one metric:
// a sum over its points would count them twice.
func (g *gpuState) recordECC(ts pcommon.Timestamp, d *gpu.Device, a *deviceAttrs) {
	for t, typ := range []metadata.AttributeErrorType{metadata.AttributeErrorTypeCorrected, metadata.AttributeErrorTypeUncorrected} {
		if v := d.ECC[gpu.ECCVolatile][t]; v.OK {
			g.v.mb.RecordHwErrorsDataPoint(ts, calc.ClampInt64(v.V), a.id, gpu.Vendor, metadata.AttributeHwTypeGpu, typ, a.gpuOpts...)
		}
		if v := d.ECC[gpu.ECCAggregate][t]; v.OK {
			g.v.mb.RecordHwGpuMemoryEccLifetimeErrorsDataPoint(ts, calc.ClampInt64(v.V), a.id, gpu.Vendor, typ, a.gpuOpts...)
		}
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// acceleratorRecorders are container.accelerator.*.
type acceleratorRecorders struct {
	duty            recorder[func(mbT, pcommon.Timestamp, float64, string, string, ...metadata.MetricAttributeOption)]
	memUsed, memTot recorder[func(mbT, pcommon.Timestamp, int64, string, string, ...metadata.MetricAttributeOption)]
}

func acceleratorTable(m *metadata.MetricsConfig) acceleratorRecorders {
	return acceleratorRecorders{
		duty:    rec(m.ContainerAcceleratorDutyCycle.Enabled, mbT.RecordContainerAcceleratorDutyCycleDataPoint),
		memUsed: rec(m.ContainerAcceleratorMemoryUsed.Enabled, mbT.RecordContainerAcceleratorMemoryUsedDataPoint),
		memTot:  rec(m.ContainerAcceleratorMemoryTotal.Enabled, mbT.RecordContainerAcceleratorMemoryTotalDataPoint),
	}
}

// acceleratorFamily is a container's use of each GPU it uses or was
// allocated (container.accelerator.*), from the scrape's GPU snapshot
// (gpuState.scrape reads NVML before the containers); nothing is read per
// container. The number of devices varies: a vanished container costs
// what it recorded last time.
type acceleratorFamily struct {
	noSums
	v    *env
	slot int
	rec  acceleratorRecorders
}

// newAcceleratorFamily is built after startGPU: without NVML there is no
// family.
func newAcceleratorFamily(v *env, m *metadata.MetricsConfig, slot int) family {
	r := acceleratorTable(m)
	f := &acceleratorFamily{v: v, slot: slot, rec: r}
	if v.gpu == nil || !r.duty.on && !r.memUsed.on && !r.memTot.on {
		return nil
	}
	return f
}

func (*acceleratorFamily) read(*entity)   {}
func (*acceleratorFamily) readErr() error { return nil }

func (f *acceleratorFamily) points(_ cgroupKind, st *series) int { return lastPts(st, f.slot) }

// record records the container's use of each device on its resource. The
// container's identity ct gives the namespace, pod and container names
// that join the kubelet's allocations, unless Names is set.
func (f *acceleratorFamily) record(e *entity, _ *scrapererror.ScrapeErrors) {
	g := f.v.gpu
	if e.kind != kindContainer || g.snap == nil {
		return
	}
	var ref *gpu.Ref
	switch ct := e.ct; {
	case g.podres == nil:
	case g.names != nil:
		if r, ok := g.names.ContainerRef(g.ctx, e.id); ok {
			ref = &r
		}
	case ct.Namespace != "" && ct.PodName != "" && ct.ContainerName != "":
		ref = &gpu.Ref{Namespace: ct.Namespace, Pod: ct.PodName, Container: ct.ContainerName}
	}
	mb, ts, n := f.v.mb, e.ts, 0
	for _, cd := range g.snap.Container(e.id, ref) {
		d := cd.Device
		var model []metadata.MetricAttributeOption // hw.model when NVML named the device
		if d.Model != "" {
			model = append(model, metadata.WithHwModelMetricAttribute(d.Model))
		}
		if cd.DutyCycle.OK {
			f.rec.duty.record(mb, ts, cd.DutyCycle.V, d.UUID, gpu.Vendor, model...)
			n += count(f.rec.duty.on)
		}
		if cd.MemoryUsed.OK {
			f.rec.memUsed.record(mb, ts, calc.ClampInt64(cd.MemoryUsed.V), d.UUID, gpu.Vendor, model...)
			n += count(f.rec.memUsed.on)
		}
		if d.MemoryTotal.OK {
			f.rec.memTot.record(mb, ts, calc.ClampInt64(d.MemoryTotal.V), d.UUID, gpu.Vendor, model...)
			n += count(f.rec.memTot.on)
		}
	}
	e.st.fam[f.slot].pts = n
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package scrape is the receiver's scrape pipeline: discovery of the cgroup
// tree, reads, derived values and pdata assembly.
package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/procfs"
)

// Host is the host root the scrape reads (node.Host, the configuration's
// one handle on root_path): the cgroup layout (an error names root_path
// when there is none), /proc, and Discovered, which takes every tree a
// scrape discovered (the logs signal's cgroup index reuses it). Root is
// the prefix the GPU and huge page readers join their paths to.
type Host interface {
	Root() string
	Layout() (*cgroupfs.Layout, error)
	Proc() procfs.FS
	Discovered(t *cgroupfs.Tree)
}

// Options is what the scraper takes from the receiver's Config.
type Options struct {
	// Host is the host handle; required.
	Host                 Host
	NodeName             string
	StandaloneContainers bool
	MetricsBuilderConfig metadata.MetricsBuilderConfig
	// Now is the clock; nil means time.Now. Tests inject their own.
	Now func() time.Time
	// TraceRead, when set, is called with the path of every file a scrape
	// opens. Benchmarks use it to replay the scrape's exact file set as the
	// raw-read floor; nil in production.
	TraceRead func(path string)
	// GPU configures NVIDIA GPU metrics (gpu.go); the zero value is off.
	GPU GPUOptions
	// Filesystem is the background filesystem collection (filesystem.go);
	// nil: no filesystem metrics.
	Filesystem Filesystem

	// Identity resolves container IDs; nil means the cgroup path only.
	// The scraper starts and stops it.
	Identity Identity
	// Filter selects pods and containers by namespace, pod and container
	// name.
	Filter identity.Filter
	// IncludeSandboxes reports pause/sandbox containers too.
	IncludeSandboxes bool
	// SystemContainers are the configured cgroups of the node's system
	// containers (system.go); the zero value detects the kubelet's and the
	// runtime's.
	SystemContainers SystemCgroups
	// NoPodSeries and NoNodeSeries drop the pod-level and node-level series
	// (the node's system containers are node-level).
	NoPodSeries  bool
	NoNodeSeries bool
	// PodLabels sets k8s.pod.label.<key> on pod and container resources.
	PodLabels bool
	// Telemetry records the receiver's own metrics; nil records nothing.
	Telemetry *metadata.TelemetryBuilder
	// Events receives container events (OOM kills, restarts: events.go);
	// nil, or not Active at Start, detects none. With every metric off
	// (MetricsBuilderConfig.Metrics' zero value) the scrape reads for the
	// events only.
	Events EventSink
}

// Scraper scrapes one node. Scrape is called by one goroutine at a time
// (the scraper controller's). What a scrape needs is in three places: env
// (fixed at Start, what families read and record through), the series
// (state kept between scrapes) and each Scrape's pass (its scratch).
type Scraper struct {
	set  receiver.Settings
	opts Options
	now  func() time.Time
	env  env

	series map[seriesKey]*series
	gen    uint64
	last   *pass // the last scrape's pass, whose buffers the next reuses

	// families are the metric families every entity is read and recorded
	// through (family.go), built in Start from the enabled metrics.
	families []family
	sys      *systemContainers // the node's system containers (system.go); nil when off
}

// New returns a scraper; nothing is read until Start.
func New(set receiver.Settings, opts Options) *Scraper {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	ident := opts.Identity
	if ident == nil {
		ident = pathIdentity{}
	}
	return &Scraper{set: set, opts: opts, now: now, env: env{nodeName: opts.NodeName, logger: set.Logger, ident: ident, fs: opts.Filesystem}}
}

// Start takes the cgroup layout from the host handle. It fails, naming
// root_path, when nothing there is a cgroup filesystem: a DaemonSet
// without the host mount should not run silently empty.
func (s *Scraper) Start(ctx context.Context, _ component.Host) error {
	host := s.opts.Host
	if host == nil {
		return errors.New("scrape: no host handle")
	}
	l, err := host.Layout()
	if err != nil {
		return err
	}
	v := &s.env
	v.rootPath = host.Root()
	v.layout = l
	v.reader = cgroupfs.NewReader(l)
	v.proc = host.Proc()
	if s.opts.TraceRead != nil {
		v.reader.SetTrace(s.opts.TraceRead)
		v.proc = v.proc.WithTrace(s.opts.TraceRead)
	}
	s.series = map[seriesKey]*series{}
	if bt, err := v.proc.BootTime(); err == nil {
		v.bootTime = pcommon.NewTimestampFromTime(bt)
	} else {
		v.logger.Warn("Cannot read the node's boot time; node counters get the first scrape's time as start time", zap.Error(err))
	}
	v.mb = metadata.NewMetricsBuilder(s.opts.MetricsBuilderConfig, s.set)
	v.runs = s.opts.StandaloneContainers && runStartOn(&s.opts.MetricsBuilderConfig.Metrics)
	if s.opts.NodeName == "" {
		v.logger.Warn("node_name is empty and K8S_NODE_NAME is unset: k8s.node.name is omitted from every series")
	}
	if err := v.ident.Start(ctx); err != nil {
		return fmt.Errorf("identity: %w", err)
	}
	v.logger.Info("Detected cgroup layout",
		zap.String("root_path", v.rootPath), zap.Stringer("mode", l.Mode),
		zap.String("unified", l.Unified), zap.Int("v1_controllers", len(l.V1)))
	if v.fs != nil {
		if err := v.fs.Start(ctx); err != nil {
			return fmt.Errorf("filesystem stats: %w", err)
		}
	}
	s.startEvents()
	v.gpu = startGPU(s.opts.GPU, v)
	m := &s.opts.MetricsBuilderConfig.Metrics
	s.families = newFamilies(v, m)
	s.sys = newSystemContainers(v, m, s.opts.NoNodeSeries, s.opts.SystemContainers, s.now())
	return nil
}

// Shutdown releases resources; safe without Start and twice.
func (s *Scraper) Shutdown(ctx context.Context) error {
	v := &s.env
	err := v.ident.Shutdown(ctx)
	if v.fs != nil {
		err = errors.Join(err, v.fs.Shutdown(ctx))
	}
	if v.reader != nil {
		v.reader.Close()
	}
	err = errors.Join(err, v.gpu.shutdown())
	v.gpu = nil
	return err
}

// Scrape reads the tree once: the node, every pod and every container. A
// cgroup that cannot be read costs its own points only, reported as a
// partial error.
func (s *Scraper) Scrape(ctx context.Context) (pmetric.Metrics, error) {
	v := &s.env
	if v.layout == nil {
		return pmetric.NewMetrics(), errors.New("scraper not started")
	}
	s.gen++
	p := newPass(s.now(), s.gen, s.last)
	s.last = p
	defer s.recordTelemetry(ctx, p)
	var errs scrapererror.ScrapeErrors

	tree, err := v.layout.Discover(s.opts.StandaloneContainers)
	if err != nil {
		return pmetric.NewMetrics(), fmt.Errorf("discover cgroups: %w", err)
	}
	s.opts.Host.Discovered(&tree)

	ids := make([]string, len(tree.Containers))
	for i := range tree.Containers {
		ids[i] = tree.Containers[i].ContainerID
	}
	v.ident.Prepare(ctx, ids)
	if v.fs != nil {
		p.fs = v.fs.Snapshot()
	}

	if !s.opts.NoNodeSeries {
		s.scrapeNode(p, &errs)
	}
	s.scrapeSystem(p, &tree, &errs)
	// GPUs first: containers' accelerator points come from this snapshot.
	v.gpu.scrape(ctx, p, &tree, &errs)
	// Containers before pods: a pod's load average and task counts are the
	// sums over its containers (tasks.go), reset here.
	for _, f := range s.families {
		f.beginScrape()
	}
	// The scrape's context (scraperhelper's timeout) bounds the whole walk:
	// once it is done no further entity is read.
	ci, pi := 0, 0
	for ; ci < len(tree.Containers) && ctx.Err() == nil; ci++ {
		s.scrapeContainer(p, &tree.Containers[ci], &errs)
	}
	if s.opts.NoPodSeries {
		pi = len(tree.Pods)
	}
	for ; pi < len(tree.Pods) && ctx.Err() == nil; pi++ {
		s.scrapePod(p, &tree.Pods[pi], &errs)
	}
	if ci < len(tree.Containers) || pi < len(tree.Pods) {
		s.stopped(ctx, &tree, ci, pi, &errs)
	}
	s.evict(&tree, &errs)
	s.detectEvents(p, &tree)
	v.reader.Sweep() // close directory descriptors of cgroups not read in this scrape
	md := v.mb.Emit()
	if v.gpu != nil {
		mergeEqualResources(md) // GPU devices: one entry each, emitted with their owner's (or the node's) resource
	}
	return md, errs.Combine()
}

// stopped reports the entities a scrape whose context ended did not read
// (containers from ci on, pods from pi on) as one partial error counting
// their points, and keeps their state: they were not seen, but they are not
// gone.
func (s *Scraper) stopped(ctx context.Context, tree *cgroupfs.Tree, ci, pi int, errs *scrapererror.ScrapeErrors) {
	lost := 0
	keep := func(k seriesKey) {
		st := s.series[k] // nil: never scraped
		if st != nil {
			st.seen = s.gen
		}
		lost += s.entityPoints(k.kind, st)
	}
	for _, c := range tree.Containers[ci:] {
		keep(seriesKey{kind: kindContainer, id: c.ContainerID})
	}
	for _, p := range tree.Pods[pi:] {
		keep(seriesKey{kind: kindPod, id: p.PodUID})
	}
	nc, np := len(tree.Containers)-ci, len(tree.Pods)-pi
	errs.AddPartial(lost,
		fmt.Errorf("scrape stopped before %d of %d containers and %d of %d pods: %w",
			nc, len(tree.Containers), np, len(tree.Pods), context.Cause(ctx)))
}

// recordTelemetry records the duration of the scrape of pass p (on the
// scraper's clock) and the containers it reported by identity source.
func (s *Scraper) recordTelemetry(ctx context.Context, p *pass) {
	tb := s.opts.Telemetry
	if tb == nil {
		return
	}
	tb.ContainerStatsScrapeDuration.Record(ctx, s.now().Sub(p.now).Seconds())
	for src, n := range p.sources {
		tb.ContainerStatsContainers.Record(ctx, n,
			metric.WithAttributes(attribute.String("source", identity.Source(src).String())))
	}
}

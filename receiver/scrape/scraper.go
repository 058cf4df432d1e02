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
	"github.com/containerstats/containerstatsreceiver/internal/containerevents"
	"github.com/containerstats/containerstatsreceiver/internal/fsstats"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/procfs"
)

// Options is what the scraper takes from the receiver's Config.
type Options struct {
	RootPath             string
	NodeName             string
	StandaloneContainers bool
	MetricsBuilderConfig metadata.MetricsBuilderConfig
	// Now is the clock; nil means time.Now. Tests inject their own.
	Now func() time.Time
	// TraceRead, when set, is called with the path of every file a scrape
	// opens. Benchmarks use it to replay the scrape's exact file set as the
	// raw-read floor; nil in production.
	TraceRead func(path string)
	// Host is the cgroup layout under RootPath, shared with the logs
	// signal of the same configuration so that the platform check and the
	// layout detection run once; nil: the scraper's own.
	Host *cgroupfs.Host
	// Discovered, when set, is called with every scrape's discovered tree
	// (the logs signal's cgroup index reuses it instead of walking the
	// tree again); nil when nothing else needs it.
	Discovered func(*cgroupfs.Tree)
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
	// nil, or not Active at Start, detects none.
	Events EventSink
}

// Scraper scrapes one node. Scrape is called by one goroutine at a time
// (the scraper controller's), which lets it reuse buffers and state freely.
type Scraper struct {
	set    receiver.Settings
	opts   Options
	logger *zap.Logger
	now    func() time.Time

	layout   *cgroupfs.Layout
	reader   *cgroupfs.Reader
	proc     procfs.FS
	mb       *metadata.MetricsBuilder
	bootTime pcommon.Timestamp

	series map[seriesKey]*series
	gen    uint64

	// families are the metric families every entity is read and recorded
	// through (family.go), built in Start from the enabled metrics.
	families []family
	ent      entity             // the entity being read and recorded (scrapeCgroup)
	ctr      identity.Container // the identity of the container being scraped (scrapeContainer)
	gpu      *gpuState          // nil when GPU metrics are off
	sys      *systemContainers  // the node's system containers (system.go); nil when off

	fsSnap *fsstats.Snapshot // the filesystem snapshot of the current scrape

	ident   Identity
	sources [3]int64 // containers reported by the current scrape, by identity.Source
	// deferred: pods of the containers this scrape left to the next one
	// (their identity is not fetched yet, see Identity's Pending).
	deferred map[string]bool
	// oomRead: v1 OOM kill counters this scrape read, by cgroup path
	// (memory.go: a pod's subtree walk reuses its containers').
	oomRead map[string]uint64
	// podThread: a thread of each pod's containers listed by this scrape
	// (tasks.go), whose network namespace is the pod's (network.go).
	podThread map[string]int
	// events detects the container events (events.go); nil when off.
	// oomCounters are the OOM kill counters this scrape read for it.
	events      *containerevents.Detector
	oomCounters []containerevents.Counter
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
	return &Scraper{set: set, opts: opts, logger: set.Logger, now: now, ident: ident}
}

// Start detects the cgroup layout under root_path. It fails, naming the key,
// when nothing there is a cgroup filesystem: a DaemonSet without the host
// mount should not run silently empty.
func (s *Scraper) Start(ctx context.Context, _ component.Host) error {
	host := s.opts.Host
	if host == nil {
		host = cgroupfs.NewHost(s.opts.RootPath)
	}
	if err := host.CheckPlatform(); err != nil {
		return err
	}
	l, err := host.Layout()
	if err != nil {
		return fmt.Errorf("root_path %q: %w", s.opts.RootPath, err)
	}
	s.layout = l
	s.reader = cgroupfs.NewReader(l)
	s.proc = procfs.NewFS(s.opts.RootPath)
	if s.opts.TraceRead != nil {
		s.reader.SetTrace(s.opts.TraceRead)
		s.proc = s.proc.WithTrace(s.opts.TraceRead)
	}
	s.series = map[seriesKey]*series{}
	if bt, err := s.proc.BootTime(); err == nil {
		s.bootTime = pcommon.NewTimestampFromTime(bt)
	} else {
		s.logger.Warn("Cannot read the node's boot time; node counters get the first scrape's time as start time", zap.Error(err))
	}
	s.mb = metadata.NewMetricsBuilder(s.opts.MetricsBuilderConfig, s.set)
	if s.opts.NodeName == "" {
		s.logger.Warn("node_name is empty and K8S_NODE_NAME is unset: k8s.node.name is omitted from every series")
	}
	if err := s.ident.Start(ctx); err != nil {
		return fmt.Errorf("identity: %w", err)
	}
	s.logger.Info("Detected cgroup layout",
		zap.String("root_path", s.opts.RootPath), zap.Stringer("mode", l.Mode),
		zap.String("unified", l.Unified), zap.Int("v1_controllers", len(l.V1)))
	if s.opts.Filesystem != nil {
		if err := s.opts.Filesystem.Start(ctx); err != nil {
			return fmt.Errorf("filesystem stats: %w", err)
		}
	}
	s.startEvents()
	s.startGPU()
	s.families = s.newFamilies(&s.opts.MetricsBuilderConfig.Metrics)
	s.sys = s.newSystemContainers(&s.opts.MetricsBuilderConfig.Metrics)
	return nil
}

// Shutdown releases resources; safe without Start and twice.
func (s *Scraper) Shutdown(ctx context.Context) error {
	var err error
	err = s.ident.Shutdown(ctx)
	if s.opts.Filesystem != nil {
		err = errors.Join(err, s.opts.Filesystem.Shutdown(ctx))
	}
	if s.reader != nil {
		s.reader.Close()
	}
	return errors.Join(err, s.shutdownGPU())
}

// Scrape reads the tree once: the node, every pod and every container. A
// cgroup that cannot be read costs its own points only, reported as a
// partial error.
func (s *Scraper) Scrape(ctx context.Context) (pmetric.Metrics, error) {
	if s.layout == nil {
		return pmetric.NewMetrics(), errors.New("scraper not started")
	}
	now := s.now()
	s.sources = [3]int64{}
	clear(s.deferred)
	clear(s.oomRead)
	clear(s.podThread)
	defer s.recordTelemetry(ctx, now)
	s.gen++
	var errs scrapererror.ScrapeErrors

	tree, err := s.layout.Discover(s.opts.StandaloneContainers)
	if err != nil {
		return pmetric.NewMetrics(), fmt.Errorf("discover cgroups: %w", err)
	}
	if s.opts.Discovered != nil {
		s.opts.Discovered(&tree)
	}

	ids := make([]string, len(tree.Containers))
	for i := range tree.Containers {
		ids[i] = tree.Containers[i].ContainerID
	}
	s.ident.Prepare(ctx, ids)
	if s.opts.Filesystem != nil {
		s.fsSnap = s.opts.Filesystem.Snapshot()
	}

	if !s.opts.NoNodeSeries {
		s.scrapeNode(now, &errs)
	}
	s.scrapeSystem(now, &tree, &errs)
	// GPUs first: containers' accelerator points come from this snapshot.
	s.scrapeGPU(ctx, now, &tree, &errs)
	// Containers before pods: a pod's load average and task counts are the
	// sums over its containers (tasks.go), reset here.
	for _, f := range s.families {
		if b, ok := f.(interface{ beginScrape() }); ok {
			b.beginScrape()
		}
	}
	// The scrape's context (scraperhelper's timeout) bounds the whole walk:
	// once it is done no further entity is read.
	ci, pi := 0, 0
	for ; ci < len(tree.Containers) && ctx.Err() == nil; ci++ {
		s.scrapeContainer(now, &tree.Containers[ci], &errs)
	}
	if s.opts.NoPodSeries {
		pi = len(tree.Pods)
	}
	for ; pi < len(tree.Pods) && ctx.Err() == nil; pi++ {
		s.scrapePod(now, &tree.Pods[pi], &errs)
	}
	if ci < len(tree.Containers) || pi < len(tree.Pods) {
		s.stopped(ctx, &tree, ci, pi, &errs)
	}
	s.evict(&tree, &errs)
	s.detectEvents(now, &tree)
	s.reader.Sweep() // close directory descriptors of cgroups not read in this scrape
	md := s.mb.Emit()
	if s.gpu != nil {
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

// recordTelemetry records the scrape's duration (on the scraper's clock)
// and the containers it reported by identity source.
func (s *Scraper) recordTelemetry(ctx context.Context, began time.Time) {
	tb := s.opts.Telemetry
	if tb == nil {
		return
	}
	tb.ContainerStatsScrapeDuration.Record(ctx, s.now().Sub(began).Seconds())
	for src, n := range s.sources {
		tb.ContainerStatsContainers.Record(ctx, n,
			metric.WithAttributes(attribute.String("source", identity.Source(src).String())))
	}
}

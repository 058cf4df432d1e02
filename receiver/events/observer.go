// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package events

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/containerevents"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/resource"
)

// Identity is what the observer asks of the runtimes (node.Handle): the
// containers of the tree, whether one is new since the last listing, the
// listing itself, and Start/Shutdown, which count the receiver in and out
// of the shared cache.
type Identity interface {
	Start(ctx context.Context) error
	Shutdown(ctx context.Context) error
	Prepare(ctx context.Context, containerIDs []string)
	Container(id, podUID string) (identity.Container, bool)
	Pending(id string) bool
	IsSandbox(id string) bool
	Pod(uid string) (identity.Pod, bool)
	Instances() []identity.Container
}

// ObserverOptions configure an Observer.
type ObserverOptions struct {
	// Host is the root's cgroup layout (the configuration's, shared);
	// RootPath names it in errors.
	Host       *cgroupfs.Host
	RootPath   string
	Standalone bool
	Identity   Identity
	// Filter and IncludeSandboxes select the containers as the metrics
	// scrape selects them.
	Filter           identity.Filter
	IncludeSandboxes bool
	// PodLabels: the events' resources carry k8s.pod.label.<key>.
	PodLabels bool
	// Discovered, when set, gets every discovered tree (the log records'
	// cgroup index).
	Discovered func(*cgroupfs.Tree)
	// Detector is the records' configuration (its PodLabels is set from
	// PodLabels and Identity).
	Detector containerevents.Config
	// Sink takes the records.
	Sink containerevents.Sink
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// Observer reads what the events need when no metrics pipeline does:
// the cgroup tree, the OOM kill counter of each container the metrics
// scrape would report, and the runtime's listing; it hands them to the
// Detector and publishes its records. It reads no metric.
type Observer struct {
	o        ObserverOptions
	layout   *cgroupfs.Layout
	reader   *cgroupfs.Reader
	det      *containerevents.Detector
	counters []containerevents.Counter
}

// NewObserver returns an observer; nothing is read before Start.
func NewObserver(o ObserverOptions) *Observer {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Observer{o: o}
}

// Start detects the cgroup layout (an error names root_path when there is
// none) and starts the identity.
func (b *Observer) Start(ctx context.Context) error {
	if err := b.o.Host.CheckPlatform(); err != nil {
		return err
	}
	l, err := b.o.Host.Layout()
	if err != nil {
		return fmt.Errorf("root_path %q: %w", b.o.RootPath, err)
	}
	if err := b.o.Identity.Start(ctx); err != nil {
		return fmt.Errorf("identity: %w", err)
	}
	b.layout, b.reader = l, cgroupfs.NewReader(l)
	cfg := b.o.Detector
	if b.o.PodLabels {
		cfg.PodLabels = func(c *cgroupfs.Cgroup, ct *identity.Container) map[string]string {
			return resource.PodLabels(b.o.Identity, c, ct)
		}
	}
	b.det = containerevents.NewDetector(cfg)
	return nil
}

// Shutdown stops the identity and closes the reader; safe twice and
// without Start.
func (b *Observer) Shutdown(ctx context.Context) error {
	if b.reader != nil {
		b.reader.Close()
		b.reader = nil
	}
	return b.o.Identity.Shutdown(ctx)
}

// Observe reads the tree, the counters and the listing once and publishes
// the events found. A container whose counter cannot be read costs its
// events only: the error names it, the others go on.
func (b *Observer) Observe(ctx context.Context) error {
	if b.reader == nil {
		return errors.New("events: observer not started")
	}
	now := b.o.Now()
	tree, err := b.layout.Discover(b.o.Standalone)
	if err != nil {
		return fmt.Errorf("discover cgroups: %w", err)
	}
	if b.o.Discovered != nil {
		b.o.Discovered(&tree)
	}
	ids := make([]string, len(tree.Containers))
	for i := range tree.Containers {
		ids[i] = tree.Containers[i].ContainerID
	}
	id := b.o.Identity
	id.Prepare(ctx, ids)
	var errs []error
	for i := 0; i < len(tree.Containers) && ctx.Err() == nil; i++ {
		c := &tree.Containers[i]
		ct, _, report := identity.Select(id, c.ContainerID, c.PodUID, b.o.IncludeSandboxes, b.o.Filter)
		if !report {
			continue
		}
		mem, err := b.reader.Memory(c.Path, cgroupfs.MemoryWant{OOM: true})
		switch {
		case errors.Is(err, cgroupfs.ErrVanished):
			errs = append(errs, fmt.Errorf("container %s: %w", c.ContainerID, err))
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("container %s: OOM kill events: %w", c.ContainerID, err))
			continue
		}
		b.counters = append(b.counters, containerevents.Counter{Cgroup: *c, Identity: ct, OOMKills: mem.OOMKills})
	}
	ld := b.det.Observe(containerevents.Scrape{Now: now, Tree: &tree, Counters: b.counters, Listed: true, Instances: id.Instances()})
	clear(b.counters)
	b.counters = b.counters[:0]
	b.reader.Sweep()
	if ld.LogRecordCount() > 0 {
		b.o.Sink.Publish(ld)
	}
	return errors.Join(errs...)
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package logs tails the kubelet's container log files
// (<root>/var/log/pods/<namespace>_<pod>_<uid>/<container>/<restart>.log)
// with contrib's pkg/stanza (file consumer + container parser: containerd
// and CRI-O "<time> <stream> <P|F> <msg>" with partial lines recombined,
// docker JSON) and gives every record the resource the metrics give the
// same container: the resource is built by resource.Container from
// the same identity cache.
package logs // import "github.com/containerstats/containerstatsreceiver/receiver/logs"

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/adapter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer/attrs"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/input/file"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/parser/container"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver"
	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/podlogs"
	"github.com/containerstats/containerstatsreceiver/internal/resource"
)

// Identity resolves a log file to its container. *identity.Cache
// implements it.
type Identity interface {
	// ContainerByLog returns the container writing log file k; ok is false
	// when no source names its container ID.
	ContainerByLog(ctx context.Context, k podlogs.Key) (identity.Container, bool)
	Pod(uid string) (identity.Pod, bool)
}

// Cgroups finds a container's cgroup (for the QoS class and runtime the
// path tells, as on its metrics).
type Cgroups interface {
	Cgroup(ctx context.Context, containerID string) (cgroupfs.Cgroup, bool)
}

// Host is the host root the log files are read under (node.Host, the
// configuration's one handle on root_path): files are read under
// <Root>/var/log/pods; CheckPlatform fails, naming root_path, where the
// receiver cannot run.
type Host interface {
	Root() string
	CheckPlatform() error
}

// Lifecycle is implemented by an Identity or Cgroups with background work;
// the receiver starts it before tailing and stops it after.
type Lifecycle interface {
	Start(ctx context.Context) error
	Shutdown(ctx context.Context) error
}

// Defaults of Options.
const (
	DefaultStartAt    = "end"
	DefaultMaxLogSize = 1024 * 1024
)

// Options configure the logs receiver.
type Options struct {
	// Host is the host handle; required.
	Host     Host
	NodeName string
	// ResourceAttributes is the metrics' resource attribute switches, so
	// both signals carry the same keys.
	ResourceAttributes metadata.ResourceAttributesConfig
	Identity           Identity
	// Cgroups may be nil: then no QoS class, and the runtime name comes from
	// the runtime only.
	Cgroups Cgroups
	Filter  identity.Filter
	// PodLabels sets k8s.pod.label.<key> as on the metrics.
	PodLabels bool
	// StartAt is "beginning" or "end" (default) for files found at start.
	StartAt string
	// MaxLogSize bounds one record (after partial lines are recombined).
	MaxLogSize int64
	// StorageID is the storage extension keeping file offsets; nil keeps
	// them in memory only.
	StorageID *component.ID
	// PollInterval is the file consumer's poll period; 0 is stanza's
	// default (200ms).
	PollInterval time.Duration
}

// Pattern is the glob of the kubelet's container log files under a root.
func Pattern(root string) string {
	return filepath.Join(root, "var/log/pods/*/*/*.log")
}

// New builds the receiver: stanza's file input and container parser behind
// stanza's adapter, whose output goes through the identity enricher to
// next. The adapter's retry_on_failure (a type from contrib's internal
// packages) is left at its zero value: off.
func New(ctx context.Context, set receiver.Settings, opts Options, next consumer.Logs) (receiver.Logs, error) {
	if opts.Host == nil {
		return nil, errors.New("container logs: no host handle")
	}
	if opts.StartAt == "" {
		opts.StartAt = DefaultStartAt
	}
	if opts.MaxLogSize <= 0 {
		opts.MaxLogSize = DefaultMaxLogSize
	}
	in := file.NewConfigWithID("container_logs_input")
	in.Include = []string{Pattern(opts.Host.Root())}
	in.StartAt = opts.StartAt
	in.MaxLogSize = helper.ByteSize(opts.MaxLogSize)
	in.IncludeFileName = false
	in.IncludeFilePath = true
	// A partial (P) line ends where the runtime cut it, whitespace
	// included: trimming would change the recombined message.
	in.TrimConfig.PreserveLeading = true
	in.TrimConfig.PreserveTrailing = true
	if opts.PollInterval > 0 {
		in.PollInterval = opts.PollInterval
	}
	parser := container.NewConfigWithID("container_logs_parser")
	parser.MaxLogSize = helper.ByteSize(opts.MaxLogSize)

	lt := &logType{
		input: operator.NewConfig(in),
		base: adapter.BaseConfig{
			Operators: []operator.Config{operator.NewConfig(newSerialConfig("container_logs_serial")), operator.NewConfig(parser)},
			StorageID: opts.StorageID,
		},
	}
	e := newEnricher(opts, set.Logger, next)
	inner, err := adapter.NewFactory(lt, metadata.LogsStability).CreateLogs(ctx, set, lt, e)
	if err != nil {
		return nil, fmt.Errorf("container logs: %w", err)
	}
	r := &logsReceiver{inner: inner, host: opts.Host}
	for _, x := range []any{opts.Identity, opts.Cgroups} {
		if lc, ok := x.(Lifecycle); ok {
			r.lifecycles = append(r.lifecycles, lc)
		}
	}
	return r, nil
}

// logType is stanza's adapter.LogReceiverType; it is its own config.
// It is an adapter.LogReceiverTypeWithScope too: since pkg/stanza v0.162
// (feature gate pkg.stanza.addDefaultScopeName, beta: on by default) the
// adapter names the scope of records that have none, stanza's own package
// unless the receiver type gives a name; ours is the receiver's scope, as
// on its metrics (version: the collector's build version).
type logType struct {
	input operator.Config
	base  adapter.BaseConfig
}

var _ adapter.LogReceiverTypeWithScope = (*logType)(nil)

func (*logType) Type() component.Type                             { return metadata.Type }
func (*logType) ScopeName() string                                { return metadata.ScopeName }
func (l *logType) CreateDefaultConfig() component.Config          { return l }
func (l *logType) BaseConfig(component.Config) adapter.BaseConfig { return l.base }
func (l *logType) InputConfig(component.Config) operator.Config   { return l.input }

type logsReceiver struct {
	host       Host
	inner      receiver.Logs
	lifecycles []Lifecycle
	started    []Lifecycle
}

func (r *logsReceiver) Start(ctx context.Context, host component.Host) error {
	if err := r.host.CheckPlatform(); err != nil {
		return err
	}
	for _, lc := range r.lifecycles {
		if err := lc.Start(ctx); err != nil {
			return err
		}
		r.started = append(r.started, lc)
	}
	return r.inner.Start(ctx, host)
}

func (r *logsReceiver) Shutdown(ctx context.Context) error {
	err := r.inner.Shutdown(ctx)
	for i := len(r.started) - 1; i >= 0; i-- {
		if e := r.started[i].Shutdown(ctx); e != nil && err == nil {
			err = e
		}
	}
	r.started = nil
	return err
}

// enricher replaces the resource stanza's container parser derived from the
// file path with the container's metrics resource, rewrites log.file.path
// to the path on the host (without root_path), and drops filtered
// containers.
type enricher struct {
	opts   Options
	logger *zap.Logger
	next   consumer.Logs

	mu     sync.Mutex
	warned map[string]bool // unparsable paths, warned once
}

func newEnricher(opts Options, logger *zap.Logger, next consumer.Logs) *enricher {
	return &enricher{opts: opts, logger: logger, next: next, warned: map[string]bool{}}
}

func (*enricher) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}

func (e *enricher) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	ld.ResourceLogs().RemoveIf(func(rl plog.ResourceLogs) bool {
		return !e.enrich(ctx, rl)
	})
	if ld.ResourceLogs().Len() == 0 {
		return nil
	}
	return e.next.ConsumeLogs(ctx, ld)
}

// enrich sets rl's resource; false drops rl.
func (e *enricher) enrich(ctx context.Context, rl plog.ResourceLogs) bool {
	path := e.hostPaths(rl)
	if path == "" {
		return true
	}
	lp, k, err := podlogs.ParsePath(path)
	if err != nil {
		e.warnOnce(path, err)
		return true
	}
	ct, ok := e.opts.Identity.ContainerByLog(ctx, k)
	if !ok {
		// No runtime and no /var/log/containers link names the container
		// ID: what the path says, without container.id.
		ct = identity.Container{
			PodUID: k.PodUID, PodName: lp.Name, Namespace: lp.Namespace,
			ContainerName: k.Container, RestartCount: k.Restart, HasRestart: true,
			Source: identity.SourcePath,
		}
	}
	if !e.opts.Filter.AllowContainer(ct.Namespace, ct.PodName, ct.ContainerName) {
		return false
	}
	cg := cgroupfs.Cgroup{ContainerID: ct.ID, PodUID: k.PodUID}
	if ct.ID != "" && e.opts.Cgroups != nil {
		if c, ok := e.opts.Cgroups.Cgroup(ctx, ct.ID); ok {
			cg = c
		}
	}
	var labels map[string]string
	if e.opts.PodLabels {
		if p, ok := e.opts.Identity.Pod(k.PodUID); ok {
			labels = p.Labels
		}
	}
	res := resource.Container(metadata.NewResourceBuilder(e.opts.ResourceAttributes), e.opts.NodeName, &cg, &ct, labels)
	res.CopyTo(rl.Resource())
	return true
}

// hostPaths rewrites every record's log.file.path to the host path and
// returns the first one (one resource is one container's file: stanza
// groups records by the resource it parsed from the path).
func (e *enricher) hostPaths(rl plog.ResourceLogs) string {
	first := ""
	root := filepath.Clean(e.opts.Host.Root())
	sls := rl.ScopeLogs()
	for i := 0; i < sls.Len(); i++ {
		lrs := sls.At(i).LogRecords()
		for j := 0; j < lrs.Len(); j++ {
			a := lrs.At(j).Attributes()
			v, ok := a.Get(attrs.LogFilePath)
			if !ok {
				continue
			}
			p := v.Str()
			if root != "/" {
				if rel, ok := strings.CutPrefix(p, root); ok && strings.HasPrefix(rel, "/") {
					p = rel
					a.PutStr(attrs.LogFilePath, p)
				}
			}
			if first == "" {
				first = p
			}
		}
	}
	return first
}

func (e *enricher) warnOnce(path string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.warned[path] {
		return
	}
	if len(e.warned) > 1024 {
		clear(e.warned)
	}
	e.warned[path] = true
	e.logger.Warn("Container log file name does not follow the kubelet layout: records keep the attributes stanza parsed from the path", zap.String("path", path), zap.Error(err))
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package fsstats // import "github.com/containerstats/containerstatsreceiver/internal/fsstats"

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/opt"
	"github.com/containerstats/containerstatsreceiver/internal/podlogs"
)

// Config configures a Collector.
type Config struct {
	// Root is the host root (root_path).
	Root string
	// Interval is the period of the background collection
	// (filesystem_collection_interval).
	Interval time.Duration
	// Timeout bounds each runtime call.
	Timeout time.Duration
	// Connect returns the runtime to ask; called once, in Start. A nil
	// Connect, or one returning a nil Source, means no runtime: no writable
	// layers and no image filesystems, logs still. A Source that is also
	// an io.Closer is closed in Shutdown.
	Connect func() (Source, error)
	// NoLogs skips the log directory walk (its metrics are disabled).
	NoLogs bool
	// NoVolumes skips the pods' volumes (their metrics are disabled).
	NoVolumes bool
	// VolumeWalkBudget is the number of entries the volume walks of one
	// collection may lstat; 0 means DefaultVolumeWalkBudget.
	VolumeWalkBudget int
	// Statfs is the statfs call; nil means Statfs.
	Statfs func(path string) (Space, error)
	// Lstat is the lstat call of the log and volume walks; nil means
	// Lstat.
	Lstat  func(path string) (FileStat, error)
	Logger *zap.Logger
}

// Collector runs the background collection and serves its latest
// snapshot. Start returns at once; Shutdown stops the loop and waits for
// it (bounded by its ctx), and is safe twice and without Start.
type Collector struct {
	cfg     Config
	statfs  func(string) (Space, error)
	lstat   func(string) (FileStat, error)
	readDir func(string) ([]string, error)
	logger  *zap.Logger
	snap    atomic.Pointer[Snapshot]

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
	src    Source

	failing bool // the runtime's last call failed (loop goroutine only)

	// The volume walks' state (loop goroutine only): the walker and its
	// hard-link set, reused; where the next collection's walks start;
	// whether the last collection ran over the budget.
	walk       walker
	walkNext   int
	overBudget bool
}

var emptySnapshot = &Snapshot{}

// New returns a collector; nothing runs until Start.
func New(cfg Config) *Collector {
	c := &Collector{cfg: cfg, statfs: cfg.Statfs, lstat: cfg.Lstat, readDir: readDirNames, logger: cfg.Logger}
	if c.statfs == nil {
		c.statfs = Statfs
	}
	if c.lstat == nil {
		c.lstat = Lstat
	}
	c.walk = walker{lstat: c.lstat, readDir: c.readDir, seen: map[uint64]struct{}{}}
	if c.logger == nil {
		c.logger = zap.NewNop()
	}
	return c
}

// Start connects (lazily: nothing is dialed here) and starts the loop,
// whose first collection begins at once. The loop's context is its own,
// cancelled in Shutdown, not ctx.
func (c *Collector) Start(_ context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil {
		return nil
	}
	if c.cfg.Connect != nil {
		src, err := c.cfg.Connect()
		if err != nil {
			return err
		}
		c.src = src
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel, c.done = cancel, make(chan struct{})
	go c.loop(ctx, c.src, c.done)
	return nil
}

// Shutdown stops the loop, waits for it (or for ctx) and closes the
// runtime's connection.
func (c *Collector) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	cancel, done, src := c.cancel, c.done, c.src
	c.cancel, c.done, c.src = nil, nil, nil
	c.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if cl, ok := src.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// Snapshot is the latest collection; empty (never nil) before the first.
func (c *Collector) Snapshot() *Snapshot {
	if s := c.snap.Load(); s != nil {
		return s
	}
	return emptySnapshot
}

// NodeFS is the statfs of the node filesystem: the one holding
// <root>/var/lib/kubelet (the kubelet's root directory), or <root>/ when
// that does not exist. It is one syscall, taken at scrape time.
func (c *Collector) NodeFS() (Space, error) {
	sp, err := c.statfs(filepath.Join(c.cfg.Root, "var/lib/kubelet"))
	if errors.Is(err, fs.ErrNotExist) {
		return c.statfs(c.cfg.Root)
	}
	return sp, err
}

func (c *Collector) loop(ctx context.Context, src Source, done chan struct{}) {
	defer close(done)
	interval := c.cfg.Interval
	if interval <= 0 {
		interval = time.Minute
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		c.Collect(ctx, src)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Collect runs one collection with src (nil: no runtime) and publishes
// it. The loop calls it; tests call it directly.
func (c *Collector) Collect(ctx context.Context, src Source) {
	s := &Snapshot{}
	if !c.cfg.NoLogs {
		s.Logs, s.LogsAllocated, s.PodLogsAllocated = c.logSizes()
	}
	if !c.cfg.NoVolumes && ctx.Err() == nil {
		s.Volumes = c.volumes(ctx, c.Snapshot().Volumes)
	}
	if src != nil && ctx.Err() == nil {
		s.Layers, s.Images = c.fromRuntime(ctx, src)
	}
	if ctx.Err() != nil {
		return // shutting down: a half collection is not published
	}
	c.snap.Store(s)
}

func (c *Collector) fromRuntime(ctx context.Context, src Source) (map[string]Usage, []Image) {
	timeout := c.cfg.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	// Two independent calls: a runtime may implement one and not the other.
	cctx, cancel := context.WithTimeout(ctx, timeout)
	layers, lerr := src.WritableLayers(cctx)
	cancel()
	cctx, cancel = context.WithTimeout(ctx, timeout)
	fss, ierr := src.ImageFilesystems(cctx)
	cancel()
	if lerr != nil {
		layers = nil
	}
	if ierr != nil {
		fss = nil
	}
	switch err := errors.Join(lerr, ierr); {
	case err != nil && ctx.Err() == nil:
		c.runtimeFailed(err)
	case err == nil && c.failing:
		c.failing = false
		c.logger.Info("Filesystem stats: the runtime answers again")
	}
	var images []Image
	if ierr == nil {
		images = make([]Image, 0, len(fss))
	}
	for _, f := range fss {
		im := Image{ImageFS: f}
		if f.Mountpoint != "" {
			if sp, err := c.statfs(filepath.Join(c.cfg.Root, f.Mountpoint)); err == nil {
				im.Space = opt.Some(sp)
			} else {
				c.logger.Debug("Filesystem stats: cannot statfs the image filesystem", zap.Error(err))
			}
		}
		images = append(images, im)
	}
	return layers, images
}

// runtimeFailed logs the first failure of a run of failures as a warning,
// the rest at debug level: no points while the runtime does not answer.
func (c *Collector) runtimeFailed(err error) {
	if !c.failing {
		c.failing = true
		c.logger.Warn("Filesystem stats: the runtime does not answer; no writable layer or image filesystem points until it does", zap.Error(err))
		return
	}
	c.logger.Debug("Filesystem stats: the runtime still does not answer", zap.Error(err))
}

// logSizes sums the sizes of the regular files in every
// <root>/var/log/pods/<namespace>_<pod>_<uid>/<container>/ directory, and
// the allocated blocks of its entries that are not directories (the
// kubelet's count), and of those directly in the pod's directory. Only
// directory listings and lstat: nothing is opened. Unreadable directories
// and names that do not parse are skipped.
func (c *Collector) logSizes() (sizes, alloc map[LogDir]uint64, podAlloc map[string]uint64) {
	out := map[LogDir]uint64{}
	alloc, podAlloc = map[LogDir]uint64{}, map[string]uint64{}
	base := filepath.Join(c.cfg.Root, "var/log/pods")
	pods, err := os.ReadDir(base)
	if err != nil {
		return out, alloc, podAlloc
	}
	for _, p := range pods {
		if !p.IsDir() {
			continue
		}
		lp, err := podlogs.ParsePodDir(p.Name())
		if err != nil {
			continue
		}
		ctrs, err := os.ReadDir(filepath.Join(base, p.Name()))
		if err != nil {
			continue
		}
		var podSum uint64
		for _, ct := range ctrs {
			if !ct.IsDir() {
				if st, err := c.lstat(filepath.Join(base, p.Name(), ct.Name())); err == nil && !st.Dir {
					podSum += st.Blocks * 512
				}
				continue
			}
			files, err := os.ReadDir(filepath.Join(base, p.Name(), ct.Name()))
			if err != nil {
				continue
			}
			var sum, blocks uint64
			for _, f := range files {
				if f.IsDir() {
					continue
				}
				st, err := c.lstat(filepath.Join(base, p.Name(), ct.Name(), f.Name()))
				if err != nil {
					continue
				}
				blocks += st.Blocks * 512
				if st.Regular && st.Size > 0 {
					sum += uint64(st.Size)
				}
			}
			ld := LogDir{PodUID: lp.UID, Container: ct.Name()}
			out[ld], alloc[ld] = sum, blocks
		}
		podAlloc[lp.UID] = podSum
	}
	return out, alloc, podAlloc
}

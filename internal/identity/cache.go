// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package identity // import "github.com/containerstats/containerstatsreceiver/internal/identity"

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/podlogs"
)

// CacheConfig configures a Cache. Zero durations take the defaults below.
type CacheConfig struct {
	// Resolvers in priority order: the first that knows a container wins.
	Resolvers []Resolver
	// PodLogs is the /var/log/pods fallback; nil disables it.
	PodLogs *PodLogs
	// RefreshInterval is the period of the background refresh.
	RefreshInterval time.Duration
	// Timeout bounds every runtime call.
	Timeout time.Duration
	// MinRefresh is the least time between two refreshes triggered by an
	// unknown container ID.
	MinRefresh time.Duration
	Logger     *zap.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Defaults of CacheConfig.
const (
	DefaultRefreshInterval = 30 * time.Second
	DefaultTimeout         = 2 * time.Second
	DefaultMinRefresh      = 5 * time.Second
)

// Cache holds the last good listing of every resolver. Lookups only read
// memory; runtime calls happen in Refresh (background loop, Start, and
// Prepare on an unknown ID, rate-limited).
type Cache struct {
	cfg CacheConfig
	now func() time.Time
	log *zap.Logger

	refreshMu   sync.Mutex // serializes refreshes
	lastRefresh time.Time
	state       []resolverState // per resolver, under refreshMu

	mu       sync.RWMutex
	snaps    []Snapshot // last good snapshot per resolver
	byID     map[string]Container
	pods     map[string]Pod
	sandbox  map[string]bool
	logPods  map[string]podlogs.Pod // pod UID -> /var/log/pods identity
	logCtrID map[string]string      // container ID -> container name from /var/log/containers
	logLinks map[podlogs.Key]string // log file -> container ID from /var/log/containers links
	byLog    map[podlogs.Key]string // log file -> container ID from the runtimes
	missed   map[string]bool        // IDs still unknown after a refresh made for them
	// pending: IDs of the last Prepare that no refresh has looked for yet
	// (see Pending); answering: the last listing of at least one resolver
	// succeeded; firstAnswering: the first resolver's (CRI's) did.
	pending                   map[string]bool
	answering, firstAnswering bool
	// log files still unknown after a refresh made for them: they wait for
	// the background refresh instead of triggering more (under refreshMu)
	missedLog map[podlogs.Key]bool

	stopMu sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

type resolverState struct {
	known bool // a first outcome was logged
	ok    bool
	// detailErrs: the last listing had Snapshot.Errors (logged at warn
	// when they appear, at info when a listing is clean again).
	detailErrs bool
}

// NewCache returns a cache; nothing is called until Start or Refresh.
func NewCache(cfg CacheConfig) *Cache {
	if cfg.RefreshInterval <= 0 {
		cfg.RefreshInterval = DefaultRefreshInterval
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MinRefresh <= 0 {
		cfg.MinRefresh = DefaultMinRefresh
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Cache{
		cfg: cfg, now: now, log: cfg.Logger,
		state: make([]resolverState, len(cfg.Resolvers)),
		snaps: make([]Snapshot, len(cfg.Resolvers)),
	}
}

// Start refreshes once (each call bounded by the timeout) and starts the
// background refresh loop with its own context. A runtime that does not
// answer is not an error: it is logged and retried.
func (c *Cache) Start(context.Context) error {
	c.stopMu.Lock()
	defer c.stopMu.Unlock()
	if c.cancel != nil {
		return errors.New("identity cache already started")
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.done = make(chan struct{})
	c.Refresh(ctx)
	go c.loop(ctx, c.done)
	return nil
}

func (c *Cache) loop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(c.cfg.RefreshInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.Refresh(ctx)
		}
	}
}

// Shutdown stops the loop and closes the resolvers. Safe without Start and
// twice.
func (c *Cache) Shutdown(ctx context.Context) error {
	c.stopMu.Lock()
	cancel, done := c.cancel, c.done
	c.cancel, c.done = nil, nil
	c.stopMu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	var errs error
	for _, r := range c.cfg.Resolvers {
		errs = errors.Join(errs, r.Close())
	}
	return errs
}

// Prepare refreshes when one of ids is new: not cached, not a sandbox, and
// not already looked for by an earlier refresh. It refreshes at most once
// per MinRefresh. An ID still unknown after a refresh triggers no further
// refreshes (the periodic refresh still picks it up), so a container no
// runtime knows costs nothing per scrape. In steady state it calls nothing.
func (c *Cache) Prepare(ctx context.Context, ids []string) {
	if len(c.cfg.Resolvers) == 0 {
		return
	}
	c.mu.RLock()
	fresh := false
	for _, id := range ids {
		if c.incompleteLocked(id) && !c.missed[id] {
			fresh = true
			break
		}
	}
	c.mu.RUnlock()
	refreshed := false
	// A refresh already under way (the background one) is not waited for:
	// the scrape goes on with the cache, and the new ID is found when that
	// refresh lands or by the next scrape. So a scrape waits for at most one
	// refresh of its own, bounded by runtime.timeout.
	if fresh && c.refreshMu.TryLock() {
		recent := !c.lastRefresh.IsZero() && c.now().Sub(c.lastRefresh) < c.cfg.MinRefresh
		if !recent {
			c.refreshLocked(ctx)
			refreshed = true
		}
		c.refreshMu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var missed, pending map[string]bool
	for _, id := range ids {
		switch {
		case !c.incompleteLocked(id):
		case refreshed || c.missed[id]:
			if missed == nil {
				missed = map[string]bool{}
			}
			missed[id] = true
		case c.answering:
			if pending == nil {
				pending = map[string]bool{}
			}
			pending[id] = true
		}
	}
	c.missed, c.pending = missed, pending // only IDs of this scrape: bounded
}

// Pending reports whether container id is one the runtime has not been
// asked about yet: the last Prepare saw it unknown (or known only to a
// later resolver while the first answers, see incompleteLocked) but could
// not refresh for it (a refresh ran less than MinRefresh before, or one was under way),
// while the runtime answers. Its identity is then simply not fetched yet:
// a scraper reports it one scrape later with its names rather than now
// with the cgroup path's alone (a series with partial identity, or a
// sandbox taken for a container). False for an ID a refresh already
// looked for and did not find, and whenever no runtime is configured or
// none answers: the path is then all there will be.
func (c *Cache) Pending(id string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.pending[id] && c.incompleteLocked(id)
}

// incompleteLocked: id is unknown, or known only to a later resolver
// (containerd) while the first (CRI) answers. The two are listed at once
// but not atomically: a container made in between is in containerd's
// listing and not yet in CRI's, and its identity would lack what CRI gives
// (restart count, CRI's creation time) until the next refresh. Such an ID
// is looked for again like an unknown one; one CRI still does not know
// after that (a container no CRI made, docker's) keeps containerd's
// identity.
func (c *Cache) incompleteLocked(id string) bool {
	if c.sandbox[id] {
		return false
	}
	ct, known := c.byID[id]
	return !known || c.firstAnswering && ct.Source != c.cfg.Resolvers[0].Source()
}

// Refresh lists every resolver (each call bounded by the timeout) and the
// /var/log/pods fallback. A resolver that fails keeps its last good
// listing, so identity survives a runtime restart.
func (c *Cache) Refresh(ctx context.Context) {
	c.refreshMu.Lock()
	defer c.refreshMu.Unlock()
	c.refreshLocked(ctx)
}

// refreshLocked lists every resolver at once, each call bounded by
// runtime.timeout, so a refresh takes at most one timeout however many
// resolvers hang. Under refreshMu.
func (c *Cache) refreshLocked(ctx context.Context) {
	c.lastRefresh = c.now()

	n := len(c.cfg.Resolvers)
	snaps := make([]Snapshot, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, r := range c.cfg.Resolvers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
			defer cancel()
			snaps[i], errs[i] = r.List(cctx)
		}()
	}
	wg.Wait()
	got := make([]bool, n)
	for i, r := range c.cfg.Resolvers {
		if errs[i] != nil && ctx.Err() != nil {
			// Cancelled by our caller (Shutdown, a scrape given up): that
			// says nothing about the runtime. Keep the last listing and the
			// logged state.
			continue
		}
		c.noteState(i, r, errs[i])
		got[i] = errs[i] == nil
		if got[i] {
			c.noteDetails(i, r, snaps[i].Errors)
		}
	}
	var lp map[string]podlogs.Pod
	var lc map[string]string
	var ll map[podlogs.Key]string
	if c.cfg.PodLogs != nil {
		lp, lc, ll = c.cfg.PodLogs.Scan()
	}

	answering := false
	for i := range c.state {
		answering = answering || c.state[i].ok
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.answering, c.firstAnswering = answering, n > 0 && c.state[0].ok
	for i := range snaps {
		if got[i] {
			c.snaps[i] = snaps[i]
		}
	}
	c.logPods, c.logCtrID, c.logLinks = lp, lc, ll
	c.rebuild()
}

// rebuild merges the snapshots, first resolver first. Under mu.
func (c *Cache) rebuild() {
	byID := map[string]Container{}
	pods := map[string]Pod{}
	sandbox := map[string]bool{}
	for _, s := range c.snaps {
		for _, id := range s.SandboxIDs {
			sandbox[id] = true
		}
		for _, p := range s.Pods {
			if _, dup := pods[p.UID]; !dup && p.UID != "" {
				pods[p.UID] = p
			}
		}
		for _, ct := range s.Containers {
			if ct.Sandbox {
				sandbox[ct.ID] = true
			}
			if _, dup := byID[ct.ID]; !dup {
				byID[ct.ID] = ct
			}
		}
	}
	byLog := map[podlogs.Key]string{}
	for id, ct := range byID {
		if ct.Sandbox || !ct.HasRestart || ct.PodUID == "" || ct.ContainerName == "" {
			continue
		}
		k := podlogs.Key{PodUID: ct.PodUID, Container: ct.ContainerName, Restart: ct.RestartCount}
		if old, dup := byLog[k]; !dup || id < old { // deterministic on a (never seen) clash
			byLog[k] = id
		}
	}
	c.byID, c.pods, c.sandbox, c.byLog = byID, pods, sandbox, byLog
}

// noteState logs a resolver's connection state at warn when it becomes
// unreachable and at info when it comes back: once per change, not per
// refresh. Under refreshMu.
func (c *Cache) noteState(i int, r Resolver, err error) {
	st := &c.state[i]
	ok := err == nil
	if st.known && st.ok == ok {
		return
	}
	first := !st.known
	st.known, st.ok = true, ok
	switch {
	case !ok:
		c.log.Warn("Container runtime not reachable: identity falls back to cached and cgroup-path data until it answers",
			zap.String("source", r.Source().String()), zap.String("endpoint", r.Endpoint()), zap.Error(err))
	case first:
		c.log.Info("Container runtime connected", zap.String("source", r.Source().String()), zap.String("endpoint", r.Endpoint()))
	default:
		c.log.Info("Container runtime reachable again", zap.String("source", r.Source().String()), zap.String("endpoint", r.Endpoint()))
	}
}

// noteDetails logs the details a listing could not read: at warn when they
// appear (how many, and the first), at info when a listing is complete
// again; not per refresh. Under refreshMu.
func (c *Cache) noteDetails(i int, r Resolver, errs []error) {
	st := &c.state[i]
	switch {
	case len(errs) > 0 && !st.detailErrs:
		c.log.Warn("The container runtime's listing is missing details (e.g. image names); they are retried on every refresh",
			zap.String("source", r.Source().String()), zap.String("endpoint", r.Endpoint()),
			zap.Int("errors", len(errs)), zap.Error(errs[0]))
	case len(errs) == 0 && st.detailErrs:
		c.log.Info("The container runtime's listing is complete again",
			zap.String("source", r.Source().String()), zap.String("endpoint", r.Endpoint()))
	}
	st.detailErrs = len(errs) > 0
}

// Container returns the identity of container id found under pod podUID
// (from the cgroup path; "" outside kubepods). known is false when no
// runtime knows the ID: then the result carries what the path and
// /var/log/pods give, with Source SourcePath.
func (c *Cache) Container(id, podUID string) (ct Container, known bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if cached, ok := c.byID[id]; ok {
		if cached.PodUID == "" {
			cached.PodUID = podUID
		}
		c.fillPod(&cached)
		return cached, true
	}
	ct = Container{ID: id, PodUID: podUID, Source: SourcePath}
	c.fillPod(&ct)
	if ct.ContainerName == "" {
		ct.ContainerName = c.logCtrID[id]
	}
	if ct.ContainerName == "" && ct.PodUID != "" {
		if lp, ok := c.logPods[ct.PodUID]; ok && len(lp.Containers) == 1 {
			ct.ContainerName = lp.Containers[0]
		}
	}
	return ct, false
}

// ContainerByLog returns the container that writes log file k: the
// runtime's container with that pod UID, name and restart count, else the
// container ID the /var/log/containers link names (then with what
// Container gives for a path-only container, exactly as metrics see it).
// An unknown file triggers one refresh, rate-limited like Prepare; if that
// does not name it, it waits for the background refresh (no refresh per
// batch in steady state). ok is false when no source names the container
// ID.
func (c *Cache) ContainerByLog(ctx context.Context, k podlogs.Key) (Container, bool) {
	id, ok := c.logID(k)
	if !ok && c.takeLogRefresh(k) {
		c.refreshIfStale(ctx)
		id, ok = c.logID(k)
	}
	if !ok {
		return Container{}, false
	}
	ct, _ := c.Container(id, k.PodUID)
	return ct, true
}

func (c *Cache) logID(k podlogs.Key) (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if id, ok := c.byLog[k]; ok {
		return id, true
	}
	id, ok := c.logLinks[k]
	return id, ok
}

// takeLogRefresh reports whether unknown log file k may trigger a refresh,
// and records that it did (bounded: the record is reset past 4096 files).
func (c *Cache) takeLogRefresh(k podlogs.Key) bool {
	c.refreshMu.Lock()
	defer c.refreshMu.Unlock()
	if c.missedLog[k] {
		return false
	}
	if c.missedLog == nil || len(c.missedLog) >= 4096 {
		c.missedLog = map[podlogs.Key]bool{}
	}
	c.missedLog[k] = true
	return true
}

// refreshIfStale refreshes unless the last refresh is less than MinRefresh
// old.
func (c *Cache) refreshIfStale(ctx context.Context) {
	c.refreshMu.Lock()
	recent := !c.lastRefresh.IsZero() && c.now().Sub(c.lastRefresh) < c.cfg.MinRefresh
	c.refreshMu.Unlock()
	if !recent {
		c.Refresh(ctx)
	}
}

// fillPod completes pod fields from the pod listing or /var/log/pods.
func (c *Cache) fillPod(ct *Container) {
	if ct.PodUID == "" {
		return
	}
	if p, ok := c.pods[ct.PodUID]; ok {
		if ct.PodName == "" {
			ct.PodName = p.Name
		}
		if ct.Namespace == "" {
			ct.Namespace = p.Namespace
		}
	}
	if lp, ok := c.logPods[ct.PodUID]; ok {
		if ct.PodName == "" {
			ct.PodName = lp.Name
		}
		if ct.Namespace == "" {
			ct.Namespace = lp.Namespace
		}
	}
}

// Pod returns what is known about pod uid: runtime first, then
// /var/log/pods. known is false when neither knows it.
func (c *Cache) Pod(uid string) (Pod, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if p, ok := c.pods[uid]; ok {
		return p, true
	}
	if lp, ok := c.logPods[uid]; ok {
		return Pod{UID: uid, Name: lp.Name, Namespace: lp.Namespace, Source: SourcePath}, true
	}
	return Pod{UID: uid, Source: SourcePath}, false
}

// Instances returns every container the runtimes list, running or exited,
// sandboxes left out, with their pod names filled as Container fills them;
// in no particular order. The events (receiver/scrape/events.go) compare
// one listing with the next: a new instance of a pod's container is a
// restart, an exited one may have been OOM-killed. It only reads memory.
func (c *Cache) Instances() []Container {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]Container, 0, len(c.byID))
	for id, ct := range c.byID {
		if ct.Sandbox || c.sandbox[id] {
			continue
		}
		c.fillPod(&ct)
		out = append(out, ct)
	}
	return out
}

// IsSandbox reports whether id is a pod sandbox (pause) container.
func (c *Cache) IsSandbox(id string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.sandbox[id]
}

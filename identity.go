// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerstatsreceiver // import "github.com/containerstats/containerstatsreceiver"

import (
	"context"
	"sync"

	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/cri"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/identity/containerd"
	"github.com/containerstats/containerstatsreceiver/internal/podlogs"
	"github.com/containerstats/containerstatsreceiver/receiver/logs"
)

// runtimeIdentity builds the identity cache in Start (sockets are detected
// then, not when the config is loaded) and stops it in Shutdown. Before
// Start and after Shutdown it answers from the cgroup path only.
type runtimeIdentity struct {
	root   string
	cfg    RuntimeConfig
	logger *zap.Logger
	// exitStatus, when set and true at Start, makes the CRI listing read
	// exited containers' exit status (the events need it: eventHub.Active).
	exitStatus func() bool

	mu    sync.RWMutex
	cache *identity.Cache
}

func newRuntimeIdentity(root string, cfg RuntimeConfig, logger *zap.Logger) *runtimeIdentity {
	return &runtimeIdentity{root: root, cfg: cfg, logger: logger}
}

func (r *runtimeIdentity) Start(ctx context.Context) error {
	var resolvers []identity.Resolver
	closeAll := func() {
		for _, x := range resolvers {
			_ = x.Close()
		}
	}
	if ep := criEndpoint(r.root, r.cfg); ep != "" {
		c, err := cri.Dial(ep)
		if err != nil {
			closeAll()
			return err
		}
		res := cri.NewResolver(c)
		if r.exitStatus != nil && r.exitStatus() {
			res.SetExitStatus(true)
		}
		resolvers = append(resolvers, res)
	} else if r.cfg.CRIEnabled {
		r.logger.Warn("No CRI socket found under root_path; set runtime.cri_endpoint. Identity comes from containerd (when reachable), cgroup paths and /var/log/pods",
			zap.String("root_path", r.root), zap.Strings("tried", cri.Sockets()))
	}
	if r.cfg.ContainerdEnabled {
		if ep := containerd.Endpoint(r.root, r.cfg.ContainerdEndpoint); ep != "" {
			c, err := containerd.New(ep, r.cfg.ContainerdNamespaces)
			if err != nil {
				closeAll()
				return err
			}
			resolvers = append(resolvers, c)
		}
	}
	var logs *identity.PodLogs
	if r.cfg.PodLogs {
		logs = identity.NewPodLogs(r.root)
	}
	if len(resolvers) == 0 {
		r.logger.Warn("No container runtime to ask: container and pod names, images and restart counts come from /var/log/pods only (when readable), start times are first-seen times")
	}
	c := identity.NewCache(identity.CacheConfig{
		Resolvers: resolvers, PodLogs: logs, Logger: r.logger,
		RefreshInterval: r.cfg.RefreshInterval, Timeout: r.cfg.Timeout, MinRefresh: r.cfg.MinRefreshInterval,
	})
	if err := c.Start(ctx); err != nil {
		closeAll()
		return err
	}
	r.mu.Lock()
	r.cache = c
	r.mu.Unlock()
	return nil
}

func (r *runtimeIdentity) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	c := r.cache
	r.cache = nil
	r.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.Shutdown(ctx)
}

func (r *runtimeIdentity) get() *identity.Cache {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.cache
}

func (r *runtimeIdentity) Prepare(ctx context.Context, ids []string) {
	if c := r.get(); c != nil {
		c.Prepare(ctx, ids)
	}
}

// Pending: see identity.Cache.Pending (false before Start and after
// Shutdown: the path identity is then all there is).
func (r *runtimeIdentity) Pending(id string) bool {
	if c := r.get(); c != nil {
		return c.Pending(id)
	}
	return false
}

func (r *runtimeIdentity) Container(id, podUID string) (identity.Container, bool) {
	if c := r.get(); c != nil {
		return c.Container(id, podUID)
	}
	return identity.Container{ID: id, PodUID: podUID, Source: identity.SourcePath}, false
}

func (r *runtimeIdentity) Pod(uid string) (identity.Pod, bool) {
	if c := r.get(); c != nil {
		return c.Pod(uid)
	}
	return identity.Pod{UID: uid, Source: identity.SourcePath}, false
}

func (r *runtimeIdentity) IsSandbox(id string) bool {
	if c := r.get(); c != nil {
		return c.IsSandbox(id)
	}
	return false
}

// Instances lists every container the runtimes know (events: restarts and
// the runtime's OOM kills); nil before Start and after Shutdown.
func (r *runtimeIdentity) Instances() []identity.Container {
	if c := r.get(); c != nil {
		return c.Instances()
	}
	return nil
}

// ContainerByLog resolves a container log file for the logs signal.
func (r *runtimeIdentity) ContainerByLog(ctx context.Context, k podlogs.Key) (identity.Container, bool) {
	if c := r.get(); c != nil {
		return c.ContainerByLog(ctx, k)
	}
	return identity.Container{}, false
}

// sharedIdentities hands the receivers created from one *Config (the
// metrics and the logs receiver of one receiver ID) one identity cache. It
// lives in the factory, not in package state.
type sharedIdentities struct {
	mu sync.Mutex
	m  map[*Config]*sharedIdentity
}

func newSharedIdentities() *sharedIdentities {
	return &sharedIdentities{m: map[*Config]*sharedIdentity{}}
}

// get returns a new user of cfg's identity, creating the identity on first
// use.
func (s *sharedIdentities) get(cfg *Config, logger *zap.Logger) *identityUser {
	s.mu.Lock()
	defer s.mu.Unlock()
	x, ok := s.m[cfg]
	if !ok {
		host := cgroupfs.NewHost(cfg.RootPath)
		hub := newEventHub(logger)
		x = &sharedIdentity{
			runtimeIdentity: newRuntimeIdentity(cfg.RootPath, cfg.Runtime, logger), owner: s, key: cfg, host: host,
			cgroups: logs.NewCgroupIndex(host, cfg.StandaloneContainers, nil, logger),
			events:  hub,
		}
		x.runtimeIdentity.exitStatus = hub.Active
		s.m[cfg] = x
	}
	return &identityUser{runtimeIdentity: x.runtimeIdentity, shared: x}
}

// sharedIdentity starts the cache with its first started user and stops it
// with its last; then it forgets cfg (a reloaded collector brings new
// configs).
type sharedIdentity struct {
	*runtimeIdentity
	owner *sharedIdentities
	key   *Config
	// host is the root's cgroup layout, detected once for both signals.
	host *cgroupfs.Host
	// cgroups is the logs signal's container -> cgroup index; with both
	// signals on, the metrics scraper feeds it every discovered tree.
	cgroups *logs.CgroupIndex
	// events carries container events from the scrape that detects them
	// to the logs receiver (events.go).
	events *eventHub

	mu    sync.Mutex
	users int
}

// identityUser is one receiver's handle: its Shutdown releases only what
// its own Start took, so a receiver that failed before starting the
// identity cannot stop the other signal's cache.
type identityUser struct {
	*runtimeIdentity
	shared *sharedIdentity

	mu      sync.Mutex
	started bool
}

func (u *identityUser) Start(ctx context.Context) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.started {
		return nil
	}
	x := u.shared
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.users == 0 {
		if err := x.runtimeIdentity.Start(ctx); err != nil {
			return err
		}
	}
	x.users++
	u.started = true
	return nil
}

func (u *identityUser) Shutdown(ctx context.Context) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.started {
		return nil
	}
	u.started = false
	x := u.shared
	x.mu.Lock()
	defer x.mu.Unlock()
	x.users--
	if x.users > 0 {
		return nil
	}
	x.owner.mu.Lock()
	if x.owner.m[x.key] == x {
		delete(x.owner.m, x.key)
	}
	x.owner.mu.Unlock()
	return x.runtimeIdentity.Shutdown(ctx)
}

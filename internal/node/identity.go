// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package node

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/cri"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/identity/containerd"
	"github.com/containerstats/containerstatsreceiver/internal/identity/docker"
	"github.com/containerstats/containerstatsreceiver/internal/podlogs"
)

// IdentityConfig is the receiver's runtime section, as the identity uses
// it; the sockets are the Host's (Host.Endpoints).
type IdentityConfig struct {
	ContainerdNamespaces []string
	// ContainerLabels is the allow-list of container labels kept from the
	// Engine API and containerd (container.label.<key>).
	ContainerLabels []string
	Timeout         time.Duration
	RefreshInterval time.Duration
	MinRefresh      time.Duration
	PodLogs         bool
}

// Identity builds the identity cache in Start, on the runtime sockets of
// its Host (detected then, not when the config is loaded), and stops it
// in Shutdown. Before
// Start and after Shutdown it answers from the cgroup path only.
type Identity struct {
	host   *Host
	cfg    IdentityConfig
	logger *zap.Logger
	// exitStatus, when set and true at Start, makes the CRI listing read
	// exited containers' exit status (the events need it: Hub.Active).
	exitStatus func() bool

	mu    sync.RWMutex
	cache *identity.Cache
}

// NewIdentity returns the identity of host's runtimes; nothing is
// dialed before Start.
func NewIdentity(host *Host, cfg IdentityConfig, logger *zap.Logger) *Identity {
	return &Identity{host: host, cfg: cfg, logger: logger}
}

func (r *Identity) Start(ctx context.Context) error {
	var resolvers []identity.Resolver
	closeAll := func() {
		for _, x := range resolvers {
			_ = x.Close()
		}
	}
	eps := r.host.Endpoints()
	if ep := eps.CRI; ep != "" {
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
	} else if r.host.rt.CRI {
		r.logger.Warn("No CRI socket found under root_path; set runtime.cri_endpoint. Identity comes from containerd (when reachable), cgroup paths and /var/log/pods",
			zap.String("root_path", r.host.Root()), zap.Strings("tried", cri.Sockets()))
	}
	// Docker before containerd: docker's containers are in containerd's
	// moby namespace too, by ID alone, and the first resolver that knows a
	// container wins.
	for _, ep := range eps.Docker {
		d, err := docker.New(ep, r.cfg.ContainerLabels)
		if err != nil {
			closeAll()
			return err
		}
		resolvers = append(resolvers, d)
	}
	if ep := eps.Containerd; ep != "" {
		c, err := containerd.New(ep, r.cfg.ContainerdNamespaces, r.cfg.ContainerLabels)
		if err != nil {
			closeAll()
			return err
		}
		resolvers = append(resolvers, c)
	}
	var logs *identity.PodLogs
	if r.cfg.PodLogs {
		logs = identity.NewPodLogs(r.host.Root())
	}
	if len(resolvers) == 0 {
		r.logger.Warn("No container runtime to ask: container and pod names, images and restart counts come from /var/log/pods only (when readable), start times are first-seen times")
	}
	c := identity.NewCache(identity.CacheConfig{
		Resolvers: resolvers, PodLogs: logs, Logger: r.logger,
		RefreshInterval: r.cfg.RefreshInterval, Timeout: r.cfg.Timeout, MinRefresh: r.cfg.MinRefresh,
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

func (r *Identity) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	c := r.cache
	r.cache = nil
	r.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.Shutdown(ctx)
}

// Cache is the running cache; nil before Start and after Shutdown.
func (r *Identity) Cache() *identity.Cache {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.cache
}

func (r *Identity) Prepare(ctx context.Context, ids []string) {
	if c := r.Cache(); c != nil {
		c.Prepare(ctx, ids)
	}
}

// Pending: see identity.Cache.Pending (false before Start and after
// Shutdown: the path identity is then all there is).
func (r *Identity) Pending(id string) bool {
	if c := r.Cache(); c != nil {
		return c.Pending(id)
	}
	return false
}

func (r *Identity) Container(id, podUID string) (identity.Container, bool) {
	if c := r.Cache(); c != nil {
		return c.Container(id, podUID)
	}
	return identity.Container{ID: id, PodUID: podUID, Source: identity.SourcePath}, false
}

func (r *Identity) Pod(uid string) (identity.Pod, bool) {
	if c := r.Cache(); c != nil {
		return c.Pod(uid)
	}
	return identity.Pod{UID: uid, Source: identity.SourcePath}, false
}

func (r *Identity) IsSandbox(id string) bool {
	if c := r.Cache(); c != nil {
		return c.IsSandbox(id)
	}
	return false
}

// Instances lists every container the runtimes know (events: restarts and
// the runtime's OOM kills); nil before Start and after Shutdown.
func (r *Identity) Instances() []identity.Container {
	if c := r.Cache(); c != nil {
		return c.Instances()
	}
	return nil
}

// ContainerByLog resolves a container log file for the logs signal.
func (r *Identity) ContainerByLog(ctx context.Context, k podlogs.Key) (identity.Container, bool) {
	if c := r.Cache(); c != nil {
		return c.ContainerByLog(ctx, k)
	}
	return identity.Container{}, false
}

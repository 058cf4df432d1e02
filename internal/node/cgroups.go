// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package node // import "github.com/containerstats/containerstatsreceiver/internal/node"

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
)

// DefaultRediscover is the least time between two cgroup walks triggered by
// an unknown container ID.
const DefaultRediscover = 5 * time.Second

// CgroupIndex answers Cgroups from cgroupfs discovery under a host root
// (the walk the scrape does; the layout from the Host the scraper of the
// same configuration shares): a container ID maps to its cgroup, whose path
// gives the pod's QoS class and the runtime. The tree is walked again when
// an unknown ID is asked for, at most once per DefaultRediscover. A walk
// that fails keeps the last index; the failure is logged at warn when it
// starts (or changes) and at info when a walk succeeds again.
type CgroupIndex struct {
	host       *cgroupfs.Host
	standalone bool
	now        func() time.Time
	logger     *zap.Logger

	mu      sync.Mutex
	layout  *cgroupfs.Layout
	byID    map[string]cgroupfs.Cgroup
	last    time.Time
	lastErr string // the failure logged last; "" when the last walk worked
}

// NewCgroupIndex returns an index of host's cgroup tree; now nil means
// time.Now, logger nil logs nothing. Nothing is read until the first
// lookup.
func NewCgroupIndex(host *cgroupfs.Host, standalone bool, now func() time.Time, logger *zap.Logger) *CgroupIndex {
	if now == nil {
		now = time.Now
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	return &CgroupIndex{host: host, standalone: standalone, now: now, logger: logger}
}

// note logs the outcome of a walk when it differs from the last one.
func (x *CgroupIndex) note(err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if msg == x.lastErr {
		return
	}
	if err != nil {
		x.logger.Warn("Cannot read the cgroup tree: log records of the containers it does not show get no QoS class (and no runtime from the path)",
			zap.String("root_path", x.host.Root()), zap.Error(err))
	} else {
		x.logger.Info("The cgroup tree is readable again", zap.String("root_path", x.host.Root()))
	}
	x.lastErr = msg
}

// Update replaces the index with a tree discovered elsewhere (the metrics
// scraper's, when both signals run from one configuration), so the logs
// signal does not walk the tree again; it counts as a walk for the
// rediscovery interval. Containers below a directory the tree could not
// list keep their last known cgroup.
func (x *CgroupIndex) Update(t *cgroupfs.Tree) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.last = x.now()
	x.replace(t)
}

func (x *CgroupIndex) replace(t *cgroupfs.Tree) {
	byID := make(map[string]cgroupfs.Cgroup, len(t.Containers))
	for _, c := range t.Containers {
		byID[c.ContainerID] = c
	}
	for cid, c := range x.byID {
		if _, ok := byID[cid]; !ok && t.UnlistedAbove(c.Path) >= 0 {
			byID[cid] = c
		}
	}
	x.byID = byID
}

// Cgroup returns the cgroup of container id.
func (x *CgroupIndex) Cgroup(_ context.Context, id string) (cgroupfs.Cgroup, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if c, ok := x.byID[id]; ok {
		return c, true
	}
	if !x.last.IsZero() && x.now().Sub(x.last) < DefaultRediscover {
		return cgroupfs.Cgroup{}, false
	}
	x.last = x.now()
	if x.layout == nil {
		l, err := x.host.Layout()
		if err != nil {
			x.note(err)
			return cgroupfs.Cgroup{}, false
		}
		x.layout = l
	}
	t, err := x.layout.Discover(x.standalone)
	if err != nil {
		x.note(err)
		return cgroupfs.Cgroup{}, false
	}
	unlisted := make([]error, len(t.Unlisted))
	for i := range t.Unlisted {
		unlisted[i] = t.Unlisted[i]
	}
	x.note(errors.Join(unlisted...))
	x.replace(&t)
	c, ok := x.byID[id]
	return c, ok
}

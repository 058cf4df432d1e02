// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package logs // import "github.com/containerstats/containerstatsreceiver/receiver/logs"

import (
	"context"
	"sync"
	"time"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
)

// DefaultRediscover is the least time between two cgroup walks triggered by
// an unknown container ID.
const DefaultRediscover = 5 * time.Second

// CgroupIndex answers Cgroups from cgroupfs discovery under a host root
// (the walk the scrape does): a container ID maps to its cgroup, whose path
// gives the pod's QoS class and the runtime. The tree is walked again when
// an unknown ID is asked for, at most once per DefaultRediscover.
type CgroupIndex struct {
	root       string
	standalone bool
	now        func() time.Time

	mu     sync.Mutex
	layout *cgroupfs.Layout
	byID   map[string]cgroupfs.Cgroup
	last   time.Time
}

// NewCgroupIndex returns an index of the cgroup tree under root; now nil
// means time.Now. Nothing is read until the first lookup.
func NewCgroupIndex(root string, standalone bool, now func() time.Time) *CgroupIndex {
	if now == nil {
		now = time.Now
	}
	return &CgroupIndex{root: root, standalone: standalone, now: now}
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
		l, err := cgroupfs.Detect(x.root)
		if err != nil {
			return cgroupfs.Cgroup{}, false
		}
		x.layout = l
	}
	t, err := x.layout.Discover(x.standalone)
	if err != nil {
		return cgroupfs.Cgroup{}, false
	}
	x.byID = make(map[string]cgroupfs.Cgroup, len(t.Containers))
	for _, c := range t.Containers {
		x.byID[c.ContainerID] = c
	}
	c, ok := x.byID[id]
	return c, ok
}

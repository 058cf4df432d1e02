// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package node is the node state the signals of one receiver
// configuration share (the metrics scrape, the log files, the events):
// the host handle (Host: cgroup layout, /proc, runtime sockets and the
// log records' container -> cgroup index, all under root_path), the
// runtime identity cache and the events' hub. The factory hands
// one State per configuration to its receivers through
// sharedcomponent.Map; the identity cache starts with the first receiver
// that starts and stops with the last.
package node // import "github.com/containerstats/containerstatsreceiver/internal/node"

import (
	"context"

	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/containerevents"
	"github.com/containerstats/containerstatsreceiver/internal/sharedcomponent"
)

// Config is what the state is made from.
type Config struct {
	Host     HostConfig
	Identity IdentityConfig
}

// State is one configuration's shared node state.
type State struct {
	// Host is the host handle, the only reader of root_path: every
	// signal reads the host through it.
	Host *Host
	// Identity resolves container IDs from the runtimes; it answers
	// from the cgroup path only before Start and after Shutdown.
	Identity *Identity
	// Events carries container events from the scrape that detects them
	// to the logs receiver.
	Events *containerevents.Hub
}

// New returns the state of c; nothing is read or dialed before Start.
func New(c Config, logger *zap.Logger) *State {
	host := NewHost(c.Host, logger)
	hub := containerevents.NewHub(logger)
	id := NewIdentity(host, c.Identity, logger)
	// The CRI listing reads exited containers' exit status when a logs
	// receiver takes the events (asked at Start).
	id.exitStatus = hub.Active
	return &State{Host: host, Identity: id, Events: hub}
}

// Start starts the identity cache (sharedcomponent: with the first
// receiver that starts).
func (s *State) Start(ctx context.Context) error { return s.Identity.Start(ctx) }

// Shutdown stops the identity cache (with the last receiver).
func (s *State) Shutdown(ctx context.Context) error { return s.Identity.Shutdown(ctx) }

// Handle is one receiver's use of its configuration's State: the
// identity's answers, and Start and Shutdown that count the receiver in
// and out (sharedcomponent.User: the identity cache starts with the first
// and stops with the last). The scrape and the log files start and stop
// the Identity they are given, so they get a Handle.
type Handle struct {
	*Identity
	user *sharedcomponent.User[*State]
}

// Use returns a new receiver's handle on key's State, made from c when
// key has none.
func Use[K comparable](m *sharedcomponent.Map[K, *State], key K, c Config, logger *zap.Logger) *Handle {
	u := m.GetOrAdd(key, func() *State { return New(c, logger) })
	return &Handle{Identity: u.Value.Identity, user: u}
}

// State is the shared state.
func (h *Handle) State() *State { return h.user.Value }

// Start counts the receiver in (and starts the identity cache if it is
// the first).
func (h *Handle) Start(ctx context.Context) error { return h.user.Start(ctx) }

// Shutdown counts it out (and stops the cache if it was the last); safe
// twice and without Start.
func (h *Handle) Shutdown(ctx context.Context) error { return h.user.Shutdown(ctx) }

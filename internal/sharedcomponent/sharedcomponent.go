// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package sharedcomponent hands the components made from one
// configuration (the metrics and the logs receiver of one receiver ID)
// one value, the way contrib's internal/sharedcomponent does: GetOrAdd
// makes it for the first and returns it to the others. Unlike contrib's,
// the value starts with its first user's Start and stops with its last
// user's Shutdown, and a user that never started stops nothing (a
// receiver that failed before Start cannot stop the other signal's
// value). The map lives in the factory, not in package state.
package sharedcomponent // import "github.com/containerstats/containerstatsreceiver/internal/sharedcomponent"

import (
	"context"
	"sync"
)

// Value is what the users share: started once, stopped once.
type Value interface {
	Start(ctx context.Context) error
	Shutdown(ctx context.Context) error
}

// Map holds one value per key while it has users.
type Map[K comparable, V Value] struct {
	mu sync.Mutex
	m  map[K]*shared[V]
}

// NewMap returns an empty map.
func NewMap[K comparable, V Value]() *Map[K, V] {
	return &Map[K, V]{m: map[K]*shared[V]{}}
}

// GetOrAdd returns a new user of key's value, which create makes when key
// has none (or its last user has shut down: a reloaded collector brings
// new configurations, and a key is forgotten after its last user).
func (m *Map[K, V]) GetOrAdd(key K, create func() V) *User[V] {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.m[key]
	if !ok {
		s = &shared[V]{value: create(), forget: func(s *shared[V]) {
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.m[key] == s {
				delete(m.m, key)
			}
		}}
		m.m[key] = s
	}
	return &User[V]{Value: s.value, s: s}
}

// Len is the number of keys with a value (tests).
func (m *Map[K, V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}

// shared is one key's value and how many users have started it.
type shared[V Value] struct {
	value  V
	forget func(*shared[V])

	mu    sync.Mutex
	users int
}

// User is one component's handle on a shared value: Start and Shutdown
// count it in and out once each, whatever how often they are called.
type User[V Value] struct {
	// Value is the shared value; use it after Start (before Start and
	// after Shutdown it is not started, and may never be).
	Value V
	s     *shared[V]

	mu      sync.Mutex
	started bool
}

// Start starts the value if this is its first started user.
func (u *User[V]) Start(ctx context.Context) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.started {
		return nil
	}
	s := u.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users == 0 {
		if err := s.value.Start(ctx); err != nil {
			return err
		}
	}
	s.users++
	u.started = true
	return nil
}

// Shutdown stops the value if this is its last started user, and then
// forgets its key; nothing when this user did not start. Safe twice.
func (u *User[V]) Shutdown(ctx context.Context) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.started {
		return nil
	}
	u.started = false
	s := u.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users--
	if s.users > 0 {
		return nil
	}
	s.forget(s)
	return s.value.Shutdown(ctx)
}

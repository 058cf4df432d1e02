// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package identity

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

type memResolver struct {
	src    Source
	mu     sync.Mutex
	snap   Snapshot
	err    error
	lists  atomic.Int64
	closed atomic.Int64
}

func (m *memResolver) Source() Source   { return m.src }
func (m *memResolver) Endpoint() string { return "mem" }
func (m *memResolver) Close() error     { m.closed.Add(1); return nil }
func (m *memResolver) List(context.Context) (Snapshot, error) {
	m.lists.Add(1)
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.snap, m.err
}

func TestCacheLifecycle(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := &memResolver{src: SourceCRI}
	c := NewCache(CacheConfig{Resolvers: []Resolver{r}, RefreshInterval: 10 * time.Millisecond})
	require.NoError(t, c.Shutdown(context.Background()), "without Start")
	require.NoError(t, c.Start(context.Background()))
	require.Error(t, c.Start(context.Background()))
	require.Eventually(t, func() bool { return r.lists.Load() >= 3 }, 2*time.Second, 5*time.Millisecond, "background refresh")
	require.NoError(t, c.Shutdown(context.Background()))
	require.NoError(t, c.Shutdown(context.Background()), "twice")
	assert.EqualValues(t, 1, r.closed.Load())
}

// A refresh cancelled by its caller (Shutdown during a refresh, a scrape
// given up) is not a runtime outage: no warning, the listing stays.
func TestCacheCancelledRefreshIsNotAnOutage(t *testing.T) {
	r := &memResolver{src: SourceCRI, snap: Snapshot{Containers: []Container{{ID: hexA, PodName: "kept", Source: SourceCRI}}}}
	core, logs := observer.New(zapcore.InfoLevel)
	c := NewCache(CacheConfig{Resolvers: []Resolver{r}, Logger: zap.New(core)})
	c.Refresh(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.mu.Lock()
	r.err = context.Canceled
	r.mu.Unlock()
	c.Refresh(ctx)
	assert.Zero(t, logs.FilterLevelExact(zapcore.WarnLevel).Len())
	ct, ok := c.Container(hexA, "")
	assert.True(t, ok)
	assert.Equal(t, "kept", ct.PodName)
	// The same error with the caller's context alive is an outage.
	c.Refresh(context.Background())
	assert.Equal(t, 1, logs.FilterLevelExact(zapcore.WarnLevel).Len())
}

// CRI first: containerd only fills in what CRI does not know.
func TestCacheMergeOrder(t *testing.T) {
	id := hexA
	other := "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	criR := &memResolver{src: SourceCRI, snap: Snapshot{Containers: []Container{{ID: id, PodName: "from-cri", Source: SourceCRI}}}}
	ctrd := &memResolver{src: SourceContainerd, snap: Snapshot{
		Containers: []Container{{ID: id, PodName: "from-containerd", Source: SourceContainerd}, {ID: other, Sandbox: true, Source: SourceContainerd}},
	}}
	c := NewCache(CacheConfig{Resolvers: []Resolver{criR, ctrd}})
	c.Refresh(context.Background())
	got, ok := c.Container(id, "")
	require.True(t, ok)
	assert.Equal(t, "from-cri", got.PodName)
	assert.Equal(t, SourceCRI, got.Source)
	assert.True(t, c.IsSandbox(other), "the runtime's container-type label marks sandboxes")

	// CRI fails: its last good listing stays.
	criR.mu.Lock()
	criR.err = errors.New("down")
	criR.snap = Snapshot{}
	criR.mu.Unlock()
	c.Refresh(context.Background())
	got, _ = c.Container(id, "")
	assert.Equal(t, "from-cri", got.PodName)
}

func TestCacheUnknownIsPathOnly(t *testing.T) {
	c := NewCache(CacheConfig{})
	c.Prepare(context.Background(), []string{hexA}) // no resolver: nothing to call
	got, ok := c.Container(hexA, "uid-1")
	assert.False(t, ok)
	assert.Equal(t, Container{ID: hexA, PodUID: "uid-1", Source: SourcePath}, got)
	_, ok = c.Pod("uid-1")
	assert.False(t, ok)
}

// hangResolver's List blocks until its context ends or release is closed.
type hangResolver struct {
	src     Source
	entered chan struct{}
	release chan struct{}
}

func (h *hangResolver) Source() Source   { return h.src }
func (h *hangResolver) Endpoint() string { return "hang" }
func (h *hangResolver) Close() error     { return nil }
func (h *hangResolver) List(ctx context.Context) (Snapshot, error) {
	select {
	case h.entered <- struct{}{}:
	default:
	}
	select {
	case <-ctx.Done():
		return Snapshot{}, ctx.Err()
	case <-h.release:
		return Snapshot{}, nil
	}
}

// A scrape that meets an unknown container while a refresh is already
// running does not wait for it: Prepare returns at once and the scrape goes
// on with the cache.
func TestPrepareDoesNotWaitForARunningRefresh(t *testing.T) {
	h := &hangResolver{src: SourceCRI, entered: make(chan struct{}, 1), release: make(chan struct{})}
	c := NewCache(CacheConfig{Resolvers: []Resolver{h}, Timeout: time.Minute, MinRefresh: time.Nanosecond})
	done := make(chan struct{})
	go func() { c.Refresh(context.Background()); close(done) }()
	<-h.entered

	start := time.Now()
	c.Prepare(context.Background(), []string{"unknown-id"})
	assert.Less(t, time.Since(start), time.Second, "Prepare waited for the background refresh")

	close(h.release)
	<-done
}

// Resolvers are listed at once: two hanging runtimes cost one timeout, not
// two.
func TestRefreshBoundedByOneTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	a := &hangResolver{src: SourceCRI, entered: make(chan struct{}, 1), release: make(chan struct{})}
	b := &hangResolver{src: SourceContainerd, entered: make(chan struct{}, 1), release: make(chan struct{})}
	c := NewCache(CacheConfig{Resolvers: []Resolver{a, b}, Timeout: timeout})
	start := time.Now()
	c.Refresh(context.Background())
	took := time.Since(start)
	assert.GreaterOrEqual(t, took, timeout)
	assert.Less(t, took, 2*timeout, "resolvers listed one after the other")
}

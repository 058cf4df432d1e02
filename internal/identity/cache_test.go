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

// A container that appears after the runtime's last listing, when the
// scrape's Prepare may not refresh (MinRefresh), is pending: its identity
// is not fetched yet. The next Prepare allowed to refresh resolves it, or
// finds the runtime does not know it (then it is reported from its path,
// not pending). With no runtime answering nothing is pending.
func TestCachePending(t *testing.T) {
	other := "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	stranger := "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
	r := &memResolver{src: SourceCRI}
	now := time.Unix(1000, 0)
	c := NewCache(CacheConfig{Resolvers: []Resolver{r}, MinRefresh: 5 * time.Second, Now: func() time.Time { return now }})
	c.Refresh(context.Background()) // the runtime answers, knows nothing yet
	ctx := context.Background()

	// hexA and its sandbox appear 1 s after that listing: no refresh yet.
	r.mu.Lock()
	r.snap = Snapshot{Containers: []Container{{ID: hexA, PodName: "p", Source: SourceCRI}, {ID: other, Sandbox: true, Source: SourceCRI}}}
	r.mu.Unlock()
	now = now.Add(time.Second)
	c.Prepare(ctx, []string{hexA, other, stranger})
	assert.EqualValues(t, 1, r.lists.Load(), "rate-limited: no refresh")
	for _, id := range []string{hexA, other, stranger} {
		assert.True(t, c.Pending(id), "%s: not asked about yet", id[:4])
	}
	assert.False(t, c.Pending("never-prepared"))

	// 5 s later the scrape's Prepare refreshes: hexA is known, the sandbox
	// is one, the stranger is unknown to the runtime: none is pending.
	now = now.Add(5 * time.Second)
	c.Prepare(ctx, []string{hexA, other, stranger})
	assert.EqualValues(t, 2, r.lists.Load())
	for _, id := range []string{hexA, other, stranger} {
		assert.False(t, c.Pending(id), "%s: looked for", id[:4])
	}
	ct, known := c.Container(hexA, "")
	assert.True(t, known)
	assert.Equal(t, "p", ct.PodName)
	assert.True(t, c.IsSandbox(other))
	// The stranger stays a path-only container, never pending again.
	now = now.Add(time.Second)
	c.Prepare(ctx, []string{stranger})
	assert.False(t, c.Pending(stranger))

	// A background refresh landing between Prepare and the lookup resolves
	// a pending ID at once.
	late := "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
	c.Prepare(ctx, []string{late})
	require.True(t, c.Pending(late))
	r.mu.Lock()
	r.snap.Containers = append(r.snap.Containers, Container{ID: late, Source: SourceCRI})
	r.mu.Unlock()
	c.Refresh(ctx)
	assert.False(t, c.Pending(late))

	// The runtime down: nothing is pending, new IDs go by their path.
	r.mu.Lock()
	r.err = errors.New("down")
	r.mu.Unlock()
	now = now.Add(time.Minute)
	c.Refresh(ctx)
	now = now.Add(time.Second)
	down := "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
	c.Prepare(ctx, []string{down})
	assert.False(t, c.Pending(down), "no runtime answers: the path is all there will be")

	// No runtime configured at all.
	none := NewCache(CacheConfig{})
	none.Prepare(ctx, []string{hexA})
	assert.False(t, none.Pending(hexA))
}

// CRI and containerd are listed at once but not atomically: a container
// made in between is in containerd's listing and not in CRI's. While CRI
// answers, such an identity is incomplete (no restart count, containerd's
// creation time): pending like an unknown ID until a refresh asks CRI
// again. A container CRI still does not know after that (docker's, in
// containerd's moby namespace) keeps containerd's identity.
func TestCachePendingUntilCRIKnowsIt(t *testing.T) {
	docker := "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	criR := &memResolver{src: SourceCRI}
	ctrd := &memResolver{src: SourceContainerd, snap: Snapshot{Containers: []Container{
		{ID: hexA, ContainerName: "nginx", Source: SourceContainerd},
		{ID: docker, Name: "registry", Source: SourceContainerd},
	}}}
	now := time.Unix(1000, 0)
	c := NewCache(CacheConfig{Resolvers: []Resolver{criR, ctrd}, MinRefresh: 5 * time.Second, Now: func() time.Time { return now }})
	ctx := context.Background()
	c.Refresh(ctx) // CRI's listing before hexA, containerd's after
	now = now.Add(time.Second)
	c.Prepare(ctx, []string{hexA, docker})
	assert.True(t, c.Pending(hexA), "known to containerd only while CRI answers: not complete yet")
	assert.True(t, c.Pending(docker))

	criR.mu.Lock()
	criR.snap = Snapshot{Containers: []Container{{ID: hexA, ContainerName: "nginx", RestartCount: 1, HasRestart: true, Source: SourceCRI}}}
	criR.mu.Unlock()
	now = now.Add(5 * time.Second)
	c.Prepare(ctx, []string{hexA, docker})
	assert.False(t, c.Pending(hexA))
	ct, _ := c.Container(hexA, "")
	assert.Equal(t, SourceCRI, ct.Source)
	assert.True(t, ct.HasRestart)
	assert.False(t, c.Pending(docker), "CRI looked and does not know it: containerd's identity it is")
	ct, _ = c.Container(docker, "")
	assert.Equal(t, "registry", ct.Name)
	now = now.Add(time.Second)
	c.Prepare(ctx, []string{hexA, docker})
	assert.False(t, c.Pending(docker), "and it stays so")

	// CRI down: containerd's identity is all there is, nothing pending.
	criR.mu.Lock()
	criR.err = errors.New("down")
	criR.mu.Unlock()
	now = now.Add(time.Minute)
	c.Refresh(ctx)
	late := "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
	ctrd.mu.Lock()
	ctrd.snap.Containers = append(ctrd.snap.Containers, Container{ID: late, Source: SourceContainerd})
	ctrd.mu.Unlock()
	c.Refresh(ctx)
	now = now.Add(time.Second)
	c.Prepare(ctx, []string{late})
	assert.False(t, c.Pending(late))
}

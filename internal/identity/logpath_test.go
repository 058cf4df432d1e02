// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package identity

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/podlogs"
)

const hexB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

// TestContainerByLog: the runtime's container for a log file (attempt
// matters), else the ID the /var/log/containers link names, else nothing.
func TestContainerByLog(t *testing.T) {
	root := t.TempDir()
	links := filepath.Join(root, "var/log/containers")
	require.NoError(t, os.MkdirAll(links, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "var/log/pods/ops_cron-1_uid-2/job"), 0o755))
	require.NoError(t, os.Symlink("/var/log/pods/ops_cron-1_uid-2/job/4.log", filepath.Join(links, "cron-1_ops_job-"+hexB+".log")))
	// a link whose container name disagrees with its target is ignored
	require.NoError(t, os.Symlink("/var/log/pods/ops_cron-1_uid-2/other/0.log", filepath.Join(links, "cron-1_ops_job-"+hexA+".log")))
	r := &memResolver{src: SourceCRI, snap: Snapshot{Containers: []Container{
		{ID: hexA, PodUID: "uid-1", ContainerName: "app", PodName: "web", Namespace: "shop", RestartCount: 3, HasRestart: true, Source: SourceCRI},
	}}}
	c := NewCache(CacheConfig{Resolvers: []Resolver{r}, PodLogs: NewPodLogs(root)})
	ctx := context.Background()
	c.Refresh(ctx)

	ct, ok := c.ContainerByLog(ctx, podlogs.Key{PodUID: "uid-1", Container: "app", Restart: 3})
	require.True(t, ok)
	assert.Equal(t, hexA, ct.ID)
	assert.Equal(t, SourceCRI, ct.Source)

	_, ok = c.ContainerByLog(ctx, podlogs.Key{PodUID: "uid-1", Container: "app", Restart: 2})
	assert.False(t, ok, "another attempt is another container")

	ct, ok = c.ContainerByLog(ctx, podlogs.Key{PodUID: "uid-2", Container: "job", Restart: 4})
	require.True(t, ok)
	assert.Equal(t, Container{ID: hexB, PodUID: "uid-2", PodName: "cron-1", Namespace: "ops", ContainerName: "job", Source: SourcePath}, ct)
	_, ok = c.ContainerByLog(ctx, podlogs.Key{PodUID: "uid-2", Container: "other", Restart: 0})
	assert.False(t, ok)
}

// An unknown log file triggers one refresh, not one per batch; the
// background refresh still finds it later.
func TestContainerByLogRefreshOnce(t *testing.T) {
	now := time.Date(2026, 11, 22, 7, 0, 0, 0, time.UTC)
	r := &memResolver{src: SourceCRI}
	c := NewCache(CacheConfig{Resolvers: []Resolver{r}, Now: func() time.Time { return now }})
	ctx := context.Background()
	c.Refresh(ctx)
	require.EqualValues(t, 1, r.lists.Load())
	k := podlogs.Key{PodUID: "uid-9", Container: "late", Restart: 0}
	for i := 0; i < 3; i++ {
		now = now.Add(time.Minute)
		_, ok := c.ContainerByLog(ctx, k)
		assert.False(t, ok)
	}
	assert.EqualValues(t, 2, r.lists.Load(), "one refresh for the unknown file, then none")
	r.mu.Lock()
	r.snap.Containers = []Container{{ID: hexB, PodUID: "uid-9", ContainerName: "late", HasRestart: true, Source: SourceCRI}}
	r.mu.Unlock()
	c.Refresh(ctx) // the background loop
	ct, ok := c.ContainerByLog(ctx, k)
	require.True(t, ok)
	assert.Equal(t, hexB, ct.ID)
}

// An ID no runtime knows is named from /var/log: the /var/log/containers
// file naming its ID, else the only container of its pod in /var/log/pods,
// its pod from the runtime's pods;
// a known container without a pod UID takes the path's, one with its own
// keeps it.
func TestContainerNamedFromPodLogs(t *testing.T) {
	const hexC = "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
	const hexD = "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
	root := t.TempDir()
	for _, d := range []string{"var/log/pods/shop_web-0_uid-1/nginx", "var/log/pods/shop_web-0_uid-1/sidecar", "var/log/pods/ops_agent-x_uid-2/agent", "var/log/containers"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "var/log/containers/web-0_shop_sidecar-"+hexA+".log"), nil, 0o600))
	r := &memResolver{src: SourceDocker, snap: Snapshot{Containers: []Container{
		{ID: hexC, Name: "standalone", Source: SourceDocker},
		{ID: hexD, Name: "own-pod", PodUID: "uid-9", Source: SourceDocker},
	}, Pods: []Pod{
		{UID: "uid-3", Name: "db-0", Namespace: "data", Source: SourceDocker},
		{UID: "uid-3", Name: "later", Namespace: "other", Source: SourceDocker},
		{Name: "no-uid", Namespace: "data", Source: SourceDocker},
	}}}
	c := NewCache(CacheConfig{Resolvers: []Resolver{r}, PodLogs: NewPodLogs(root)})
	c.Refresh(context.Background())

	ct, ok := c.Container(hexA, "uid-1")
	assert.False(t, ok)
	assert.Equal(t, Container{ID: hexA, PodUID: "uid-1", PodName: "web-0", Namespace: "shop", ContainerName: "sidecar", Source: SourcePath}, ct)
	ct, _ = c.Container(hexB, "uid-2")
	assert.Equal(t, Container{ID: hexB, PodUID: "uid-2", PodName: "agent-x", Namespace: "ops", ContainerName: "agent", Source: SourcePath}, ct, "the pod's only container")
	ct, _ = c.Container(hexB, "uid-1")
	assert.Empty(t, ct.ContainerName, "two containers: no guess")
	ct, _ = c.Container(hexB, "")
	assert.Equal(t, Container{ID: hexB, Source: SourcePath}, ct)
	ct, _ = c.Container(hexB, "uid-3")
	assert.Equal(t, Container{ID: hexB, PodUID: "uid-3", PodName: "db-0", Namespace: "data", Source: SourcePath}, ct, "the runtime's pod, its first listing")
	_, ok = c.Pod("")
	assert.False(t, ok, "a pod without a UID is not kept")

	ct, ok = c.Container(hexC, "uid-2")
	assert.True(t, ok)
	assert.Equal(t, Container{ID: hexC, Name: "standalone", PodUID: "uid-2", PodName: "agent-x", Namespace: "ops", Source: SourceDocker}, ct)
	ct, _ = c.Container(hexD, "uid-1")
	assert.Equal(t, "uid-9", ct.PodUID)
}

// Two runtime containers claiming one log file (never seen): the smaller
// ID, whatever the listing's order.
func TestContainerByLogClashIsDeterministic(t *testing.T) {
	key := podlogs.Key{PodUID: "uid-1", Container: "app", Restart: 3}
	for _, order := range [][]string{{hexA, hexB}, {hexB, hexA}} {
		var cts []Container
		for _, id := range order {
			cts = append(cts, Container{ID: id, PodUID: key.PodUID, ContainerName: key.Container, RestartCount: key.Restart, HasRestart: true, Source: SourceCRI})
		}
		c := NewCache(CacheConfig{Resolvers: []Resolver{&memResolver{src: SourceCRI, snap: Snapshot{Containers: cts}}}})
		c.Refresh(context.Background())
		ct, ok := c.ContainerByLog(context.Background(), key)
		require.True(t, ok)
		assert.Equal(t, hexA, ct.ID, "%v", order)
	}
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package identity

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const hexB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

func TestParseLogPath(t *testing.T) {
	for _, p := range []string{
		"/var/log/pods/shop_web-0_0f3c2b9e-1111-4222-8333-944445555666/nginx/7.log",
		"/hostfs/var/log/pods/shop_web-0_0f3c2b9e-1111-4222-8333-944445555666/nginx/7.log",
		"/var/log/pods/shop_web-0_0f3c2b9e-1111-4222-8333-944445555666/nginx/7.log.20261122-060504",
	} {
		lp, k, err := ParseLogPath(p)
		require.NoError(t, err, p)
		assert.Equal(t, LogPod{Namespace: "shop", Name: "web-0", UID: "0f3c2b9e-1111-4222-8333-944445555666", Containers: []string{"nginx"}}, lp)
		assert.Equal(t, LogKey{PodUID: "0f3c2b9e-1111-4222-8333-944445555666", Container: "nginx", Restart: 7}, k)
	}
	for _, bad := range []string{"", "/", "7.log", "/var/log/pods/a_b/c/0.log", "/var/log/pods/a_b_c/d/x.log", "/var/log/pods/a_b_c/d/-1.log", "/var/log/pods/a_b_c/d/0.txt", "a_b_c/0.log"} {
		_, _, err := ParseLogPath(bad)
		assert.ErrorIs(t, err, errLogName, bad)
	}
}

// Property: whatever parses formats back (under any prefix) to the same
// key, and never panics.
func FuzzParseLogPath(f *testing.F) {
	f.Add("/var/log/pods/ns_pod_uid/ctr/0.log")
	f.Add("/hostfs/var/log/pods/ns_pod_uid/ctr/12.log.20261122-060504")
	f.Add("ns_pod_uid/ctr/1.log")
	f.Add("/a_b_c/d/99999999999999999999.log")
	f.Fuzz(func(t *testing.T, p string) {
		lp, k, err := ParseLogPath(p)
		if err != nil {
			return
		}
		again := fmt.Sprintf("/x/%s_%s_%s/%s/%d.log", lp.Namespace, lp.Name, lp.UID, k.Container, k.Restart)
		lp2, k2, err := ParseLogPath(again)
		require.NoError(t, err, again)
		require.Equal(t, k, k2)
		require.Equal(t, lp, lp2)
		require.GreaterOrEqual(t, k.Restart, int64(0))
	})
}

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

	ct, ok := c.ContainerByLog(ctx, LogKey{PodUID: "uid-1", Container: "app", Restart: 3})
	require.True(t, ok)
	assert.Equal(t, hexA, ct.ID)
	assert.Equal(t, SourceCRI, ct.Source)

	_, ok = c.ContainerByLog(ctx, LogKey{PodUID: "uid-1", Container: "app", Restart: 2})
	assert.False(t, ok, "another attempt is another container")

	ct, ok = c.ContainerByLog(ctx, LogKey{PodUID: "uid-2", Container: "job", Restart: 4})
	require.True(t, ok)
	assert.Equal(t, Container{ID: hexB, PodUID: "uid-2", PodName: "cron-1", Namespace: "ops", ContainerName: "job", Source: SourcePath}, ct)
	_, ok = c.ContainerByLog(ctx, LogKey{PodUID: "uid-2", Container: "other", Restart: 0})
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
	k := LogKey{PodUID: "uid-9", Container: "late", Restart: 0}
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

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerstatsreceiver

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// The metrics and logs receivers of one config share one node state and
// identity cache, started by the first Start and stopped by the last
// Shutdown; a user that never started cannot stop it; another config
// gets its own; a config is forgotten after its last user.
func TestSharedNodeState(t *testing.T) {
	ns := newNodes()
	cfg := createDefaultConfig().(*Config)
	cfg.RootPath = t.TempDir()
	cfg.Runtime.CRIEnabled, cfg.Runtime.ContainerdEnabled = false, false
	ctx := context.Background()

	metricsUser := useNode(ns, cfg, zap.NewNop())
	logsUser := useNode(ns, cfg, zap.NewNop())
	idle := useNode(ns, cfg, zap.NewNop())
	assert.Same(t, metricsUser.State(), logsUser.State())
	assert.Same(t, metricsUser.Identity, logsUser.Identity)
	other := useNode(ns, createDefaultConfig().(*Config), zap.NewNop())
	assert.NotSame(t, metricsUser.State(), other.State())

	require.NoError(t, metricsUser.Start(ctx))
	cache := metricsUser.Cache()
	require.NotNil(t, cache)
	require.NoError(t, logsUser.Start(ctx))
	assert.Same(t, cache, logsUser.Cache(), "second Start reuses the cache")

	require.NoError(t, idle.Shutdown(ctx))
	assert.NotNil(t, logsUser.Cache(), "a user that never started stops nothing")
	require.NoError(t, metricsUser.Shutdown(ctx))
	require.NoError(t, metricsUser.Shutdown(ctx))
	assert.Same(t, cache, logsUser.Cache(), "still used by logs")
	require.NoError(t, logsUser.Shutdown(ctx))
	assert.Nil(t, logsUser.Cache(), "last user stopped it")
	assert.Equal(t, 1, ns.Len(), "config forgotten after the last user; the other kept")
}

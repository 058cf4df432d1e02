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

// The metrics and logs receivers of one config share one identity cache,
// started by the first Start and stopped by the last Shutdown; a user that
// never started cannot stop it; another config gets its own.
func TestSharedIdentity(t *testing.T) {
	ids := newSharedIdentities()
	cfg := createDefaultConfig().(*Config)
	cfg.RootPath = t.TempDir()
	cfg.Runtime.CRIEnabled, cfg.Runtime.ContainerdEnabled = false, false
	ctx := context.Background()

	metricsUser := ids.get(cfg, zap.NewNop())
	logsUser := ids.get(cfg, zap.NewNop())
	idle := ids.get(cfg, zap.NewNop())
	assert.Same(t, metricsUser.runtimeIdentity, logsUser.runtimeIdentity)
	other := ids.get(createDefaultConfig().(*Config), zap.NewNop())
	assert.NotSame(t, metricsUser.runtimeIdentity, other.runtimeIdentity)

	require.NoError(t, metricsUser.Start(ctx))
	cache := metricsUser.get()
	require.NotNil(t, cache)
	require.NoError(t, logsUser.Start(ctx))
	assert.Same(t, cache, logsUser.get(), "second Start reuses the cache")

	require.NoError(t, idle.Shutdown(ctx))
	assert.NotNil(t, logsUser.get(), "a user that never started stops nothing")
	require.NoError(t, metricsUser.Shutdown(ctx))
	require.NoError(t, metricsUser.Shutdown(ctx))
	assert.Same(t, cache, logsUser.get(), "still used by logs")
	require.NoError(t, logsUser.Shutdown(ctx))
	assert.Nil(t, logsUser.get(), "last user stopped it")
	ids.mu.Lock()
	_, kept := ids.m[cfg]
	ids.mu.Unlock()
	assert.False(t, kept, "config forgotten after the last user")
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerstatsreceiver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/node"
)

// No runtime socket under root_path: the receiver says so at warn once and
// answers from the path and /var/log/pods.
func TestRuntimeIdentityNoRuntime(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "var/log/pods/shop_web-0_uid-1/nginx"), 0o755))
	core, logs := observer.New(zapcore.InfoLevel)
	cfg := createDefaultConfig().(*Config)
	r := newIdentity(cfg, root, zap.New(core))
	require.NoError(t, r.Shutdown(context.Background()), "without Start")
	id := strings.Repeat("ab", 32)
	got, known := r.Container(id, "uid-1")
	assert.False(t, known)
	assert.Equal(t, identity.Container{ID: id, PodUID: "uid-1", Source: identity.SourcePath}, got, "before Start: path only")

	require.NoError(t, r.Start(context.Background()))
	got, known = r.Container(id, "uid-1")
	assert.False(t, known)
	assert.Equal(t, identity.Container{ID: id, PodUID: "uid-1", PodName: "web-0", Namespace: "shop", ContainerName: "nginx", Source: identity.SourcePath}, got)
	p, ok := r.Pod("uid-1")
	assert.True(t, ok)
	assert.Equal(t, "web-0", p.Name)
	assert.Equal(t, 1, logs.FilterMessageSnippet("No CRI socket found").Len())
	assert.Equal(t, 1, logs.FilterMessageSnippet("No container runtime to ask").Len())
	require.NoError(t, r.Shutdown(context.Background()))
	require.NoError(t, r.Shutdown(context.Background()), "twice")
}

// A configured endpoint that does not answer: Start still succeeds (the
// runtime may come up later) and the warning names the endpoint.
func TestRuntimeIdentityDeadEndpoint(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	cfg := createDefaultConfig().(*Config)
	cfg.Runtime.CRIEndpoint = filepath.Join(t.TempDir(), "cri.sock")
	cfg.Runtime.ContainerdEnabled = false
	cfg.Runtime.Timeout = 200 * time.Millisecond
	r := newIdentity(cfg, t.TempDir(), zap.New(core))
	require.NoError(t, r.Start(context.Background()))
	defer func() { require.NoError(t, r.Shutdown(context.Background())) }()
	warns := logs.FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, warns, 1)
	assert.Equal(t, cfg.Runtime.CRIEndpoint, warns[0].ContextMap()["endpoint"])
	assert.Equal(t, "cri", warns[0].ContextMap()["source"])
}

// newIdentity is cfg's identity on a host handle of its own under root.
func newIdentity(cfg *Config, root string, logger *zap.Logger) *node.Identity {
	nc := nodeConfig(cfg)
	nc.Host.Root = root
	return node.NewIdentity(node.NewHost(nc.Host, nil), nc.Identity, logger)
}

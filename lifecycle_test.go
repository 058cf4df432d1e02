// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerstatsreceiver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// Shutdown is safe without Start and twice after it, for the metrics and
// the logs receivers; Start returns fast even when no runtime answers.
func TestShutdownTwiceAndWithoutStart(t *testing.T) {
	f := NewFactory()
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.Runtime.CRIEndpoint = "/nonexistent/cri.sock"
	cfg.Runtime.ContainerdEndpoint = "/nonexistent/containerd.sock"
	cfg.Runtime.Timeout = 200 * time.Millisecond
	set := receivertest.NewNopSettings(metadata.Type)
	ctx := context.Background()

	m, err := f.CreateMetrics(ctx, set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, m.Shutdown(ctx), "without Start")
	require.NoError(t, m.Shutdown(ctx), "twice without Start")

	m, err = f.CreateMetrics(ctx, set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, m.Start(ctx, componenttest.NewNopHost()))
	require.Less(t, time.Since(start), 2*time.Second, "Start must return fast with dead runtime sockets")
	require.NoError(t, m.Shutdown(ctx))
	require.NoError(t, m.Shutdown(ctx), "twice")

	cfg.Logs.Enabled = true
	l, err := f.CreateLogs(ctx, set, cfg, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, l.Shutdown(ctx), "logs without Start")
	require.NoError(t, l.Shutdown(ctx), "logs twice without Start")
}

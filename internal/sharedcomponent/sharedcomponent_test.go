// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package sharedcomponent

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// counter counts its starts and stops; startErr fails its Start.
type counter struct {
	starts, stops int
	startErr      error
}

func (c *counter) Start(context.Context) error {
	if c.startErr != nil {
		return c.startErr
	}
	c.starts++
	return nil
}

func (c *counter) Shutdown(context.Context) error {
	c.stops++
	return nil
}

// The users of one key share one value, started by the first Start and
// stopped by the last Shutdown; a user that never started stops nothing;
// another key gets its own; the key is forgotten after its last user.
func TestSharedValue(t *testing.T) {
	m := NewMap[string, *counter]()
	made := 0
	create := func() *counter { made++; return &counter{} }
	ctx := context.Background()

	metrics := m.GetOrAdd("a", create)
	logs := m.GetOrAdd("a", create)
	idle := m.GetOrAdd("a", create)
	other := m.GetOrAdd("b", create)
	assert.Same(t, metrics.Value, logs.Value)
	assert.NotSame(t, metrics.Value, other.Value)
	assert.Equal(t, 2, made)

	require.NoError(t, metrics.Start(ctx))
	require.NoError(t, metrics.Start(ctx), "twice")
	require.NoError(t, logs.Start(ctx))
	assert.Equal(t, 1, metrics.Value.starts, "second user reuses the started value")

	require.NoError(t, idle.Shutdown(ctx))
	assert.Zero(t, metrics.Value.stops, "a user that never started stops nothing")
	require.NoError(t, metrics.Shutdown(ctx))
	require.NoError(t, metrics.Shutdown(ctx), "twice")
	assert.Zero(t, metrics.Value.stops, "still used by logs")
	assert.Equal(t, 2, m.Len())
	require.NoError(t, logs.Shutdown(ctx))
	assert.Equal(t, 1, metrics.Value.stops, "last user stopped it")
	assert.Equal(t, 1, m.Len(), "key forgotten after its last user")

	again := m.GetOrAdd("a", create)
	assert.NotSame(t, metrics.Value, again.Value, "a new value after the last user")
	assert.Zero(t, other.Value.starts)
}

// A value that fails to start counts no user: a later Start tries again,
// and Shutdown stops nothing.
func TestStartFails(t *testing.T) {
	m := NewMap[int, *counter]()
	boom := errors.New("boom")
	u := m.GetOrAdd(1, func() *counter { return &counter{startErr: boom} })
	require.ErrorIs(t, u.Start(context.Background()), boom)
	require.NoError(t, u.Shutdown(context.Background()))
	assert.Zero(t, u.Value.stops)
	u.Value.startErr = nil
	require.NoError(t, u.Start(context.Background()))
	assert.Equal(t, 1, u.Value.starts)
}

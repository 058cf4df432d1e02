// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package lifecycle is what the factory wraps its receivers in: a
// Shutdown that is safe twice, a receiver made of parts, one that does
// nothing.
package lifecycle // import "github.com/containerstats/containerstatsreceiver/internal/lifecycle"

import (
	"context"
	"errors"
	"sync"

	"go.opentelemetry.io/collector/component"
)

// ShutdownOnce makes a receiver's Shutdown safe to call twice: the
// scraper controller closes a channel in Shutdown and panics on a second
// call.
type ShutdownOnce struct {
	component.Component
	once sync.Once
	err  error
}

// Shutdown shuts the component down the first time.
func (s *ShutdownOnce) Shutdown(ctx context.Context) error {
	s.once.Do(func() { s.err = s.Component.Shutdown(ctx) })
	return s.err
}

// OnceShutdown wraps what a create function returns (a receiver.Metrics
// or receiver.Logs: both are a component.Component) in a ShutdownOnce.
func OnceShutdown[T component.Component](r T, err error) (T, error) {
	if err != nil {
		return r, err
	}
	var wrapped component.Component = &ShutdownOnce{Component: r}
	return wrapped.(T), nil
}

// Parts is a receiver made of parts (the log files, the events): started
// in order, shut down in reverse. A part that fails to start fails Start;
// the collector then shuts every part down (each part's Shutdown is safe
// without its Start).
type Parts []component.Component

// Start starts the parts in order.
func (p Parts) Start(ctx context.Context, host component.Host) error {
	for _, c := range p {
		if err := c.Start(ctx, host); err != nil {
			return err
		}
	}
	return nil
}

// Shutdown shuts every part down, the last first.
func (p Parts) Shutdown(ctx context.Context) error {
	var errs []error
	for i := len(p) - 1; i >= 0; i-- {
		errs = append(errs, p[i].Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// Nop is a receiver that starts nothing (a logs pipeline with
// logs.enabled and events.enabled false).
type Nop struct{}

// Start does nothing.
func (Nop) Start(context.Context, component.Host) error { return nil }

// Shutdown does nothing.
func (Nop) Shutdown(context.Context) error { return nil }

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerstatsreceiver // import "github.com/containerstats/containerstatsreceiver"

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
)

// shutdownOnce makes a receiver's Shutdown safe to call twice: the scraper
// controller closes a channel in Shutdown and panics on a second call.
type shutdownOnce struct {
	component.Component
	once sync.Once
	err  error
}

func (s *shutdownOnce) Shutdown(ctx context.Context) error {
	s.once.Do(func() { s.err = s.Component.Shutdown(ctx) })
	return s.err
}

// onceShutdown wraps what a create function returns (a receiver.Metrics or
// receiver.Logs: both are a component.Component).
func onceShutdown[T component.Component](r T, err error) (T, error) {
	if err != nil {
		return r, err
	}
	var wrapped component.Component = &shutdownOnce{Component: r}
	return wrapped.(T), nil
}

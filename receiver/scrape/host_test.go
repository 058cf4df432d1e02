// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/containerstats/containerstatsreceiver/internal/node"
)

// testHost is the host handle of a scraper under root, as the factory
// makes it (no runtime socket, no cgroup index fed).
func testHost(root string) Host { return node.NewHost(node.HostConfig{Root: root}, nil) }

// A scraper without a host handle does not start: there is no fallback.
func TestStartNeedsHost(t *testing.T) {
	s := New(newSettings(), Options{MetricsBuilderConfig: defaultMBC()})
	err := s.Start(context.Background(), componenttest.NewNopHost())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no host handle")
	require.NoError(t, s.Shutdown(context.Background()))
}

// A root without a cgroup tree fails Start, the error naming root_path.
func TestStartNamesRootPath(t *testing.T) {
	root := t.TempDir()
	s := New(newSettings(), Options{Host: testHost(root), MetricsBuilderConfig: defaultMBC()})
	err := s.Start(context.Background(), componenttest.NewNopHost())
	require.Error(t, err)
	assert.Contains(t, err.Error(), `root_path "`+root+`"`)
	require.NoError(t, s.Shutdown(context.Background()))
}

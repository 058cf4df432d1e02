// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package identity

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/filter"
)

type selector struct {
	ctrs      map[string]Container
	pending   map[string]bool
	sandboxes map[string]bool
}

func (s selector) Container(id, podUID string) (Container, bool) {
	c, ok := s.ctrs[id]
	if !ok {
		return Container{ID: id, PodUID: podUID, Source: SourcePath}, false
	}
	return c, true
}
func (s selector) Pending(id string) bool   { return s.pending[id] }
func (s selector) IsSandbox(id string) bool { return s.sandboxes[id] }

// Select: pending first (left to the next scrape), then exited, sandboxes
// (by the identity's flag or the runtime's sandbox list, unless
// included), then the filter; an unknown container is reported with its
// path identity.
func TestSelect(t *testing.T) {
	s := selector{
		ctrs: map[string]Container{
			"run":  {ID: "run", PodUID: "p1", Namespace: "shop", PodName: "web-0", ContainerName: "nginx"},
			"new":  {ID: "new", PodUID: "p1", Namespace: "shop", PodName: "web-0", ContainerName: "late"},
			"gone": {ID: "gone", PodUID: "p1", Namespace: "shop", PodName: "web-0", ContainerName: "old", Exited: true},
			"box":  {ID: "box", PodUID: "p1", Namespace: "shop", PodName: "web-0", Sandbox: true},
			"kube": {ID: "kube", PodUID: "p2", Namespace: "kube-system", PodName: "dns-1", ContainerName: "coredns"},
		},
		pending:   map[string]bool{"new": true},
		sandboxes: map[string]bool{"pause": true},
	}
	rules, err := CompileRules(nil, []filter.Config{{Strict: "kube-system"}})
	require.NoError(t, err)
	f := Filter{Namespaces: rules}
	for _, c := range []struct {
		id                string
		sandboxes         bool
		pending, reported bool
	}{
		{id: "run", reported: true},
		{id: "new", pending: true},
		{id: "gone"},
		{id: "box"},
		{id: "box", sandboxes: true, reported: true},
		{id: "pause"},
		{id: "pause", sandboxes: true, reported: true},
		{id: "kube"},
		{id: "unknown", reported: true},
	} {
		ct, pending, reported := Select(s, c.id, "p9", c.sandboxes, f)
		assert.Equal(t, c.id, ct.ID, c.id)
		assert.Equal(t, c.pending, pending, "%s pending", c.id)
		assert.Equal(t, c.reported, reported, "%s reported (sandboxes %v)", c.id, c.sandboxes)
	}
}

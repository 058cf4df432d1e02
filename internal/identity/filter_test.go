// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package identity

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/filter"
)

func TestRules(t *testing.T) {
	r, err := CompileRules(
		[]filter.Config{{Regex: "^kube-"}, {Regex: "^team-[0-9]+$"}, {Strict: "default"}},
		[]filter.Config{{Strict: "kube-public"}})
	require.NoError(t, err)
	for v, want := range map[string]bool{
		"kube-system": true, "kube-public": false, "team-42": true, "team-x": false, "default": true, "defaults": false, "app": false, "": false,
	} {
		assert.Equal(t, want, r.Allow(v), v)
	}
	ex, err := CompileRules(nil, []filter.Config{{Regex: "^istio-"}})
	require.NoError(t, err)
	assert.True(t, ex.Allow(""), "unknown passes when there is no include rule")
	assert.True(t, ex.Allow("app"))
	assert.False(t, ex.Allow("istio-proxy"))

	_, err = CompileRules([]filter.Config{{Strict: "a"}, {Regex: "[a-"}}, nil)
	assert.ErrorContains(t, err, "include::1: error parsing regexp")
	_, err = CompileRules(nil, []filter.Config{{}})
	assert.ErrorContains(t, err, "exclude::0: must specify either strict or regex")
	_, err = CompileRules([]filter.Config{{Strict: "a", Regex: "b"}}, nil)
	assert.Error(t, err)
}

func TestFilter(t *testing.T) {
	ns, _ := CompileRules(nil, []filter.Config{{Strict: "kube-system"}})
	ctr, _ := CompileRules(nil, []filter.Config{{Strict: "istio-proxy"}})
	f := Filter{Namespaces: ns, Containers: ctr}
	assert.True(t, f.AllowContainer("shop", "web-0", "nginx"))
	assert.False(t, f.AllowContainer("shop", "web-0", "istio-proxy"))
	assert.False(t, f.AllowContainer("kube-system", "coredns", "coredns"))
	assert.False(t, f.AllowPod("kube-system", "coredns"))
	assert.True(t, Filter{}.AllowContainer("", "", ""))
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package identity

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRules(t *testing.T) {
	r, err := CompileRules([]string{"kube-*", "regex:^team-[0-9]+$"}, []string{"kube-public"})
	require.NoError(t, err)
	for v, want := range map[string]bool{
		"kube-system": true, "kube-public": false, "team-42": true, "team-x": false, "default": false, "": false,
	} {
		assert.Equal(t, want, r.Allow(v), v)
	}
	ex, err := CompileRules(nil, []string{"regex:^istio-"})
	require.NoError(t, err)
	assert.True(t, ex.Allow(""), "unknown passes when there is no include rule")
	assert.True(t, ex.Allow("app"))
	assert.False(t, ex.Allow("istio-proxy"))

	_, err = CompileRules([]string{"[a-"}, nil)
	assert.ErrorContains(t, err, `include: pattern "[a-"`)
	_, err = CompileRules(nil, []string{"regex:("})
	assert.ErrorContains(t, err, `exclude: pattern "regex:("`)
	_, err = CompileRules([]string{""}, nil)
	assert.Error(t, err)
}

func TestFilter(t *testing.T) {
	ns, _ := CompileRules(nil, []string{"kube-system"})
	ctr, _ := CompileRules(nil, []string{"istio-proxy"})
	f := Filter{Namespaces: ns, Containers: ctr}
	assert.True(t, f.AllowContainer("shop", "web-0", "nginx"))
	assert.False(t, f.AllowContainer("shop", "web-0", "istio-proxy"))
	assert.False(t, f.AllowContainer("kube-system", "coredns", "coredns"))
	assert.False(t, f.AllowPod("kube-system", "coredns"))
	assert.True(t, Filter{}.AllowContainer("", "", ""))
}

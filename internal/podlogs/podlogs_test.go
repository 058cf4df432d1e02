// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package podlogs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const hexA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

func TestParsePodDir(t *testing.T) {
	lp, err := ParsePodDir("kube-system_coredns-5d78c9869d-abcde_0f3c2b9e-1111-4222-8333-944445555666")
	require.NoError(t, err)
	assert.Equal(t, Pod{Namespace: "kube-system", Name: "coredns-5d78c9869d-abcde", UID: "0f3c2b9e-1111-4222-8333-944445555666"}, lp)
	for _, bad := range []string{"", "a_b", "a_b_c_d", "_b_c", "a__c", "a_b_"} {
		_, err := ParsePodDir(bad)
		assert.ErrorIs(t, err, ErrName, bad)
	}
}

func TestParseLink(t *testing.T) {
	l, err := ParseLink("web-0_shop_nginx-sidecar-" + hexA + ".log")
	require.NoError(t, err)
	assert.Equal(t, Link{Pod: "web-0", Namespace: "shop", Container: "nginx-sidecar", ID: hexA}, l)
	for _, bad := range []string{"", "web-0_shop_nginx-" + hexA, "web-0_shop_-" + hexA + ".log", "web-0_shop_nginx-" + strings.ToUpper(hexA) + ".log", "shop_nginx-" + hexA + ".log", "web-0_shop_nginx_" + hexA + ".log"} {
		_, err := ParseLink(bad)
		assert.ErrorIs(t, err, ErrName, bad)
	}
}

func TestParsePath(t *testing.T) {
	for _, p := range []string{
		"/var/log/pods/shop_web-0_0f3c2b9e-1111-4222-8333-944445555666/nginx/7.log",
		"/hostfs/var/log/pods/shop_web-0_0f3c2b9e-1111-4222-8333-944445555666/nginx/7.log",
		"/var/log/pods/shop_web-0_0f3c2b9e-1111-4222-8333-944445555666/nginx/7.log.20261122-060504",
	} {
		lp, k, err := ParsePath(p)
		require.NoError(t, err, p)
		assert.Equal(t, Pod{Namespace: "shop", Name: "web-0", UID: "0f3c2b9e-1111-4222-8333-944445555666", Containers: []string{"nginx"}}, lp)
		assert.Equal(t, Key{PodUID: "0f3c2b9e-1111-4222-8333-944445555666", Container: "nginx", Restart: 7}, k)
	}
	for _, bad := range []string{"", "/", "7.log", "/var/log/pods/a_b/c/0.log", "/var/log/pods/a_b_c/d/x.log", "/var/log/pods/a_b_c/d/-1.log", "/var/log/pods/a_b_c/d/0.txt", "a_b_c/0.log"} {
		_, _, err := ParsePath(bad)
		assert.ErrorIs(t, err, ErrName, bad)
	}
}

// Property: whatever parses formats back to the same name.
func FuzzParsePodDir(f *testing.F) {
	f.Add("ns_pod_uid")
	f.Add("a__b")
	f.Fuzz(func(t *testing.T, s string) {
		lp, err := ParsePodDir(s)
		if err != nil {
			return
		}
		if got := lp.Namespace + "_" + lp.Name + "_" + lp.UID; got != s {
			t.Fatalf("round trip %q -> %q", s, got)
		}
	})
}

// Property: whatever parses formats back to the same name.
func FuzzParseLink(f *testing.F) {
	f.Add("p_n_c-" + hexA + ".log")
	f.Add("p_n_-" + hexA + ".log")
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLink(s)
		if err != nil {
			return
		}
		if got := l.Pod + "_" + l.Namespace + "_" + l.Container + "-" + l.ID + ".log"; got != s {
			t.Fatalf("round trip %q -> %q", s, got)
		}
	})
}

// Property: whatever parses formats back (under any prefix) to the same
// key, and never panics.
func FuzzParsePath(f *testing.F) {
	f.Add("/var/log/pods/ns_pod_uid/ctr/0.log")
	f.Add("/hostfs/var/log/pods/ns_pod_uid/ctr/12.log.20261122-060504")
	f.Add("ns_pod_uid/ctr/1.log")
	f.Add("/a_b_c/d/99999999999999999999.log")
	f.Fuzz(func(t *testing.T, p string) {
		lp, k, err := ParsePath(p)
		if err != nil {
			return
		}
		again := fmt.Sprintf("/x/%s_%s_%s/%s/%d.log", lp.Namespace, lp.Name, lp.UID, k.Container, k.Restart)
		lp2, k2, err := ParsePath(again)
		require.NoError(t, err, again)
		require.Equal(t, k, k2)
		require.Equal(t, lp, lp2)
		require.GreaterOrEqual(t, k.Restart, int64(0))
	})
}

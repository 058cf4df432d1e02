// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package identity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/podlogs"
)

const hexA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

func TestPodLogsScan(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) { require.NoError(t, os.MkdirAll(filepath.Join(root, p), 0o755)) }
	mk("var/log/pods/shop_web-0_uid-1/nginx")
	mk("var/log/pods/shop_web-0_uid-1/sidecar")
	mk("var/log/pods/ops_agent-x_uid-2/agent")
	mk("var/log/pods/not-a-pod")
	mk("var/log/containers")
	require.NoError(t, os.WriteFile(filepath.Join(root, "var/log/containers/web-0_shop_sidecar-"+hexA+".log"), nil, 0o600))
	pods, names, _ := NewPodLogs(root).Scan()
	assert.Equal(t, map[string]podlogs.Pod{
		"uid-1": {Namespace: "shop", Name: "web-0", UID: "uid-1", Containers: []string{"nginx", "sidecar"}},
		"uid-2": {Namespace: "ops", Name: "agent-x", UID: "uid-2", Containers: []string{"agent"}},
	}, pods)
	assert.Equal(t, map[string]string{hexA: "sidecar"}, names)

	// Absent directories: nothing, no error.
	pods, names, _ = NewPodLogs(t.TempDir()).Scan()
	assert.Empty(t, pods)
	assert.Empty(t, names)
}

func TestSplitImage(t *testing.T) {
	for ref, want := range map[string][2]string{
		"docker.io/library/busybox:1.36": {"docker.io/library/busybox", "1.36"},
		"registry:5000/team/app":         {"registry:5000/team/app", ""},
		"registry:5000/team/app:v2":      {"registry:5000/team/app", "v2"},
		"quay.io/x/y:v1@sha256:" + hexA:  {"quay.io/x/y", "v1"},
		"quay.io/x/y@sha256:" + hexA:     {"quay.io/x/y", ""},
		"sha256:" + hexA:                 {"", ""},
		hexA:                             {"", ""},
		"busybox":                        {"busybox", ""},
		"@sha256:" + hexA:                {"", ""},
		"":                               {"", ""},
	} {
		n, tag := SplitImage(ref)
		assert.Equal(t, want, [2]string{n, tag}, ref)
	}
}

// Property: name and tag are pieces of the reference: name is its prefix,
// and the tag (when any) follows name+":" with no "/" in it.
func FuzzSplitImage(f *testing.F) {
	f.Add("docker.io/library/busybox:1.36")
	f.Add("reg:5000/a/b@sha256:" + hexA)
	f.Add("sha256:" + hexA)
	f.Fuzz(func(t *testing.T, ref string) {
		name, tag := SplitImage(ref)
		trimmed := strings.TrimSpace(ref)
		if name == "" {
			if tag != "" {
				t.Fatalf("tag %q without name for %q", tag, ref)
			}
			return
		}
		if !strings.HasPrefix(trimmed, name) {
			t.Fatalf("name %q is not a prefix of %q", name, ref)
		}
		if tag != "" && (!strings.HasPrefix(trimmed, name+":"+tag) || strings.Contains(tag, "/")) {
			t.Fatalf("tag %q of %q", tag, ref)
		}
	})
}

// A pod's labels are the runtime's less those that carry identity or the
// runtime's own bookkeeping; a container's are the allowed keys it has
// (none: nil).
func TestLabels(t *testing.T) {
	l := map[string]string{
		LabelPodName: "web-0", LabelPodNamespace: "shop", LabelPodUID: "uid-1", LabelContainerName: "nginx",
		"io.cri-containerd.kind": "sandbox", LabelDockerType: "podsandbox",
		"app": "web", "tier": "front",
	}
	assert.Equal(t, map[string]string{"app": "web", "tier": "front"}, PodLabels(l))
	assert.Equal(t, map[string]string{"app": "web", LabelPodUID: "uid-1"}, AllowedLabels(l, []string{"app", LabelPodUID, "absent"}))
	assert.Nil(t, AllowedLabels(l, []string{"absent"}))
	assert.Nil(t, AllowedLabels(l, nil))
}

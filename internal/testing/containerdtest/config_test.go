// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package containerdtest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// `containerd --version` of both runtimes: Debian's package and a build
// of make containerd-bins.
func TestParseVersion(t *testing.T) {
	for out, want := range map[string]struct {
		v     string
		major int
	}{
		"containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+b1\n": {"1.6.20~ds1", 1},
		"containerd github.com/containerd/containerd/v2 v2.4.2 \n":                 {"v2.4.2", 2},
	} {
		v, major, err := parseVersion(out)
		require.NoError(t, err, out)
		assert.Equal(t, want.v, v)
		assert.Equal(t, want.major, major)
	}
	for _, bad := range []string{"", "runc version 1.5.3", "containerd x vX.Y"} {
		_, _, err := parseVersion(bad)
		assert.Error(t, err, bad)
	}
}

// Config writes the format of the containerd it is for: version 2 with
// the CRI plugin in one section for 1.6, version 3 with its runtime and
// images sections for 2.x; the runc of BinDir, when set, in both.
func TestConfigFormat(t *testing.T) {
	o := ConfigOptions{Base: "/tmp/ctrd-x", Socket: "/tmp/ctrd-x/c.sock", CNIBin: "/usr/lib/cni"}
	o.Major = 1
	v2 := Config(o)
	assert.True(t, strings.HasPrefix(v2, "version = 2\n"))
	assert.Contains(t, v2, `[plugins."io.containerd.grpc.v1.cri"]`)
	assert.Contains(t, v2, `sandbox_image = "`+Image+`"`)
	assert.NotContains(t, v2, "io.containerd.cri.v1")
	assert.NotContains(t, v2, "BinaryName")

	o.Major, o.BinDir = 2, "/opt/stack"
	v3 := Config(o)
	assert.True(t, strings.HasPrefix(v3, "version = 3\n"))
	for _, s := range []string{
		`[plugins."io.containerd.cri.v1.images"]`, `[plugins."io.containerd.cri.v1.runtime"]`,
		`sandbox = "` + Image + `"`, `bin_dirs = ["/usr/lib/cni"]`, `BinaryName = "/opt/stack/runc"`,
		`[plugins."io.containerd.nri.v1.nri"]`,
	} {
		assert.Contains(t, v3, s)
	}
	assert.NotContains(t, v3, "io.containerd.grpc.v1.cri")
	assert.NotContains(t, v3, "sandbox_image")
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/ociarchive"
)

// TestImageArchive checks `make image`'s archive: the name the DaemonSet
// runs, the exact binary, every library ldd lists for it, the default
// config; then unpacks it and runs the collector chrooted into that root
// filesystem alone, which proves the image needs nothing from a base.
func TestImageArchive(t *testing.T) {
	archive := imageArchive(t)
	bin := collectorBin(t)
	img, err := ociarchive.Read(archive)
	require.NoError(t, err)

	// The DaemonSet's image, normalized the way containerd does.
	ds, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "daemonset.yaml"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s+image:\s*(\S+)\s*$`).FindSubmatch(ds)
	require.NotNil(t, m, "no image: in deploy/daemonset.yaml")
	assert.Equal(t, "docker.io/library/"+string(m[1]), img.Name)
	if want := os.Getenv("IMAGE_NAME"); want != "" {
		assert.Equal(t, want, img.Name)
	}

	assert.Equal(t, []string{"/otelcol-containerstats"}, img.Entrypoint)
	assert.Equal(t, []string{"--config", "/etc/otelcol/config.yaml"}, img.Cmd)
	want, err := os.ReadFile(bin)
	require.NoError(t, err)
	got := img.Files["otelcol-containerstats"]
	assert.True(t, bytes.Equal(want, got.Data), "the image's binary differs from %s", bin)
	assert.Equal(t, int64(0o755), got.Mode)
	cfg, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "config.yaml"))
	require.NoError(t, err)
	assert.Equal(t, string(cfg), string(img.Files["etc/otelcol/config.yaml"].Data))

	out, err := exec.Command("ldd", bin).Output()
	require.NoError(t, err)
	libs := regexp.MustCompile(`(?m)(?:=> |^\s+)(/\S+) \(`).FindAllSubmatch(out, -1)
	require.NotEmpty(t, libs, "ldd %s: %s", bin, out)
	for _, l := range libs {
		assert.Contains(t, img.Files, strings.TrimPrefix(string(l[1]), "/"), "library %s (ldd) not in the image", l[1])
	}
	t.Logf("%s: %s, %d files, entrypoint %v %v", archive, img.Name, len(img.Files), img.Entrypoint, img.Cmd)

	// Unpack and run the collector from the image's root filesystem only.
	need(t, lookPaths("chroot"))
	root := t.TempDir()
	for d := range img.Dirs {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	for name, f := range img.Files {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name), f.Data, os.FileMode(f.Mode)))
	}
	run := func(args ...string) string {
		cmd := exec.Command("chroot", append([]string{root}, args...)...)
		cmd.Env = []string{"K8S_NODE_NAME=n", "OTLP_ENDPOINT=gateway:4317"}
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "chroot %v: %s", args, b)
		return string(b)
	}
	assert.Contains(t, run("/otelcol-containerstats", "--version"), "otelcol-containerstats version")
	run(append(img.Entrypoint[:1:1], "validate", img.Cmd[0], img.Cmd[1])...)
}

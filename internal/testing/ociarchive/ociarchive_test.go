// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package ociarchive

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// build runs deploy/image/build-oci.sh on a small rootfs.
func build(t *testing.T, out string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "rootfs")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "etc", "app"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "app"), []byte("#!binary 1"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "etc", "app", "config.yaml"), []byte("key: 2\n"), 0o644))
	cmd := exec.Command(filepath.Join("..", "..", "..", "deploy", "image", "build-oci.sh"), root,
		"docker.io/library/test-app:1.2.3", out, "/app", "--flag", "--", "--config", "/etc/app/config.yaml")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
}

func TestBuildAndRead(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")
	build(t, a)
	img, err := Read(a)
	require.NoError(t, err)
	assert.Equal(t, "docker.io/library/test-app:1.2.3", img.Name)
	assert.Equal(t, []string{"/app", "--flag"}, img.Entrypoint)
	assert.Equal(t, []string{"--config", "/etc/app/config.yaml"}, img.Cmd)
	assert.Equal(t, File{Mode: 0o755, Data: []byte("#!binary 1")}, img.Files["app"])
	assert.Equal(t, File{Mode: 0o644, Data: []byte("key: 2\n")}, img.Files["etc/app/config.yaml"])
	assert.True(t, img.Dirs["etc/app"])
	assert.Len(t, img.Files, 2)

	// Reproducible: a second build of the same rootfs content is the same
	// archive, byte for byte.
	build(t, b)
	ab, err := os.ReadFile(a)
	require.NoError(t, err)
	bb, err := os.ReadFile(b)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(ab, bb), "two builds differ")
}

func TestBuildRejectsShortName(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.tar")
	b, err := exec.Command(filepath.Join("..", "..", "..", "deploy", "image", "build-oci.sh"), t.TempDir(), "app:1", out).CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(b), "full reference")
	assert.NoFileExists(t, out)
}

func TestReadDetectsCorruption(t *testing.T) {
	a := filepath.Join(t.TempDir(), "a.tar")
	build(t, a)
	raw, err := os.ReadFile(a)
	require.NoError(t, err)
	// Flip one byte inside the layer's file content: the layer's digest
	// no longer matches.
	i := bytes.Index(raw, []byte("#!binary 1"))
	require.Positive(t, i)
	raw[i+2] ^= 0xff
	_, err = parse(bytes.NewReader(raw))
	require.ErrorContains(t, err, "content hashes to")
	_, err = Read(filepath.Join(t.TempDir(), "missing.tar"))
	require.Error(t, err)
	_, err = parse(bytes.NewReader([]byte("not a tar")))
	require.Error(t, err)
}

// FuzzParse: arbitrary bytes give an image or an error, never a panic.
func FuzzParse(f *testing.F) {
	a := filepath.Join(f.TempDir(), "a.tar")
	root := filepath.Join(f.TempDir(), "rootfs")
	require.NoError(f, os.MkdirAll(root, 0o755))
	require.NoError(f, os.WriteFile(filepath.Join(root, "x"), []byte("x"), 0o644))
	out, err := exec.Command(filepath.Join("..", "..", "..", "deploy", "image", "build-oci.sh"), root, "docker.io/library/f:1", a, "/x").CombinedOutput()
	require.NoError(f, err, "%s", out)
	seed, err := os.ReadFile(a)
	require.NoError(f, err)
	f.Add(seed)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		img, err := parse(bytes.NewReader(b))
		if err == nil && img.Files == nil {
			t.Fatal("image without a file map")
		}
	})
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package ociarchive

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

var (
	toolOnce sync.Once
	toolPath string
	toolErr  error
)

// tool builds tools/ociimage (its own module) once per test process.
func tool(tb testing.TB) string {
	tb.Helper()
	toolOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ociimage-test-")
		if err != nil {
			toolErr = err
			return
		}
		toolPath = filepath.Join(dir, "ociimage")
		out, err := exec.Command("go", "build", "-C", filepath.Join("..", "..", "..", "tools", "ociimage"), "-o", toolPath, ".").CombinedOutput() //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
		if err != nil {
			toolErr = err
			toolPath = string(out)
		}
	})
	require.NoError(tb, toolErr, "go build tools/ociimage: %s", toolPath)
	return toolPath
}

// arm64Binary compiles a small C program for linux/arm64 (Debian's cross
// compiler: a dynamic executable linking glibc, as the collector is).
func arm64Binary(tb testing.TB) string {
	tb.Helper()
	cc := "aarch64-linux-gnu-gcc"
	if _, err := exec.LookPath(cc); err != nil {
		machine.Need(tb, cc+" missing (gcc-aarch64-linux-gnu): "+err.Error())
	}
	dir := tb.TempDir()
	src := filepath.Join(dir, "m.c")
	require.NoError(tb, os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o600))
	out, err := exec.Command(cc, "-o", filepath.Join(dir, "m"), src).CombinedOutput() //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
	require.NoError(tb, err, "%s", out)
	return filepath.Join(dir, "m")
}

type inputs struct {
	amd64, arm64, config, ca, license string
}

func newInputs(tb testing.TB) inputs {
	tb.Helper()
	dir := tb.TempDir()
	in := inputs{
		amd64: "/bin/true", arm64: arm64Binary(tb),
		config: filepath.Join(dir, "config.yaml"), ca: filepath.Join(dir, "ca.crt"), license: filepath.Join(dir, "LICENSE"),
	}
	require.NoError(tb, os.WriteFile(in.config, []byte("key: 2\n"), 0o600))
	require.NoError(tb, os.WriteFile(in.ca, []byte("-----BEGIN CERTIFICATE-----\n"), 0o600))
	require.NoError(tb, os.WriteFile(in.license, []byte("Apache License\n"), 0o600))
	return in
}

// build runs tools/ociimage on in's files, both platforms.
func build(tb testing.TB, in inputs, out string, name string) ([]byte, error) {
	tb.Helper()
	return exec.Command(tool(tb), "-o", out, "-name", name, "-version", "1.2.3", //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
		"-source", "https://example.com/src", "-revision", "abc123", "-created", "1700000000",
		"-config", in.config, "-ca", in.ca, "-license", in.license, "-user", "0:0",
		"-platform", "linux/amd64="+in.amd64, "-platform", "linux/arm64="+in.arm64,
		"--", "/app", "--flag", "--", "--config", "/etc/otelcol/config.yaml").CombinedOutput()
}

func TestBuildAndRead(t *testing.T) {
	in := newInputs(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")
	out, err := build(t, in, a, "docker.io/library/test-app:1.2.3")
	require.NoError(t, err, "%s", out)
	arc, err := Read(a)
	require.NoError(t, err)
	assert.Equal(t, "docker.io/library/test-app:1.2.3", arc.Name)
	anns := map[string]string{
		"org.opencontainers.image.title": "otelcol-containerstats", "org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.version": "1.2.3", "org.opencontainers.image.source": "https://example.com/src",
		"org.opencontainers.image.revision": "abc123",
	}
	assert.Equal(t, anns, arc.Annotations)
	require.Len(t, arc.Images, 2)
	libs := map[string][]string{
		"linux/amd64": {"lib64/ld-linux-x86-64.so.2", "lib/x86_64-linux-gnu/libc.so.6"},
		"linux/arm64": {"lib/ld-linux-aarch64.so.1", "lib/aarch64-linux-gnu/libc.so.6"},
	}
	for plat, bin := range map[string]string{"linux/amd64": in.amd64, "linux/arm64": in.arm64} {
		img := arc.Images[plat]
		require.NotNil(t, img, plat)
		assert.Equal(t, anns, img.Annotations, plat)
		assert.Equal(t, anns, img.Labels, plat)
		assert.Equal(t, []string{"/app", "--flag"}, img.Entrypoint)
		assert.Equal(t, []string{"--config", "/etc/otelcol/config.yaml"}, img.Cmd)
		assert.Equal(t, "0:0", img.User)
		want, readFileErr := os.ReadFile(bin)
		require.NoError(t, readFileErr)
		assert.Equal(t, File{Mode: 0o755, Data: want}, img.Files["app"], plat)
		assert.Equal(t, File{Mode: 0o644, Data: []byte("key: 2\n")}, img.Files["etc/otelcol/config.yaml"])
		assert.Equal(t, File{Mode: 0o644, Data: []byte("-----BEGIN CERTIFICATE-----\n")}, img.Files["etc/ssl/certs/ca-certificates.crt"])
		assert.Equal(t, File{Mode: 0o644, Data: []byte("Apache License\n")}, img.Files["usr/share/doc/otelcol-containerstats/LICENSE"])
		assert.Equal(t, int64(0o1777), img.Dirs["tmp"])
		for _, l := range libs[plat] {
			assert.NotEmpty(t, img.Files[l].Data, "%s: %s", plat, l)
		}
		assert.Len(t, img.Files, 4+len(libs[plat]), "%s: files %v", plat, keys(img.Files))
	}

	// Reproducible: a second build of the same inputs is the same
	// archive, byte for byte.
	out, err = build(t, in, b, "docker.io/library/test-app:1.2.3")
	require.NoError(t, err, "%s", out)
	ab, err := os.ReadFile(a)
	require.NoError(t, err)
	bb, err := os.ReadFile(b)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(ab, bb), "two builds differ")
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestBuildRejectsShortName(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.tar")
	b, err := build(t, newInputs(t), out, "app:1")
	require.Error(t, err)
	assert.Contains(t, string(b), "full reference")
	assert.NoFileExists(t, out)
}

func TestReadDetectsCorruption(t *testing.T) {
	a := filepath.Join(t.TempDir(), "a.tar")
	out, err := build(t, newInputs(t), a, "docker.io/library/test-app:1")
	require.NoError(t, err, "%s", out)
	raw, err := os.ReadFile(a)
	require.NoError(t, err)
	// Flip one byte inside a layer's file content: the layer's digest
	// no longer matches.
	i := bytes.Index(raw, []byte("key: 2"))
	require.Positive(t, i)
	raw[i] ^= 0xff
	_, err = parse(bytes.NewReader(raw))
	require.ErrorContains(t, err, "content hashes to")
	_, err = Read(filepath.Join(t.TempDir(), "missing.tar"))
	require.Error(t, err)
	_, err = parse(bytes.NewReader([]byte("not a tar")))
	require.Error(t, err)
}

// FuzzParse: arbitrary bytes give an archive or an error, never a panic.
func FuzzParse(f *testing.F) {
	a := filepath.Join(f.TempDir(), "a.tar")
	out, err := build(f, newInputs(f), a, "docker.io/library/f:1")
	require.NoError(f, err, "%s", out)
	seed, err := os.ReadFile(a)
	require.NoError(f, err)
	f.Add(seed)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		arc, err := parse(bytes.NewReader(b))
		if err == nil && len(arc.Images) == 0 {
			t.Fatal("an archive without an image")
		}
	})
}

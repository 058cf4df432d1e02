// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerdtest

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The archive is a valid OCI layout: every blob is named by its digest, and
// the index names the manifest, which names the config and the layer.
func TestBuildImage(t *testing.T) {
	dir := t.TempDir()
	fakeBusybox := filepath.Join(dir, "busybox")
	require.NoError(t, os.WriteFile(fakeBusybox, []byte("#!fake busybox"), 0o755)) //nolint:gosec // G306: an executable
	fakeWorkload := filepath.Join(dir, "workload")
	require.NoError(t, os.WriteFile(fakeWorkload, []byte("#!fake workload"), 0o750)) //nolint:gosec // G306: an executable
	out := filepath.Join(dir, "image.tar")
	require.NoError(t, buildImage(out, fakeBusybox, Image, map[string]string{"bin/workload": fakeWorkload}))

	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		files[h.Name] = b
	}
	for name, b := range files {
		if d, ok := strings.CutPrefix(name, "blobs/sha256/"); ok && d != "" {
			sum := sha256.Sum256(b)
			assert.Equal(t, d, hex.EncodeToString(sum[:]), name)
		}
	}
	var index struct {
		Manifests []struct {
			Digest      string
			Annotations map[string]string
		}
	}
	require.NoError(t, json.Unmarshal(files["index.json"], &index))
	require.Len(t, index.Manifests, 1)
	assert.Equal(t, Image, index.Manifests[0].Annotations["io.containerd.image.name"])
	var manifest struct {
		Config struct{ Digest string }
		Layers []struct{ Digest string }
	}
	require.NoError(t, json.Unmarshal(files["blobs/sha256/"+strings.TrimPrefix(index.Manifests[0].Digest, "sha256:")], &manifest))
	require.Contains(t, files, "blobs/sha256/"+strings.TrimPrefix(manifest.Config.Digest, "sha256:"))
	require.Len(t, manifest.Layers, 1)
	layer := files["blobs/sha256/"+strings.TrimPrefix(manifest.Layers[0].Digest, "sha256:")]
	require.NotEmpty(t, layer)
	lr := tar.NewReader(strings.NewReader(string(layer)))
	names := map[string]string{}
	for {
		h, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		names[h.Name] = h.Linkname
		if h.Name == "bin/workload" {
			b, err := io.ReadAll(lr)
			require.NoError(t, err)
			assert.Equal(t, "#!fake workload", string(b), "an extra file keeps its contents")
			assert.Equal(t, int64(0o750), h.Mode, "and its mode")
		}
	}
	assert.Contains(t, names, "bin/workload")
	assert.Contains(t, names, "bin/busybox")
	assert.Equal(t, "busybox", names["bin/sh"])
	assert.Equal(t, "busybox", names["bin/sleep"])
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package containerdtest

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"
)

// WriteImage writes the archive of Image (see buildImage) to path, from
// the machine's static busybox.
func WriteImage(path string) error {
	return WriteImageWith(path, nil)
}

// WriteImageWith is WriteImage with more files in the image: extra maps a
// path in the image (e.g. "bin/workload") to a file of this machine whose
// contents and mode it gets.
func WriteImageWith(path string, extra map[string]string) error {
	bb := busybox()
	if bb == "" {
		return fmt.Errorf("no static busybox (Debian: apt-get install busybox-static)")
	}
	return buildImage(path, bb, Image, extra)
}

// buildImage writes an OCI image archive; its default command waits until
// SIGTERM, so it serves as the sandbox (pause) image too.
//
// buildImage writes an OCI image archive holding a static busybox, named
// ref, for `ctr images import`. No registry is involved.
func buildImage(path, busybox, ref string, extra map[string]string) error {
	bb, err := os.ReadFile(busybox)
	if err != nil {
		return fmt.Errorf("read %s: %w", busybox, err)
	}
	var layer bytes.Buffer
	lw := tar.NewWriter(&layer)
	for _, d := range []string{"bin/", "tmp/", "proc/", "sys/", "dev/", "etc/"} {
		if err := lw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
			return err
		}
	}
	if err := lw.WriteHeader(&tar.Header{Name: "bin/busybox", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(bb))}); err != nil {
		return err
	}
	if _, err := lw.Write(bb); err != nil {
		return err
	}
	names := make([]string, 0, len(extra))
	for name := range extra {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		b, err := os.ReadFile(extra[name])
		if err != nil {
			return fmt.Errorf("image file %s: %w", name, err)
		}
		fi, err := os.Stat(extra[name])
		if err != nil {
			return err
		}
		if err := lw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: int64(fi.Mode().Perm()), Size: int64(len(b))}); err != nil {
			return err
		}
		if _, err := lw.Write(b); err != nil {
			return err
		}
	}
	for _, a := range []string{"sh", "sleep", "cat", "true"} { // links to busybox
		if err := lw.WriteHeader(&tar.Header{Name: "bin/" + a, Typeflag: tar.TypeSymlink, Linkname: "busybox", Mode: 0o777}); err != nil {
			return err
		}
	}
	if err := lw.Close(); err != nil {
		return err
	}
	layerDigest := digest(layer.Bytes())
	config, _ := json.Marshal(map[string]any{
		"architecture": "amd64", "os": "linux",
		"config": map[string]any{"Cmd": []string{"/bin/sh", "-c", "trap 'exit 0' TERM INT; while :; do sleep 1; done"}, "Env": []string{"PATH=/bin"}},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{layerDigest}},
	})
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": digest(config), "size": len(config)},
		"layers": []any{map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layerDigest, "size": layer.Len()}},
	})
	index, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
		"manifests": []any{map[string]any{
			"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": digest(manifest), "size": len(manifest),
			"annotations": map[string]string{"io.containerd.image.name": ref, "org.opencontainers.image.ref.name": ref},
			"platform":    map[string]string{"architecture": "amd64", "os": "linux"},
		}},
	})
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	files := []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", index},
		{blob(layer.Bytes()), layer.Bytes()},
		{blob(config), config},
		{blob(manifest), manifest},
	}
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(f.data))}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, out.Bytes(), 0o600)
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func blob(b []byte) string {
	s := sha256.Sum256(b)
	return "blobs/sha256/" + hex.EncodeToString(s[:])
}

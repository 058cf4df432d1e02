// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package ociarchive reads and verifies the single-image OCI archives that
// deploy/image/build-oci.sh writes (`make image`): an OCI image layout in a
// tar, one manifest, uncompressed layers. Tests use it to check an archive
// before containerd imports it.
package ociarchive // import "github.com/containerstats/containerstatsreceiver/internal/testing/ociarchive"

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// Image is what an archive holds, every blob's digest and size verified.
type Image struct {
	Name           string // the io.containerd.image.name annotation
	ManifestDigest string
	Entrypoint     []string
	Cmd            []string
	Env            []string
	// Files maps each regular file of the layers (path without "./") to its
	// mode and content.
	Files map[string]File
	// Dirs lists the directories of the layers.
	Dirs map[string]bool
}

// File is a regular file of a layer.
type File struct {
	Mode int64
	Data []byte
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations"`
}

// Read opens the archive at path and verifies it.
func Read(p string) (*Image, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, err := parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return img, nil
}

// parse reads an archive: every member into memory (images here are tens of
// MiB), then the index, manifest, config and layers, each checked against
// its descriptor's digest and size.
func parse(r io.Reader) (*Image, error) {
	members := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("archive: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("archive member %s: %w", h.Name, err)
		}
		members[path.Clean(h.Name)] = b
	}
	if string(members["oci-layout"]) == "" || !strings.Contains(string(members["oci-layout"]), `"imageLayoutVersion"`) {
		return nil, errors.New("oci-layout: missing or without imageLayoutVersion")
	}
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(members["index.json"], &index); err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	if len(index.Manifests) != 1 {
		return nil, fmt.Errorf("index.json: %d manifests, want 1", len(index.Manifests))
	}
	md := index.Manifests[0]
	blob := func(d descriptor) ([]byte, error) {
		hexd, ok := strings.CutPrefix(d.Digest, "sha256:")
		if !ok {
			return nil, fmt.Errorf("digest %q: not sha256", d.Digest)
		}
		b, ok := members["blobs/sha256/"+hexd]
		if !ok {
			return nil, fmt.Errorf("blob %s: missing", d.Digest)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != hexd {
			return nil, fmt.Errorf("blob %s: content hashes to sha256:%x", d.Digest, sum)
		}
		if int64(len(b)) != d.Size {
			return nil, fmt.Errorf("blob %s: %d bytes, descriptor says %d", d.Digest, len(b), d.Size)
		}
		return b, nil
	}
	mb, err := blob(md)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(mb, &manifest); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	cb, err := blob(manifest.Config)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	var config struct {
		Architecture string `json:"architecture"`
		OS           string `json:"os"`
		Config       struct {
			Entrypoint []string `json:"Entrypoint"`
			Cmd        []string `json:"Cmd"`
			Env        []string `json:"Env"`
		} `json:"config"`
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal(cb, &config); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if config.OS != "linux" || config.Architecture == "" {
		return nil, fmt.Errorf("config: os %q architecture %q", config.OS, config.Architecture)
	}
	if len(config.RootFS.DiffIDs) != len(manifest.Layers) {
		return nil, fmt.Errorf("config: %d diff_ids for %d layers", len(config.RootFS.DiffIDs), len(manifest.Layers))
	}
	img := &Image{
		Name:           md.Annotations["io.containerd.image.name"],
		ManifestDigest: md.Digest,
		Entrypoint:     config.Config.Entrypoint,
		Cmd:            config.Config.Cmd,
		Env:            config.Config.Env,
		Files:          map[string]File{},
		Dirs:           map[string]bool{},
	}
	for i, l := range manifest.Layers {
		if l.MediaType != "application/vnd.oci.image.layer.v1.tar" {
			return nil, fmt.Errorf("layer %d: media type %q, want an uncompressed tar", i, l.MediaType)
		}
		// Uncompressed: the diff ID is the layer's own digest.
		if config.RootFS.DiffIDs[i] != l.Digest {
			return nil, fmt.Errorf("layer %d: diff_id %s differs from digest %s", i, config.RootFS.DiffIDs[i], l.Digest)
		}
		lb, err := blob(l)
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		if err := readLayer(lb, img); err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
	}
	return img, nil
}

func readLayer(b []byte, img *Image) error {
	tr := tar.NewReader(strings.NewReader(string(b)))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		switch h.Typeflag {
		case tar.TypeReg:
			data, err := io.ReadAll(tr)
			if err != nil {
				return fmt.Errorf("%s: %w", h.Name, err)
			}
			img.Files[name] = File{Mode: h.Mode, Data: data}
		case tar.TypeDir:
			img.Dirs[name] = true
		}
	}
}

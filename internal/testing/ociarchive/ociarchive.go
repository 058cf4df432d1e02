// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package ociarchive reads and verifies the OCI image archives that
// tools/ociimage writes (`make image`): an OCI image layout in a tar whose
// index.json names one image index, one image per platform in it,
// uncompressed layers. Tests use it to check an archive before containerd
// imports it.
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

// Archive is what an archive holds, every blob's digest and size verified.
type Archive struct {
	Name        string            // the io.containerd.image.name annotation
	IndexDigest string            // the image index's digest
	Annotations map[string]string // the image index's annotations
	// Images maps each platform ("linux/amd64") of the index to its image.
	Images map[string]*Image
}

// Image is one platform's image of the index.
type Image struct {
	ManifestDigest string
	Annotations    map[string]string // the manifest's
	Entrypoint     []string
	Cmd            []string
	Env            []string
	User           string
	Labels         map[string]string
	// Files maps each regular file of the layers (path without "./") to its
	// mode and content.
	Files map[string]File
	// Dirs maps each directory of the layers to its mode.
	Dirs map[string]int64
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
	Platform    *struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
	} `json:"platform"`
}

// Read opens the archive at path and verifies it.
func Read(p string) (*Archive, error) {
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
// MiB), then the layout's index, the image index, and each platform's
// manifest, config and layers, each checked against its descriptor's
// digest and size.
func parse(r io.Reader) (*Archive, error) {
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
	type index struct {
		MediaType   string            `json:"mediaType"`
		Manifests   []descriptor      `json:"manifests"`
		Annotations map[string]string `json:"annotations"`
	}
	var top index
	if err := json.Unmarshal(members["index.json"], &top); err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	if len(top.Manifests) != 1 || top.Manifests[0].MediaType != mediaIndex {
		return nil, fmt.Errorf("index.json: want one descriptor of an image index, got %+v", top.Manifests)
	}
	d := top.Manifests[0]
	ib, err := blob(d)
	if err != nil {
		return nil, fmt.Errorf("image index: %w", err)
	}
	var idx index
	if err := json.Unmarshal(ib, &idx); err != nil {
		return nil, fmt.Errorf("image index: %w", err)
	}
	if idx.MediaType != mediaIndex {
		return nil, fmt.Errorf("image index: media type %q", idx.MediaType)
	}
	a := &Archive{Name: d.Annotations["io.containerd.image.name"], IndexDigest: d.Digest, Annotations: idx.Annotations, Images: map[string]*Image{}}
	for _, md := range idx.Manifests {
		if md.Platform == nil {
			return nil, fmt.Errorf("image index: manifest %s without a platform", md.Digest)
		}
		plat := md.Platform.OS + "/" + md.Platform.Architecture
		if a.Images[plat] != nil {
			return nil, fmt.Errorf("image index: two manifests for %s", plat)
		}
		img, err := parseImage(md, blob)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", plat, err)
		}
		if img.platform != plat {
			return nil, fmt.Errorf("%s: the config says %s", plat, img.platform)
		}
		a.Images[plat] = &img.Image
	}
	if len(a.Images) == 0 {
		return nil, errors.New("image index: no manifest")
	}
	return a, nil
}

const mediaIndex = "application/vnd.oci.image.index.v1+json"

type parsedImage struct {
	Image
	platform string
}

func parseImage(md descriptor, blob func(descriptor) ([]byte, error)) (*parsedImage, error) {
	if md.MediaType != "application/vnd.oci.image.manifest.v1+json" {
		return nil, fmt.Errorf("manifest %s: media type %q", md.Digest, md.MediaType)
	}
	mb, err := blob(md)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	var manifest struct {
		Config      descriptor        `json:"config"`
		Layers      []descriptor      `json:"layers"`
		Annotations map[string]string `json:"annotations"`
	}
	if unmarshalErr := json.Unmarshal(mb, &manifest); unmarshalErr != nil {
		return nil, fmt.Errorf("manifest: %w", unmarshalErr)
	}
	cb, err := blob(manifest.Config)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	var config struct {
		Architecture string `json:"architecture"`
		OS           string `json:"os"`
		Config       struct {
			Entrypoint []string          `json:"Entrypoint"`
			Cmd        []string          `json:"Cmd"`
			Env        []string          `json:"Env"`
			User       string            `json:"User"`
			Labels     map[string]string `json:"Labels"`
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
	img := &parsedImage{platform: config.OS + "/" + config.Architecture, Image: Image{
		ManifestDigest: md.Digest,
		Annotations:    manifest.Annotations,
		Entrypoint:     config.Config.Entrypoint,
		Cmd:            config.Config.Cmd,
		Env:            config.Config.Env,
		User:           config.Config.User,
		Labels:         config.Config.Labels,
		Files:          map[string]File{},
		Dirs:           map[string]int64{},
	}}
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
		if err := readLayer(lb, &img.Image); err != nil {
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
			img.Dirs[name] = h.Mode
		}
	}
}

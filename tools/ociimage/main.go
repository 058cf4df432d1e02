// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Command ociimage writes the collector's multi-architecture image as an
// OCI image layout in a tar (`make image`), with go-containerregistry: an
// image index of one image per platform, each one uncompressed layer
// holding
//
//	/otelcol-containerstats                  the collector (entrypoint)
//	/etc/otelcol/config.yaml                 the default config (command: --config it)
//	/etc/ssl/certs/ca-certificates.crt       the CA bundle (Go's crypto/x509 reads it there)
//	/usr/share/doc/otelcol-containerstats/LICENSE
//	the dynamic loader and the libraries the binary needs (glibc), found
//	from its ELF headers in the platform's library directory
//	/tmp                                     empty, mode 1777
//
// and nothing else (no shell, no package manager), run as the given user,
// with the OCI annotations version, source, revision (on the index, each
// manifest and, as labels, each config). The archive is reproducible: the
// same inputs give the same bytes (creation time from -created, every file
// time 0, owner 0:0). Import: ctr -n k8s.io images import OUT, which takes
// the node's platform from the index.
//
//	ociimage -o OUT -name REF -version V -source URL -revision REV \
//	  -config FILE -ca FILE -license FILE -user UID[:GID] \
//	  -platform linux/amd64=BIN[,LIBDIR] -platform linux/arm64=BIN[,LIBDIR] \
//	  [-- ENTRYPOINT... -- CMD...]
package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// platformFlag is one -platform os/arch=binary[,libdir].
type platformFlag struct {
	platform v1.Platform
	binary   string
	libDir   string // where the binary's libraries are on this host
}

type platforms []platformFlag

func (p *platforms) String() string { return fmt.Sprint(*p) }

func (p *platforms) Set(v string) error {
	plat, rest, ok := strings.Cut(v, "=")
	osName, arch, ok2 := strings.Cut(plat, "/")
	if !ok || !ok2 || rest == "" {
		return fmt.Errorf("want os/arch=binary[,libdir], got %q", v)
	}
	bin, lib, _ := strings.Cut(rest, ",")
	if lib == "" {
		lib = defaultLibDir(arch)
	}
	*p = append(*p, platformFlag{platform: v1.Platform{OS: osName, Architecture: arch}, binary: bin, libDir: lib})
	return nil
}

// triplet is Debian's multiarch directory name of a Go architecture.
func triplet(arch string) (string, error) {
	switch arch {
	case "amd64":
		return "x86_64-linux-gnu", nil
	case "arm64":
		return "aarch64-linux-gnu", nil
	}
	return "", fmt.Errorf("architecture %q: no multiarch triplet known", arch)
}

// defaultLibDir is where Debian keeps an architecture's glibc: the host's
// own for the host's architecture, the cross packages' (libc6-<arch>-cross)
// otherwise.
func defaultLibDir(arch string) string {
	t, err := triplet(arch)
	if err != nil {
		return ""
	}
	if dir := "/lib/" + t; exists(dir + "/libc.so.6") {
		return dir
	}
	return "/usr/" + t + "/lib"
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func main() {
	var (
		plats    platforms
		out      = flag.String("o", "", "the archive to write")
		name     = flag.String("name", "", "the image reference, e.g. docker.io/library/otelcol-containerstats:0.1.0")
		version  = flag.String("version", "", "org.opencontainers.image.version")
		source   = flag.String("source", "", "org.opencontainers.image.source")
		revision = flag.String("revision", "", "org.opencontainers.image.revision")
		config   = flag.String("config", "", "the default config, /etc/otelcol/config.yaml")
		ca       = flag.String("ca", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle")
		license  = flag.String("license", "", "the license file")
		user     = flag.String("user", "", "the image's user (uid[:gid])")
		created  = flag.Int64("created", 0, "creation time, Unix seconds (reproducible builds: a commit's time)")
	)
	flag.Var(&plats, "platform", "os/arch=binary[,libdir], once per platform")
	flag.Parse()
	entry, cmd := splitArgs(flag.Args())
	if *out == "" || *name == "" || *version == "" || *config == "" || *license == "" || len(plats) == 0 || len(entry) == 0 {
		fmt.Fprintln(os.Stderr, "usage: ociimage -o OUT -name REF -version V [-source URL] [-revision REV] -config FILE -license FILE [-ca FILE] [-user U] -platform os/arch=BIN[,LIBDIR]... -- ENTRYPOINT... [-- CMD...]")
		os.Exit(2)
	}
	if !strings.Contains(*name, "/") || !strings.Contains(path.Base(*name), ":") {
		fatal(fmt.Errorf("-name must be a full reference like docker.io/library/x:tag, got %q", *name))
	}
	anns := map[string]string{
		"org.opencontainers.image.title":    "otelcol-containerstats",
		"org.opencontainers.image.version":  *version,
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	if *source != "" {
		anns["org.opencontainers.image.source"] = *source
	}
	if *revision != "" {
		anns["org.opencontainers.image.revision"] = *revision
	}
	common := map[string]file{}
	for dst, src := range map[string]string{
		"etc/otelcol/config.yaml":                      *config,
		"etc/ssl/certs/ca-certificates.crt":            *ca,
		"usr/share/doc/otelcol-containerstats/LICENSE": *license,
	} {
		b, err := os.ReadFile(src)
		if err != nil {
			fatal(err)
		}
		common[dst] = file{data: b, mode: 0o644}
	}
	when := time.Unix(*created, 0).UTC()

	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range plats {
		img, err := image(p, common, anns, entry, cmd, *user, when)
		if err != nil {
			fatal(fmt.Errorf("%s/%s: %w", p.platform.OS, p.platform.Architecture, err))
		}
		plat := p.platform
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &plat, Annotations: anns}})
	}
	idx = mutate.Annotations(idx, anns).(v1.ImageIndex)
	if err := write(*out, idx, *name); err != nil {
		fatal(err)
	}
	d, _ := idx.Digest()
	fmt.Printf("%s: %s, index %s, %d platforms\n", *out, *name, d, len(plats))
}

// splitArgs splits "ENTRYPOINT... -- CMD..." (a leading -- already taken
// by flag).
func splitArgs(args []string) (entry, cmd []string) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:]
		}
	}
	return args, nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "ociimage:", err)
	os.Exit(1)
}

type file struct {
	data []byte
	mode int64
}

// image is one platform's image: the layer of its root filesystem and its
// config.
func image(p platformFlag, common map[string]file, anns map[string]string, entry, cmd []string, user string, created time.Time) (v1.Image, error) {
	files := map[string]file{}
	for k, v := range common {
		files[k] = v
	}
	bin, err := os.ReadFile(p.binary)
	if err != nil {
		return nil, err
	}
	files[strings.TrimPrefix(entry[0], "/")] = file{data: bin, mode: 0o755}
	libs, err := libraries(p.binary, p.platform.Architecture, p.libDir)
	if err != nil {
		return nil, err
	}
	for dst, src := range libs {
		b, err := os.ReadFile(src) // through symlinks
		if err != nil {
			return nil, err
		}
		files[dst] = file{data: b, mode: 0o755}
	}
	layer, err := layerTar(files, map[string]int64{"tmp": 0o1777})
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, static.NewLayer(layer, types.OCIUncompressedLayer))
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = p.platform.OS, p.platform.Architecture
	cf.Created = v1.Time{Time: created}
	cf.Config = v1.Config{
		Entrypoint: entry,
		Cmd:        cmd,
		Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		User:       user,
		Labels:     anns,
	}
	cf.History = []v1.History{{Created: v1.Time{Time: created}, CreatedBy: "tools/ociimage"}}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, err
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	return mutate.Annotations(img, anns).(v1.Image), nil
}

// libraries maps the image paths of the binary's dynamic loader (its
// PT_INTERP path) and of every library it needs, transitively (DT_NEEDED,
// in /lib/<triplet>/ of the image, where glibc's loader looks without a
// cache), to their files in libDir on this host.
func libraries(bin, arch, libDir string) (map[string]string, error) {
	t, err := triplet(arch)
	if err != nil {
		return nil, err
	}
	f, err := elf.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
	if f.Machine != want {
		return nil, fmt.Errorf("%s is %s, not %s", bin, f.Machine, arch)
	}
	out := map[string]string{}
	var interp string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return nil, err
			}
			interp = strings.TrimRight(string(b), "\x00")
			src := filepath.Join(libDir, path.Base(interp))
			if !exists(src) {
				return nil, fmt.Errorf("the loader %s: no %s", interp, src)
			}
			out[strings.TrimPrefix(interp, "/")] = src
		}
	}
	if interp == "" {
		return out, nil // static
	}
	queue := []string{bin}
	seen := map[string]bool{path.Base(interp): true} // the loader satisfies its own soname
	for len(queue) > 0 {
		g, err := elf.Open(queue[0])
		if err != nil {
			return nil, err
		}
		needed, err := g.ImportedLibraries()
		g.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", queue[0], err)
		}
		queue = queue[1:]
		for _, n := range needed {
			if seen[n] {
				continue
			}
			seen[n] = true
			src := filepath.Join(libDir, n)
			if !exists(src) {
				return nil, fmt.Errorf("%s needs %s, not in %s", bin, n, libDir)
			}
			out["lib/"+t+"/"+n] = src
			queue = append(queue, src)
		}
	}
	return out, nil
}

// layerTar is the root filesystem as a tar: files and the directories
// above them (0755, or the mode dirs gives), sorted, owner 0:0, time 0.
func layerTar(files map[string]file, dirs map[string]int64) ([]byte, error) {
	all := map[string]int64{}
	for d, m := range dirs {
		all[d] = m
	}
	for name := range files {
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			if _, ok := all[d]; !ok {
				all[d] = 0o755
			}
		}
	}
	names := make([]string, 0, len(all)+len(files))
	for d := range all {
		names = append(names, d+"/")
	}
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		h := &tar.Header{Name: n, Uid: 0, Gid: 0, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if d, ok := strings.CutSuffix(n, "/"); ok {
			h.Typeflag, h.Mode = tar.TypeDir, all[d]
		} else {
			h.Typeflag, h.Mode, h.Size = tar.TypeReg, files[n].mode, int64(len(files[n].data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(files[n].data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// write puts idx in an OCI image layout under a temporary directory, named
// name (containerd's io.containerd.image.name and the tag as
// org.opencontainers.image.ref.name), and packs it into out.
func write(out string, idx v1.ImageIndex, name string) error {
	dir, err := os.MkdirTemp("", "ociimage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	tag := name[strings.LastIndex(name, ":")+1:]
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"io.containerd.image.name":          name,
		"org.opencontainers.image.ref.name": tag,
	})); err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	var names []string
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			names = append(names, p)
		}
		return err
	}); err != nil {
		return err
	}
	sort.Strings(names)
	for _, p := range names {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(b)), ModTime: time.Unix(0, 0), Format: tar.FormatPAX}); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(out+".tmp", buf.Bytes(), 0o644); err != nil {
		return errors.Join(err, os.Remove(out+".tmp"))
	}
	return os.Rename(out+".tmp", out)
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package release checks what `make release` writes (docs/release.md):
// the real-machine test (tag realmachine, `make release-test`) reads the
// release directory of `make release VERSION=0.1.0-test`; the unit tests
// show each check failing on a broken copy.
package release

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"

	"github.com/containerstats/containerstatsreceiver/internal/testing/ociarchive"
)

// receiverModule is our module, the one component of the SBOMs that is ours.
const receiverModule = "github.com/containerstats/containerstatsreceiver"

// releaseFiles are the names make release writes for version.
func releaseFiles(version string) []string {
	p := "otelcol-containerstats_" + version
	return []string{
		p + "_linux_amd64", p + "_linux_arm64",
		p + "_linux_amd64.cdx.json", p + "_linux_arm64.cdx.json",
		p + "_image.tar", "CHANGELOG-" + version + ".md", "SHA256SUMS",
	}
}

// checkFiles: the directory holds exactly the release's files.
func checkFiles(dir, version string) []string {
	var bad []string
	ents, err := os.ReadDir(dir)
	if err != nil {
		return []string{err.Error()}
	}
	want := releaseFiles(version)
	var have []string
	for _, e := range ents {
		have = append(have, e.Name())
		if !slices.Contains(want, e.Name()) {
			bad = append(bad, "unexpected file "+e.Name())
		}
	}
	for _, w := range want {
		if !slices.Contains(have, w) {
			bad = append(bad, "missing file "+w)
		}
	}
	return bad
}

// checkSums: every line of SHA256SUMS verifies (as `sha256sum -c` does) and
// every other file of the directory has exactly one line.
func checkSums(dir string) []string {
	b, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS")) //nolint:gosec // G703: the release directory make release-test names, not input
	if err != nil {
		return []string{err.Error()}
	}
	var bad []string
	listed := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 {
			bad = append(bad, fmt.Sprintf("SHA256SUMS:%d: not `<sha256>  <file>`: %q", n, sc.Text()))
			continue
		}
		listed[name]++
		got, ferr := fileSHA256(filepath.Join(dir, name))
		switch {
		case ferr != nil:
			bad = append(bad, fmt.Sprintf("SHA256SUMS:%d: %v", n, ferr))
		case got != sum:
			bad = append(bad, fmt.Sprintf("SHA256SUMS:%d: %s hashes to %s, listed %s", n, name, got, sum))
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return append(bad, err.Error())
	}
	for _, e := range ents {
		if e.Name() != "SHA256SUMS" && listed[e.Name()] != 1 {
			bad = append(bad, fmt.Sprintf("SHA256SUMS lists %s %d times, want once", e.Name(), listed[e.Name()]))
		}
	}
	return bad
}

func fileSHA256(p string) (string, error) {
	b, err := os.ReadFile(p) //nolint:gosec // G703: a file of the release directory, not input
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:]), nil
}

// readSBOM parses a CycloneDX JSON SBOM.
func readSBOM(p string) (*cdx.BOM, error) {
	f, err := os.Open(p) //nolint:gosec // G703: a file of the release directory, not input
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(f, cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		return nil, fmt.Errorf("%s: not CycloneDX JSON: %w", p, err)
	}
	return &bom, nil
}

// purl is a Go module's package URL, without qualifiers.
func purl(path, version string) string { return "pkg:golang/" + path + "@" + version }

// checkSBOM: the SBOM of a binary whose build information is info names the
// binary at version, our receiver module by its path at "v"+version, and
// every other module the binary was built from at its version, each with
// its package URL (qualified by the binary's goarch); no component is a replace path (a file system path,
// no version).
func checkSBOM(bom *cdx.BOM, info *debug.BuildInfo, version string) []string {
	var bad []string
	if bom.BOMFormat != cdx.BOMFormat {
		bad = append(bad, fmt.Sprintf("bomFormat %q, want %q", bom.BOMFormat, cdx.BOMFormat))
	}
	if bom.Metadata == nil || bom.Metadata.Component == nil {
		return append(bad, "no metadata.component (the binary)")
	}
	if m := bom.Metadata.Component; m.Name != info.Main.Path || strings.TrimPrefix(m.Version, "v") != version {
		bad = append(bad, fmt.Sprintf("metadata.component %s %s, want %s at %s", m.Name, m.Version, info.Main.Path, version))
	}
	comps := map[string][]cdx.Component{}
	if bom.Components != nil {
		for _, c := range *bom.Components {
			comps[c.Name] = append(comps[c.Name], c)
			if c.Version == "" || c.Version == "(devel)" || strings.HasPrefix(c.Name, ".") || strings.HasPrefix(c.Name, "/") {
				bad = append(bad, fmt.Sprintf("component %q version %q: a replace path, not a module", c.Name, c.Version))
			}
		}
	}
	var goarch string
	for _, s := range info.Settings {
		if s.Key == "GOARCH" {
			goarch = s.Value
		}
	}
	ours := false
	for _, d := range info.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		if d.Path == receiverModule {
			ours = true
			if d.Replace != nil || d.Version != "v"+version {
				bad = append(bad, fmt.Sprintf("the binary was built from %s %s (replaced by %v), want v%s from a module proxy", d.Path, d.Version, d.Replace, version))
			}
		}
		cs := comps[m.Path]
		if len(cs) != 1 {
			bad = append(bad, fmt.Sprintf("module %s %s: %d components, want 1", m.Path, m.Version, len(cs)))
			continue
		}
		c := cs[0]
		if c.Version != m.Version {
			bad = append(bad, fmt.Sprintf("module %s: component version %q, the binary has %q", m.Path, c.Version, m.Version))
		}
		base, q, _ := strings.Cut(c.PackageURL, "?")
		if base != purl(m.Path, m.Version) {
			bad = append(bad, fmt.Sprintf("module %s: purl %q, want %s", m.Path, c.PackageURL, purl(m.Path, m.Version)))
		}
		if qs, err := url.ParseQuery(q); err != nil || qs.Get("goarch") != goarch {
			bad = append(bad, fmt.Sprintf("module %s: purl %q, want goarch=%s", m.Path, c.PackageURL, goarch))
		}
	}
	if !ours {
		bad = append(bad, "the binary's build information has no "+receiverModule)
	}
	return bad
}

// wantLabels are the OCI image spec's recommended labels, as make image
// writes them for version and the commit revision.
func wantLabels(version, revision string) map[string]string {
	return map[string]string{
		"org.opencontainers.image.source":   "https://github.com/containerstats/containerstatsreceiver",
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.revision": revision,
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.title":    "otelcol-containerstats",
	}
}

// checkImage: the archive is an index of exactly linux/amd64 and
// linux/arm64, each image's config and manifest and the index carrying the
// labels (annotations) of wantLabels, each entrypoint a file of its layers.
func checkImage(a *ociarchive.Archive, version, revision string) []string {
	var bad []string
	var plats []string
	for p := range a.Images {
		plats = append(plats, p)
	}
	slices.Sort(plats)
	if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(plats, want) {
		bad = append(bad, fmt.Sprintf("image index platforms %v, want %v", plats, want))
	}
	want := wantLabels(version, revision)
	diff := func(what string, got map[string]string) {
		for k, v := range want {
			if got[k] != v {
				bad = append(bad, fmt.Sprintf("%s: %s=%q, want %q", what, k, got[k], v))
			}
		}
	}
	diff("image index annotations", a.Annotations)
	for _, p := range plats {
		img := a.Images[p]
		diff(p+" config labels", img.Labels)
		diff(p+" manifest annotations", img.Annotations)
		if len(img.Entrypoint) == 0 {
			bad = append(bad, p+": no entrypoint")
			continue
		}
		if _, ok := img.Files[strings.TrimPrefix(img.Entrypoint[0], "/")]; !ok {
			bad = append(bad, fmt.Sprintf("%s: entrypoint %s is no file of the layers", p, img.Entrypoint[0]))
		}
	}
	return bad
}

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package release

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/ociarchive"
)

const version = "0.1.0-test"

// fakeRelease writes a release directory of small files with its SHA256SUMS.
func fakeRelease(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var sums strings.Builder
	for _, name := range releaseFiles(version) {
		if name == "SHA256SUMS" {
			continue
		}
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("content of "+name), 0o600))
		s, err := fileSHA256(p)
		require.NoError(t, err)
		fmt.Fprintf(&sums, "%s  %s\n", s, name)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(sums.String()), 0o600))
	return dir
}

func TestChecksFailOnBrokenReleaseDirectory(t *testing.T) {
	sbom := "otelcol-containerstats_" + version + "_linux_arm64.cdx.json"
	t.Run("whole", func(t *testing.T) {
		dir := fakeRelease(t)
		assert.Empty(t, checkFiles(dir, version))
		assert.Empty(t, checkSums(dir))
	})
	t.Run("sbom removed", func(t *testing.T) {
		dir := fakeRelease(t)
		require.NoError(t, os.Remove(filepath.Join(dir, sbom)))
		assert.Equal(t, []string{"missing file " + sbom}, checkFiles(dir, version))
		bad := checkSums(dir)
		require.Len(t, bad, 1)
		assert.Contains(t, bad[0], sbom)
	})
	t.Run("checksum line removed", func(t *testing.T) {
		dir := fakeRelease(t)
		p := filepath.Join(dir, "SHA256SUMS")
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		var kept []string
		for l := range strings.Lines(string(b)) {
			if !strings.HasSuffix(l, sbom+"\n") {
				kept = append(kept, l)
			}
		}
		require.NoError(t, os.WriteFile(p, []byte(strings.Join(kept, "")), 0o600))
		assert.Equal(t, []string{"SHA256SUMS lists " + sbom + " 0 times, want once"}, checkSums(dir))
	})
	t.Run("file changed", func(t *testing.T) {
		dir := fakeRelease(t)
		require.NoError(t, os.WriteFile(filepath.Join(dir, sbom), []byte("{}"), 0o600))
		bad := checkSums(dir)
		require.Len(t, bad, 1)
		assert.Contains(t, bad[0], sbom+" hashes to ")
	})
}

// buildInfo is a binary's build information: main module m, our receiver
// at recv (replaced by repl when not nil) and golang.org/x/sys.
func buildInfo(recv string, repl *debug.Module) *debug.BuildInfo {
	return &debug.BuildInfo{
		Main: debug.Module{Path: receiverModule + "/build/otelcol", Version: "(devel)"},
		Deps: []*debug.Module{
			{Path: receiverModule, Version: recv, Replace: repl},
			{Path: "golang.org/x/sys", Version: "v0.40.0"},
		},
		Settings: []debug.BuildSetting{{Key: "GOARCH", Value: "arm64"}},
	}
}

// sbomOf is what cyclonedx-gomod writes for info, through JSON and back.
func sbomOf(t *testing.T, info *debug.BuildInfo) *cdx.BOM {
	t.Helper()
	bom := cdx.NewBOM()
	bom.Metadata = &cdx.Metadata{Component: &cdx.Component{Type: cdx.ComponentTypeApplication, Name: info.Main.Path, Version: version}}
	var comps []cdx.Component
	for _, d := range info.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		comps = append(comps, cdx.Component{
			Type: cdx.ComponentTypeLibrary, Name: d.Path, Version: d.Version,
			PackageURL: purl(d.Path, d.Version) + "?goarch=arm64&goos=linux&type=module",
		})
	}
	bom.Components = &comps
	var b bytes.Buffer
	require.NoError(t, cdx.NewBOMEncoder(&b, cdx.BOMFileFormatJSON).Encode(bom))
	p := filepath.Join(t.TempDir(), "x.cdx.json")
	require.NoError(t, os.WriteFile(p, b.Bytes(), 0o600))
	got, err := readSBOM(p)
	require.NoError(t, err)
	return got
}

func TestCheckSBOM(t *testing.T) {
	good := buildInfo("v"+version, nil)
	assert.Empty(t, checkSBOM(sbomOf(t, good), good, version))
	assert.Equal(t, []string{
		"metadata.component " + receiverModule + "/build/otelcol " + version + ", want " + receiverModule + "/build/otelcol at 1.2.3",
		"the binary was built from " + receiverModule + " v" + version + " (replaced by <nil>), want v1.2.3 from a module proxy",
	}, checkSBOM(sbomOf(t, good), good, "1.2.3"))

	// 0.1.0 as released: ocb's replace path in the binary, so in the SBOM.
	repl := buildInfo("v0.0.0", &debug.Module{Path: "../..", Version: "(devel)"})
	assert.Equal(t, []string{
		`component "../.." version "(devel)": a replace path, not a module`,
		"the binary was built from " + receiverModule + " v0.0.0 (replaced by &{../.. (devel)  <nil>}), want v" + version + " from a module proxy",
	}, checkSBOM(sbomOf(t, repl), repl, version))

	bom := sbomOf(t, good)
	*bom.Components = (*bom.Components)[:1]
	assert.Equal(t, []string{"module golang.org/x/sys v0.40.0: 0 components, want 1"}, checkSBOM(bom, good, version))

	bom = sbomOf(t, good)
	(*bom.Components)[1].Version = "v0.39.0"
	assert.Equal(t, []string{`module golang.org/x/sys: component version "v0.39.0", the binary has "v0.40.0"`}, checkSBOM(bom, good, version))

	bom = sbomOf(t, good)
	(*bom.Components)[0].PackageURL = "pkg:golang/../..@(devel)?goarch=arm64"
	assert.Equal(t, []string{`module ` + receiverModule + `: purl "pkg:golang/../..@(devel)?goarch=arm64", want pkg:golang/` + receiverModule + `@v` + version},
		checkSBOM(bom, good, version))

	// cyclonedx-gomod qualifies purls by go env's GOARCH, not the binary's.
	bom = sbomOf(t, good)
	(*bom.Components)[1].PackageURL = purl("golang.org/x/sys", "v0.40.0") + "?goarch=amd64&goos=linux&type=module"
	assert.Equal(t, []string{`module golang.org/x/sys: purl "pkg:golang/golang.org/x/sys@v0.40.0?goarch=amd64&goos=linux&type=module", want goarch=arm64`},
		checkSBOM(bom, good, version))

	_, err := readSBOM(filepath.Join("testdata", "CHANGELOG.md"))
	assert.ErrorContains(t, err, "not CycloneDX JSON")
}

func fakeArchive() *ociarchive.Archive {
	labels := func() map[string]string { return wantLabels(version, "0123abcd") }
	img := func() *ociarchive.Image {
		return &ociarchive.Image{
			Annotations: labels(), Labels: labels(), Entrypoint: []string{"/otelcol-containerstats"},
			Files: map[string]ociarchive.File{"otelcol-containerstats": {Mode: 0o755}},
		}
	}
	return &ociarchive.Archive{Annotations: labels(), Images: map[string]*ociarchive.Image{"linux/amd64": img(), "linux/arm64": img()}}
}

func TestCheckImage(t *testing.T) {
	assert.Empty(t, checkImage(fakeArchive(), version, "0123abcd"))

	a := fakeArchive()
	delete(a.Images, "linux/arm64")
	assert.Equal(t, []string{"image index platforms [linux/amd64], want [linux/amd64 linux/arm64]"}, checkImage(a, version, "0123abcd"))

	a = fakeArchive()
	delete(a.Images["linux/arm64"].Labels, "org.opencontainers.image.licenses")
	assert.Equal(t, []string{`linux/arm64 config labels: org.opencontainers.image.licenses="", want "Apache-2.0"`}, checkImage(a, version, "0123abcd"))

	assert.Len(t, checkImage(fakeArchive(), version, "fedcba98"), 5, "revision: index, and each image's labels and annotations")
	assert.Len(t, checkImage(fakeArchive(), "1.2.3", "0123abcd"), 5, "version: index, and each image's labels and annotations")

	a = fakeArchive()
	delete(a.Images["linux/amd64"].Files, "otelcol-containerstats")
	assert.Equal(t, []string{"linux/amd64: entrypoint /otelcol-containerstats is no file of the layers"}, checkImage(a, version, "0123abcd"))
}

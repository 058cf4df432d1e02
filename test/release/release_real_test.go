// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package release

import (
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
	"github.com/containerstats/containerstatsreceiver/internal/testing/ociarchive"
)

// archs are the release's architectures, each a binary, an SBOM and a
// platform of the image.
var archs = []string{"amd64", "arm64"}

// TestRelease checks the release directory RELEASE_DIR of `make release
// VERSION=$RELEASE_VERSION` (make release-test): its files, SHA256SUMS,
// each SBOM against its binary's build information, the image archive's
// platforms and labels, and that each image's entrypoint, taken from the
// layers, says the version (arm64 under QEMU_AARCH64). It reads files and
// runs `--version`: no machine lock.
func TestRelease(t *testing.T) {
	dir, version := os.Getenv("RELEASE_DIR"), os.Getenv("RELEASE_VERSION")
	if dir == "" || version == "" {
		machine.Need(t, "RELEASE_DIR and RELEASE_VERSION unset: run make release-test")
	}
	assert.Empty(t, checkFiles(dir, version), "files")
	assert.Empty(t, checkSums(dir), "SHA256SUMS")
	sum := exec.Command("sha256sum", "-c", "--strict", "SHA256SUMS")
	sum.Dir = dir
	out, err := sum.CombinedOutput()
	assert.NoError(t, err, "sha256sum -c SHA256SUMS:\n%s", out)

	p := filepath.Join(dir, "otelcol-containerstats_"+version)
	for _, a := range archs {
		t.Run("sbom-"+a, func(t *testing.T) {
			info, err := buildinfo.ReadFile(p + "_linux_" + a)
			require.NoError(t, err)
			bom, err := readSBOM(p + "_linux_" + a + ".cdx.json")
			require.NoError(t, err)
			assert.Empty(t, checkSBOM(bom, info, version))
			for _, c := range *bom.Components {
				if c.Name == receiverModule {
					t.Logf("%s: component %s %s %s", a, c.Name, c.Version, c.PackageURL)
				}
			}
		})
	}

	t.Run("image", func(t *testing.T) {
		archive, err := ociarchive.Read(p + "_image.tar")
		require.NoError(t, err)
		head, err := exec.Command("git", "rev-parse", "HEAD").Output()
		require.NoError(t, err)
		assert.Empty(t, checkImage(archive, version, strings.TrimSpace(string(head))))
		for _, a := range archs {
			img := archive.Images["linux/"+a]
			if img == nil || len(img.Entrypoint) == 0 {
				continue // checkImage said so
			}
			f, ok := img.Files[strings.TrimPrefix(img.Entrypoint[0], "/")]
			if !ok {
				continue
			}
			bin := filepath.Join(t.TempDir(), a)
			require.NoError(t, os.WriteFile(bin, f.Data, 0o700)) //nolint:gosec // G306: the entrypoint, which the test runs
			cmd := exec.Command(bin, "--version")
			if a == "arm64" {
				qemu := envOr("QEMU_AARCH64", "qemu-aarch64-static")
				if _, err := exec.LookPath(qemu); err != nil {
					machine.Need(t, qemu+" missing (Debian's qemu-user-static)")
				}
				cmd = exec.Command(qemu, "-L", envOr("QEMU_LD_PREFIX", "/usr/aarch64-linux-gnu"), bin, "--version")
			}
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s entrypoint --version: %s", a, out)
			assert.Equal(t, "otelcol-containerstats version "+version, strings.TrimSpace(string(out)), a+" entrypoint --version")
		}
	})
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

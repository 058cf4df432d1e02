// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/ociarchive"
)

// TestImageArchive checks `make image`'s archive, an image index of
// linux/amd64 and linux/arm64: the name the DaemonSet runs, the OCI
// annotations (the version --version prints, the source, the revision),
// and in each platform's image the exact binary of that architecture
// (OTELCOL_BIN, OTELCOL_ARM64_BIN), the libraries it needs (for amd64
// every one ldd lists), the default config, the CA bundle, the LICENSE,
// user 0; then unpacks each root filesystem and runs its collector
// chrooted into it alone (arm64 through qemu-aarch64-static copied in),
// which proves the image needs nothing from a base.
func TestImageArchive(t *testing.T) {
	archive := imageArchive(t)
	bins := map[string]string{"linux/amd64": collectorBin(t), "linux/arm64": arm64CollectorBin(t)}
	arc, err := ociarchive.Read(archive)
	require.NoError(t, err)

	// The DaemonSet's image, normalized the way containerd does.
	ds, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "daemonset.yaml"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s+image:\s*(\S+)\s*$`).FindSubmatch(ds)
	require.NotNil(t, m, "no image: in deploy/daemonset.yaml")
	assert.Equal(t, "docker.io/library/"+string(m[1]), arc.Name)
	if want := os.Getenv("IMAGE_NAME"); want != "" {
		assert.Equal(t, want, arc.Name)
	}
	out, err := exec.Command(bins["linux/amd64"], "--version").Output() //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
	require.NoError(t, err)
	version := strings.TrimPrefix(strings.TrimSpace(string(out)), "otelcol-containerstats version ")
	assert.Equal(t, version, arc.Annotations["org.opencontainers.image.version"])
	assert.True(t, strings.HasSuffix(arc.Name, ":"+version), "the tag is the version %s: %s", version, arc.Name)
	assert.NotEmpty(t, arc.Annotations["org.opencontainers.image.source"])
	assert.Regexp(t, `^[0-9a-f]{40}$`, arc.Annotations["org.opencontainers.image.revision"])
	require.Len(t, arc.Images, 2, "platforms: %v", arc.Images)

	cfg, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "config.yaml"))
	require.NoError(t, err)
	ca, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	require.NoError(t, err)
	license, err := os.ReadFile(filepath.Join(repoRoot(t), "LICENSE"))
	require.NoError(t, err)
	for plat, bin := range bins {
		t.Run(strings.ReplaceAll(plat, "/", "-"), func(t *testing.T) {
			img := arc.Images[plat]
			require.NotNil(t, img)
			assert.Equal(t, arc.Annotations, img.Annotations)
			assert.Equal(t, []string{"/otelcol-containerstats"}, img.Entrypoint)
			assert.Equal(t, []string{"--config", "/etc/otelcol/config.yaml"}, img.Cmd)
			assert.Equal(t, "0:0", img.User, "the documented user: uid 0 (docs/deploy.md)")
			want, err := os.ReadFile(bin)
			require.NoError(t, err)
			got := img.Files["otelcol-containerstats"]
			assert.True(t, bytes.Equal(want, got.Data), "the image's binary differs from %s", bin)
			assert.Equal(t, int64(0o755), got.Mode)
			assert.Equal(t, string(cfg), string(img.Files["etc/otelcol/config.yaml"].Data))
			assert.True(t, bytes.Equal(ca, img.Files["etc/ssl/certs/ca-certificates.crt"].Data), "the CA bundle")
			assert.Equal(t, string(license), string(img.Files["usr/share/doc/otelcol-containerstats/LICENSE"].Data))
			var runner []string
			if plat == "linux/amd64" {
				out, err := exec.Command("ldd", bin).Output()
				require.NoError(t, err)
				libs := regexp.MustCompile(`(?m)(?:=> |^\s+)(/\S+) \(`).FindAllSubmatch(out, -1)
				require.NotEmpty(t, libs, "ldd %s: %s", bin, out)
				for _, l := range libs {
					assert.Contains(t, img.Files, strings.TrimPrefix(string(l[1]), "/"), "library %s (ldd) not in the image", l[1])
				}
			} else {
				qemu, err := exec.LookPath(envOr("QEMU_AARCH64", "qemu-aarch64-static"))
				if err != nil {
					need(t, "qemu-aarch64-static missing (qemu-user-static): "+err.Error())
				}
				runner = []string{qemu}
			}
			t.Logf("%s: %s, %d files, entrypoint %v %v", plat, img.ManifestDigest, len(img.Files), img.Entrypoint, img.Cmd)

			// Unpack and run the collector from the image's root filesystem only.
			need(t, lookPaths("chroot"))
			root := t.TempDir()
			for d := range img.Dirs {
				require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
			}
			for name, f := range img.Files {
				require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(root, name), f.Data, os.FileMode(f.Mode)))
			}
			var prefix []string
			if len(runner) > 0 { // a static emulator: it needs nothing from the root
				b, err := os.ReadFile(runner[0])
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(root, "qemu-aarch64-static"), b, 0o755)) //nolint:gosec // G306: an executable
				prefix = []string{"/qemu-aarch64-static"}
			}
			run := func(args ...string) string {
				cmd := exec.Command("chroot", append(append([]string{root}, prefix...), args...)...) //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
				cmd.Env = []string{"K8S_NODE_NAME=n", "OTLP_ENDPOINT=gateway:4317"}
				b, err := cmd.CombinedOutput()
				require.NoError(t, err, "chroot %v: %s", args, b)
				return string(b)
			}
			assert.Contains(t, run("/otelcol-containerstats", "--version"), "otelcol-containerstats version "+version)
			run(append(img.Entrypoint[:1:1], "validate", img.Cmd[0], img.Cmd[1])...)
		})
	}
}

// arm64CollectorBin is the linux/arm64 collector (make otelcol-arm64).
func arm64CollectorBin(t *testing.T) string {
	t.Helper()
	bin := envOr("OTELCOL_ARM64_BIN", filepath.Join(repoRoot(t), "bin", "otelcol-containerstats-arm64"))
	if _, err := os.Stat(bin); err != nil {
		need(t, fmt.Sprintf("arm64 collector binary %s missing (make otelcol-arm64): %v", bin, err))
	}
	return bin
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

#!/usr/bin/env bash
# make release VERSION=x.y.z: a versioned release into build/release.
# Fails unless VERSION is given and CHANGELOG.md (RELEASE_CHANGELOG) has a
# section `## x.y.z ...`. Publishes the receiver module (the work tree's
# files git tracks or does not ignore) at vx.y.z into a module proxy
# directory, build/release-proxy (tools/sbom/modproxy), and builds the
# binaries from it (RECEIVER_PROXY, tools/make/otelcol.sh), so their build
# information, and the SBOMs, name the module at vx.y.z, not ocb's replace
# path; the module cache's copy of that version is dropped first, under a
# lock beside it, as an earlier release of the same version may have put
# other files there. Builds the image (make image VERSION=x.y.z, hence both
# binaries), checks each binary's --version (arm64 under QEMU_AARCH64),
# then writes the binaries per architecture, the multi-arch image archive,
# a CycloneDX SBOM of each binary (cyclonedx-gomod, pinned as a Go tool in
# tools/sbom/go.mod, reading the modules the binary was built from), the
# CHANGELOG section, and SHA256SUMS of them all. bin/ keeps the VERSION
# build; the next make otelcol builds 0.0.0-dev again.
# Reads GO, SUBMAKE (make), VERSION, OTELCOL_BIN, OTELCOL_ARM64_BIN, IMAGE_ARCHIVE,
# QEMU_AARCH64, QEMU_LD_PREFIX, RELEASE_CHANGELOG.
source "$(dirname "$0")/lib.sh"
dir=build/release
mod=github.com/containerstats/containerstatsreceiver
proxy=build/release-proxy
if [[ $VERSION == 0.0.0-dev ]]; then echo "release: give the version, make release VERSION=x.y.z" >&2; exit 1; fi
changelog=${RELEASE_CHANGELOG:-CHANGELOG.md}
section=$(awk -v v="$VERSION" '/^## /{on = ($2 == v)} on' "$changelog")
if [[ -z $section ]]; then echo "release: $changelog has no section '## $VERSION ...'" >&2; exit 1; fi
rm -rf "$proxy"
git ls-files -co --exclude-standard | $GO run -C tools/sbom ./modproxy -root "$PWD" -dir "$PWD/$proxy" -module $mod -version "v$VERSION"
cache=$($GO env GOMODCACHE)
mkdir -p "$cache/cache/download/$mod"
exec 7>"$cache/cache/download/$mod/release.lock"
flock 7
chmod -R u+w "$cache/$mod@v$VERSION" 2>/dev/null || true
rm -rf "$cache/$mod@v$VERSION" "$cache/cache/download/$mod/@v/v$VERSION".{zip,ziphash,mod,info}
"${SUBMAKE:-make}" --no-print-directory image VERSION="$VERSION" RECEIVER_PROXY="$proxy"
for b in "$OTELCOL_BIN" "$OTELCOL_ARM64_BIN"; do
  case $b in
    *arm64) v=$("$QEMU_AARCH64" -L "$QEMU_LD_PREFIX" "$b" --version) ;;
    *) v=$("$b" --version) ;;
  esac
  [[ $v == "otelcol-containerstats version $VERSION" ]] || { echo "release: $b --version says '$v'" >&2; exit 1; }
done
rm -rf "$dir"
mkdir -p "$dir"
p=$dir/otelcol-containerstats_$VERSION
cp "$OTELCOL_BIN" "${p}_linux_amd64"
cp "$OTELCOL_ARM64_BIN" "${p}_linux_arm64"
cp "$IMAGE_ARCHIVE" "${p}_image.tar"
# cyclonedx-gomod's purls take goarch from `go env`: GOARCH says the binary's.
sbom=$($GO tool -n -modfile="$PWD/tools/sbom/go.mod" cyclonedx-gomod)
for a in amd64 arm64; do
  GOOS=linux GOARCH=$a "$sbom" bin -json -version "$VERSION" -output "${p}_linux_$a.cdx.json" "${p}_linux_$a"
done
printf '%s\n' "$section" >"$dir/CHANGELOG-$VERSION.md"
cd "$dir"
sha256sum -- * >SHA256SUMS
ls -l

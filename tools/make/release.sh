#!/usr/bin/env bash
# make release VERSION=x.y.z: a versioned release into build/release.
# Fails unless VERSION is given and CHANGELOG.md has a section
# `## x.y.z ...`. Builds the image (make image VERSION=x.y.z, hence both
# binaries), checks each binary's --version (arm64 under QEMU_AARCH64),
# then writes the binaries per architecture, the multi-arch image archive,
# a CycloneDX SBOM of each binary (cyclonedx-gomod, pinned as a Go tool in
# tools/sbom/go.mod, reading the modules the binary was built from), the
# CHANGELOG section, and SHA256SUMS of them all. bin/ keeps the VERSION
# build; the next make otelcol builds 0.0.0-dev again.
# Reads GO, SUBMAKE (make), VERSION, OTELCOL_BIN, OTELCOL_ARM64_BIN, IMAGE_ARCHIVE,
# QEMU_AARCH64, QEMU_LD_PREFIX.
source "$(dirname "$0")/lib.sh"
dir=build/release
sbom="$GO tool -modfile=$PWD/tools/sbom/go.mod cyclonedx-gomod"
if [[ $VERSION == 0.0.0-dev ]]; then echo "release: give the version, make release VERSION=x.y.z" >&2; exit 1; fi
section=$(awk -v v="$VERSION" '/^## /{on = ($2 == v)} on' CHANGELOG.md)
if [[ -z $section ]]; then echo "release: CHANGELOG.md has no section '## $VERSION ...'" >&2; exit 1; fi
"${SUBMAKE:-make}" --no-print-directory image VERSION="$VERSION"
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
for a in amd64 arm64; do
  $sbom bin -json -version "$VERSION" -output "${p}_linux_$a.cdx.json" "${p}_linux_$a"
done
printf '%s\n' "$section" >"$dir/CHANGELOG-$VERSION.md"
cd "$dir"
sha256sum -- * >SHA256SUMS
ls -l

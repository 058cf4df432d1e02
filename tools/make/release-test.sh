#!/usr/bin/env bash
# make release-test: make release VERSION=0.1.0-test, its changelog
# test/release/testdata/CHANGELOG.md (RELEASE_CHANGELOG), its binaries and
# image archive in build/release-test (bin/ keeps the 0.0.0-dev build that
# other steps use), into build/release; then test/release (build tag
# REAL_TAGS) checks what it wrote: SHA256SUMS, each SBOM against the
# binary's build information, the image index's platforms, entrypoints
# (arm64 under QEMU_AARCH64) and labels. docs/release.md. Reads GO,
# SUBMAKE, TEST_BUILDFLAGS, GOTESTFLAGS, REAL_TAGS, QEMU_AARCH64,
# QEMU_LD_PREFIX.
source "$(dirname "$0")/lib.sh"
v=0.1.0-test out=build/release-test
words buildflags "$TEST_BUILDFLAGS"
words testflags "$GOTESTFLAGS"
"${SUBMAKE:-make}" --no-print-directory release VERSION=$v RELEASE_CHANGELOG=test/release/testdata/CHANGELOG.md \
  OTELCOL_BIN=$out/otelcol-containerstats OTELCOL_ARM64_BIN=$out/otelcol-containerstats-arm64 IMAGE_ARCHIVE=$out/image.tar
$GO vet "${buildflags[@]}" -tags "$REAL_TAGS" ./test/release/
RELEASE_DIR=$(abs build/release) RELEASE_VERSION=$v QEMU_AARCH64=$QEMU_AARCH64 QEMU_LD_PREFIX=$QEMU_LD_PREFIX \
  $GO test "${buildflags[@]}" -tags "$REAL_TAGS" -count=1 -v -timeout 10m "${testflags[@]}" ./test/release/

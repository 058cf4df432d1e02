#!/usr/bin/env bash
# make arch-test: the distribution's binaries against the fixture trees
# (test/archgolden, build tag REAL_TAGS): the host's (linux/amd64 in CI)
# natively and the arm64 one under qemu-user (QEMU_AARCH64, Debian's
# qemu-user-static, with the arm64 glibc of libc6-dev-arm64-cross,
# QEMU_LD_PREFIX, as its library prefix: binfmt_misc need not be
# registered), each running one receiver per layout of testdata/fixtures
# with root_path on a copy of it; each layout's second scrape must equal
# testdata/golden/<layout>.yaml, which the scrape's own tests write. Also:
# the binaries start without libnvidia-ml and say so once per receiver, and
# bind NVML's symbols lazily (the Makefile's OTELCOL_EXTLDFLAGS). No root.
# In CI a missing binary, emulator or C library fails it. Reads GO,
# TEST_BUILDFLAGS, GOTESTFLAGS, REAL_TAGS, OTELCOL_BIN, OTELCOL_ARM64_BIN,
# QEMU_AARCH64, QEMU_LD_PREFIX, CC_ARM64.
source "$(dirname "$0")/lib.sh"
words buildflags "$TEST_BUILDFLAGS"
words testflags "$GOTESTFLAGS"
$GO vet "${buildflags[@]}" -tags "$REAL_TAGS" ./test/archgolden/
OTELCOL_BIN=$(abs "$OTELCOL_BIN") OTELCOL_ARM64_BIN=$(abs "$OTELCOL_ARM64_BIN") \
  QEMU_AARCH64=$QEMU_AARCH64 QEMU_LD_PREFIX=$QEMU_LD_PREFIX CC_ARM64=$CC_ARM64 \
  $GO test "${buildflags[@]}" -tags "$REAL_TAGS" -count=1 -v -timeout 5m "${testflags[@]}" ./test/archgolden/

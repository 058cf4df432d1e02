#!/usr/bin/env bash
# make v2guest-build (tools/make/v2guest.sh build): what TestV2Node builds
# for the guest (the v2guest test binary, plain: it runs in the TCG guest;
# the workload, without cgo) into build/v2guest, with the test's flags, so
# that the test's own builds find the Go cache warm: in make test nothing
# else compiles these packages plain, and make test runs this in the
# background.
# make v2guest-image (tools/make/v2guest.sh image): the guest itself
# (kernel, initramfs, root filesystem from Debian packages;
# internal/testing/vmnode's TestPrepareGuest) built into VMNODE_CACHE or
# found there, booting nothing; it takes the machine lock, as the v2 tests
# do. make test runs it in the background too, where its apt and dpkg work
# overlaps the compiles. Not a prerequisite of v2-test: TestBoot builds
# the guest the same way when the cache has none, and waits (machine lock,
# the cache's lock) for a build in progress.
# Reads GO, TEST_BUILDFLAGS, GOTESTFLAGS, VMNODE_CACHE.
source "$(dirname "$0")/lib.sh"
words buildflags "$TEST_BUILDFLAGS"
words testflags "$GOTESTFLAGS"
case ${1-} in
  build)
    mkdir -p build/v2guest
    cd test/v2node
    $GO test -c -tags v2guest -o "$OLDPWD/build/v2guest/v2guest.test" .
    CGO_ENABLED=0 $GO build -o "$OLDPWD/build/v2guest/workload" ../../internal/testing/cmd/workload
    ;;
  image)
    VMNODE_CACHE=$VMNODE_CACHE $GO test "${buildflags[@]}" -tags vmnode -count=1 -v -timeout 10m \
      -run '^TestPrepareGuest$' "${testflags[@]}" ./internal/testing/vmnode/
    ;;
  *) echo "usage: v2guest.sh build|image" >&2; exit 2 ;;
esac

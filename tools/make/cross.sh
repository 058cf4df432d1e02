#!/usr/bin/env bash
# make cross: the module builds where the collector builds: darwin and
# windows too, without cgo (the receiver refuses to start there, naming
# root_path), and linux/arm64. tools/crosscheck type-checks it for each of
# CROSS_PLATFORMS (GOOS or GOOS/GOARCH) from source, compiling nothing: go
# list picks each package's files for that platform as go build does, and
# go/types is the compiler's own type checker, so a type or build-tag error
# (a name a !linux file lacks, a stub missing, a syscall field whose type
# differs on arm64) fails here as `GOOS=<os> GOARCH=<arch> go build` would;
# only back-end errors (assembly, the linker) need a real build:
# CROSS_BUILD=1 also runs `go build ./...` for each platform. The
# distribution is our module plus core and contrib components their own
# projects build for those systems, so by default only the module is
# checked; CROSS_DIST=1 checks (and with CROSS_BUILD builds) DIST_DIR too
# (the Makefile then builds otelcol first). linux/arm64 is checked without
# cgo here; its cgo build is make otelcol-arm64's (arch-test in make test).
# Reads GO, CROSSCHECK, DIST_DIR, and CROSS_PLATFORMS, CROSS_DIST,
# CROSS_BUILD (defaults below).
source "$(dirname "$0")/lib.sh"
CROSS_PLATFORMS=${CROSS_PLATFORMS-darwin windows linux/arm64}
CROSS_DIST=${CROSS_DIST-} CROSS_BUILD=${CROSS_BUILD-}
$GO test -C tools ./crosscheck
$CROSSCHECK -goos "$CROSS_PLATFORMS" -C "$PWD" ./...
if [[ -n $CROSS_DIST ]]; then
  $CROSSCHECK -goos "$CROSS_PLATFORMS" -C "$PWD/$DIST_DIR" .
fi
if [[ -n $CROSS_BUILD ]]; then
  for p in $CROSS_PLATFORMS; do
    os=${p%%/*} arch=$($GO env GOARCH)
    [[ $p == */* ]] && arch=${p#*/}
    GOOS=$os GOARCH=$arch CGO_ENABLED=0 $GO build ./...
    if [[ -n $CROSS_DIST ]]; then
      (cd "$DIST_DIR" && GOOS=$os GOARCH=$arch CGO_ENABLED=0 $GO build -buildvcs=false -o /dev/null .)
    fi
  done
fi

#!/usr/bin/env bash
# make otelcol (ARCH host) and make otelcol-arm64 (ARCH arm64): the
# distribution's binary.
#   tools/make/otelcol.sh host|arm64
# ocb (BUILDER) generates the sources and go.mod in DIST_DIR and resolves
# the modules (strict version check on); the compile is ours, so that it
# runs with cgo (go-nvml needs it). ocb writes dist.version into main.go as
# a literal, so it runs on a copy of builder-config.yaml with VERSION in
# it (build/builder-config.yaml). Each architecture compiles its own copy
# of the sources (build/otelcol-ARCH), taken under build/.lock-dist with
# ocb's run: make test builds arm64 in the background while its otelcol
# step may run ocb again. Both are incremental: a warm rebuild takes
# seconds. arm64 is cross-compiled with cgo through CC_ARM64 (Debian's
# gcc-aarch64-linux-gnu and the arm64 glibc of libc6-dev-arm64-cross).
# With RECEIVER_PROXY (make release: a module proxy directory holding the
# receiver module at vVERSION, tools/sbom/modproxy) ocb takes the receiver
# from there instead of the work tree (no replace path), so the binary's
# build information names it at vVERSION; compiled in build/otelcol-ARCH-release.
# Reads GO, BUILDER, VERSION, DIST_DIR, OTELCOL_BIN, OTELCOL_ARM64_BIN,
# CC_ARM64, OTELCOL_BUILDFLAGS, OTELCOL_LDFLAGS, OTELCOL_EXTLDFLAGS (the
# Makefile's, which says why NVML's symbols are bound lazily), RECEIVER_PROXY.
source "$(dirname "$0")/lib.sh"
arch=${1:?usage: otelcol.sh host|arm64}
case $arch in
  host) out=$OTELCOL_BIN env=(CGO_ENABLED=1) ;;
  arm64) out=$OTELCOL_ARM64_BIN env=(CGO_ENABLED=1 GOOS=linux GOARCH=arm64 CC="$CC_ARM64") ;;
  *) echo "otelcol.sh: unknown architecture $arch" >&2; exit 2 ;;
esac

src=build/otelcol-$arch
mod=github.com/containerstats/containerstatsreceiver
recv=(-e '')
if [[ -n ${RECEIVER_PROXY:-} ]]; then
  src+=-release
  export GOPROXY="file://$(abs "$RECEIVER_PROXY"),$($GO env GOPROXY)"
  export GONOSUMDB="$mod${GONOSUMDB:+,$GONOSUMDB}"
  recv=(-e "\\|^  - gomod: $mod v0\\.0\\.0\$|{s/v0\\.0\\.0\$/v$VERSION/;n;/^    path: \\.\$/d}")
fi
mkdir -p build "$DIST_DIR" "$src" "$(dirname "$OTELCOL_BIN")" "$(dirname "$out")"
exec 8>build/.lock-dist
flock 8
sed -e "s/^  version: 0\.0\.0-dev\$/  version: $VERSION/" "${recv[@]}" builder-config.yaml >build/builder-config.yaml
grep -qx "  version: $VERSION" build/builder-config.yaml
if [[ -n ${RECEIVER_PROXY:-} ]]; then
  grep -qx "  - gomod: $mod v$VERSION" build/builder-config.yaml
  # the proxy's zip may differ from an earlier release build's of VERSION
  [[ ! -f $DIST_DIR/go.sum ]] || sed -i "\\|^$mod v|d" "$DIST_DIR/go.sum"
fi
$BUILDER --config build/builder-config.yaml --skip-compilation --skip-strict-versioning=false
rm -f "$src"/*.go
cp "$DIST_DIR"/*.go "$DIST_DIR"/go.mod "$DIST_DIR"/go.sum "$src/"
exec 8>&-

words buildflags "$OTELCOL_BUILDFLAGS"
out=$(abs "$out")
cd "$src"
env "${env[@]}" $GO build -buildvcs=false "${buildflags[@]}" \
  -ldflags="$OTELCOL_LDFLAGS -extldflags=$OTELCOL_EXTLDFLAGS" -o "$out" .

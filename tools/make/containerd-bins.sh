#!/usr/bin/env bash
# make containerd-bins: the runtime stack of the e2e and the test cluster's
# node (internal/testing/containerdtest, internal/testing/kubetest;
# docs/runtimes.md) into CONTAINERD_BIN_DIR: containerd, its runc shim
# (containerd-shim-runc-v2) and ctr from github.com/containerd/containerd/v2
# CONTAINERD_MODULE (tools/containerd/go.mod), and runc from
# github.com/opencontainers/runc RUNC_MODULE (tools/runc/go.mod): two
# modules of their own, each resolving every dependency to the version its
# upstream go.mod pins (the two disagree on a few, e.g. golang.org/x/sys),
# and the collector's go.mod is untouched. It checks that each go.mod
# requires the pinned version first.
# - containerd, the shim and ctr: CGO_ENABLED=0, static, with the
#   no_btrfs tag (the btrfs snapshotter needs cgo; the tests use
#   overlayfs).
# - runc: cgo (its nsenter is C, run before the Go runtime starts) with
#   seccomp (the seccomp tag, libseccomp from Debian's libseccomp-dev:
#   containerd hands runc the RuntimeDefault profile the DaemonSet asks
#   for, which a runc without seccomp refuses), linked statically
#   (-extldflags -static, netgo and osusergo, as upstream's `make static`),
#   without libpathrs (a Rust library; go-pathrs falls back to Go).
# All four are static, so the cgroup v2 guest can be given them as it is
# given our binaries. Test infrastructure: compiled without inlining
# (CONTAINERD_GCFLAGS, default all=-l). Timings: docs/runtimes.md.
# Reads GO, CONTAINERD_BIN_DIR, CONTAINERD_GCFLAGS.
source "$(dirname "$0")/lib.sh"
CONTAINERD_MODULE=v2.4.2
RUNC_MODULE=v1.5.3
: "${CONTAINERD_GCFLAGS=all=-l}"
mkdir -p "$CONTAINERD_BIN_DIR"
out=$(cd "$CONTAINERD_BIN_DIR" && pwd)
# pinned DIR MODULE VERSION: DIR's go.mod requires MODULE at VERSION.
pinned() {
  local v
  v=$(cd "$1" && $GO list -m -f '{{.Version}}' "$2")
  if [[ $v != "$3" ]]; then
    echo "$1/go.mod requires $2 $v, not $3" >&2
    exit 1
  fi
}
pinned tools/containerd github.com/containerd/containerd/v2 "$CONTAINERD_MODULE"
pinned tools/runc github.com/opencontainers/runc "$RUNC_MODULE"
pkg=github.com/containerd/containerd/v2
(
  cd tools/containerd
  CGO_ENABLED=0 $GO build -trimpath -gcflags="$CONTAINERD_GCFLAGS" -tags no_btrfs,urfave_cli_no_docs \
    -ldflags="-s -w -X $pkg/version.Version=$CONTAINERD_MODULE -X $pkg/version.Package=$pkg" \
    -o "$out/" $pkg/cmd/containerd $pkg/cmd/containerd-shim-runc-v2 $pkg/cmd/ctr
)
cd tools/runc
CGO_ENABLED=1 $GO build -trimpath -gcflags="$CONTAINERD_GCFLAGS" -tags seccomp,urfave_cli_no_docs,netgo,osusergo \
  -ldflags="-s -w -extldflags -static" \
  -o "$out/runc" github.com/opencontainers/runc

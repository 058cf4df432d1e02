#!/usr/bin/env bash
# make crio-bins: CRI-O for the real-machine tests into CRIO_BIN_DIR: crio
# from github.com/cri-o/cri-o CRIO_MODULE (tools/crio/go.mod, a module of its
# own, so its dependency versions never touch the collector's go.mod) and
# pinns, the small C helper CRI-O pins namespaces with, compiled from the
# pinns/ sources that module carries (static, as upstream's pinns/Makefile),
# and copyimg, CRI-O's test tool that copies an image archive into its storage.
# crio is built with upstream's usual tags: containers_image_openpgp (no
# gpgme), exclude_graphdriver_btrfs and _devicemapper (the tests use
# overlay), seccomp (libseccomp from Debian's libseccomp-dev, as runc's);
# cgo, dynamically linked. conmon (2.1.6) and the CNI plugins are Debian's;
# the OCI runtime is make containerd-bins' runc. Test infrastructure:
# compiled without inlining (CRIO_GCFLAGS, default all=-l).
# Reads GO, CRIO_BIN_DIR, CRIO_GCFLAGS.
source "$(dirname "$0")/lib.sh"
CRIO_MODULE=v1.34.0
: "${CRIO_GCFLAGS=all=-l}"
mod=github.com/cri-o/cri-o
v=$(cd tools/crio && $GO list -m -f '{{.Version}}' $mod)
if [[ $v != "$CRIO_MODULE" ]]; then
  echo "tools/crio/go.mod requires $mod $v, not $CRIO_MODULE" >&2
  exit 1
fi
mkdir -p "$CRIO_BIN_DIR"
out=$(cd "$CRIO_BIN_DIR" && pwd)
(
  cd tools/crio
  CGO_ENABLED=1 $GO build -trimpath -gcflags="$CRIO_GCFLAGS" \
    -tags 'containers_image_openpgp exclude_graphdriver_btrfs exclude_graphdriver_devicemapper seccomp' \
    -ldflags="-s -w" \
    -o "$out/crio" $mod/cmd/crio
  # copyimg: CRI-O's own test tool, which copies an image archive into
  # its storage (criotest imports the test image with it; no registry).
  CGO_ENABLED=1 $GO build -trimpath -gcflags="$CRIO_GCFLAGS" \
    -tags 'containers_image_openpgp exclude_graphdriver_btrfs exclude_graphdriver_devicemapper' \
    -ldflags="-s -w" \
    -o "$out/copyimg" $mod/test/copyimg
)
src=$(cd tools/crio && $GO list -m -f '{{.Dir}}' $mod)/pinns/src
${CC:-gcc} -std=c99 -O3 -Wall -Werror -Wextra -static -o "$out/pinns" "$src"/*.c
"$out/crio" --version | grep -qx "crio version ${CRIO_MODULE#v}" || { "$out/crio" --version >&2; echo "crio-bins: $out/crio is not ${CRIO_MODULE#v}" >&2; exit 1; }
ls -l "$out"

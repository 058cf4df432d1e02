#!/usr/bin/env bash
# build-oci.sh ROOTFS NAME OUT [ENTRYPOINT...] -- [CMD...]
#
# Writes OUT, an OCI image archive (image layout in a tar) with one
# uncompressed layer holding the directory ROOTFS, tagged NAME
# (e.g. docker.io/library/otelcol-containerstats:0.0.0-dev). Needs only
# bash, GNU tar, sha256sum and stat: no docker engine, no registry.
# Import with: ctr -n k8s.io images import OUT
# The archive is reproducible: same ROOTFS, same bytes.
set -euo pipefail

if (($# < 3)); then
  echo "usage: $0 ROOTFS NAME OUT [ENTRYPOINT...] [-- CMD...]" >&2
  exit 2
fi
rootfs=$1 name=$2 out=$3
shift 3
entry=() cmd=()
while (($#)) && [[ $1 != -- ]]; do entry+=("$1"); shift; done
(($#)) && shift
cmd=("$@")

[[ -d $rootfs ]] || { echo "$0: $rootfs is not a directory" >&2; exit 1; }
case $name in
  */*:*) ;;
  *) echo "$0: NAME must be a full reference like docker.io/library/x:tag, got $name" >&2; exit 1 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/blobs/sha256"

# JSON string array from arguments (paths and flags only: no quotes or
# backslashes expected, refuse them rather than escape).
jarr() {
  local s="" a
  for a in "$@"; do
    [[ $a == *[\"\\]* ]] && { echo "$0: unsupported character in $a" >&2; exit 1; }
    s+="${s:+,}\"$a\""
  done
  printf '[%s]' "$s"
}
blob() { # blob FILE: move FILE into blobs/, print "digest size"
  local d s
  d=$(sha256sum "$1" | cut -d' ' -f1)
  s=$(stat -c %s "$1")
  mv "$1" "$work/blobs/sha256/$d"
  echo "$d $s"
}

tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
  --format=posix --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
  -C "$rootfs" -cf "$work/layer" .
read -r layer_digest layer_size < <(blob "$work/layer")

printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":%s,"Cmd":%s,"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created_by":"deploy/image/build-oci.sh"}]}' \
  "$(jarr "${entry[@]}")" "$(jarr "${cmd[@]}")" "$layer_digest" >"$work/config"
read -r config_digest config_size < <(blob "$work/config")

printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
  "$config_digest" "$config_size" "$layer_digest" "$layer_size" >"$work/manifest"
read -r manifest_digest manifest_size < <(blob "$work/manifest")

printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
  "$manifest_digest" "$manifest_size" "$name" "${name##*:}" >"$work/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' >"$work/oci-layout"

mkdir -p "$(dirname "$out")"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work" -cf "$out.tmp" oci-layout index.json blobs
mv "$out.tmp" "$out"
echo "$out: $name manifest sha256:$manifest_digest layer $layer_size bytes"

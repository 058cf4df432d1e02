#!/usr/bin/env bash
# make image: the distribution as one multi-arch OCI image archive
# (linux/amd64 and linux/arm64 in an image index) at IMAGE_ARCHIVE, written
# by tools/ociimage (its own module, go-containerregistry; no docker
# engine): the binaries, the loader and libraries their ELF headers name
# (the host's glibc for amd64, libc6-dev-arm64-cross's for arm64),
# deploy/config.yaml as the default config (/etc/otelcol/config.yaml),
# the CA bundle IMAGE_CA, the LICENSE, an empty /tmp; the OCI annotations
# version, source and revision; user uid 0 (docs/deploy.md); entrypoint
# the binary, command --config the default config. Reproducible: created
# at the commit's time. Import: ctr -n k8s.io images import IMAGE_ARCHIVE.
# Reads GO, VERSION, IMAGE_NAME, IMAGE_ARCHIVE, OTELCOL_BIN, OTELCOL_ARM64_BIN,
# and IMAGE_SOURCE, IMAGE_REVISION (HEAD), IMAGE_CA (defaults below).
source "$(dirname "$0")/lib.sh"
IMAGE_SOURCE=${IMAGE_SOURCE-https://github.com/containerstats/containerstatsreceiver}
IMAGE_REVISION=${IMAGE_REVISION-$(git rev-parse HEAD 2>/dev/null || true)}
IMAGE_CA=${IMAGE_CA-/etc/ssl/certs/ca-certificates.crt}
created=$(git log -1 --format=%ct 2>/dev/null || echo 0)
$GO run -C tools/ociimage . -o "$(abs "$IMAGE_ARCHIVE")" -name "$IMAGE_NAME" \
  -version "$VERSION" -source "$IMAGE_SOURCE" -revision "$IMAGE_REVISION" -created "$created" \
  -config "$PWD/deploy/config.yaml" -ca "$IMAGE_CA" -license "$PWD/LICENSE" -user 0:0 \
  -platform linux/amd64="$(abs "$OTELCOL_BIN")" -platform linux/arm64="$(abs "$OTELCOL_ARM64_BIN")" \
  -- /otelcol-containerstats -- --config /etc/otelcol/config.yaml

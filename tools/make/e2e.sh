#!/usr/bin/env bash
# make e2e: the end-to-end test (test/e2e, build tag REAL_TAGS, without the
# cluster's tests KUBE_E2E_TESTS, make kube-test's; docs/e2e.md): the
# built collector against real workloads, exporting to a real Prometheus
# (Debian's 2.x by remote write and by scraping the prometheus exporter;
# Prometheus 3 over OTLP, make prometheus3) and over OTLP to a second
# collector, and the image of make image. Root; in CI (CI set) a missing
# prerequisite fails it instead of skipping. Reads GO, TEST_BUILDFLAGS,
# GOTESTFLAGS, REAL_TAGS, KUBE_E2E_TESTS, OTELCOL_BIN, OTELCOL_ARM64_BIN, QEMU_AARCH64, IMAGE_ARCHIVE,
# IMAGE_NAME, PROMETHEUS3_BIN, CONTAINERD_BIN_DIR (the runtime the tests
# run: make containerd-bins'; docs/runtimes.md), CRIO_BIN_DIR (make crio-bins':
# TestCRIO), CADVISOR_PEER_BIN
# (standalone cAdvisor, for TestDockerHost and TestPodmanHost), and
# E2E_TIMEOUT (default below).
source "$(dirname "$0")/lib.sh"
words buildflags "$TEST_BUILDFLAGS"
words testflags "$GOTESTFLAGS"
E2E_TIMEOUT=${E2E_TIMEOUT-10m}
$GO vet "${buildflags[@]}" -tags "$REAL_TAGS" ./test/e2e/
OTELCOL_BIN=$(abs "$OTELCOL_BIN") OTELCOL_ARM64_BIN=$(abs "$OTELCOL_ARM64_BIN") QEMU_AARCH64=$QEMU_AARCH64 \
  IMAGE_ARCHIVE=$(abs "$IMAGE_ARCHIVE") IMAGE_NAME=$IMAGE_NAME PROMETHEUS3_BIN=$(abs "$PROMETHEUS3_BIN") \
  CONTAINERD_BIN_DIR=$(abs "$CONTAINERD_BIN_DIR") CRIO_BIN_DIR=$(abs "$CRIO_BIN_DIR") CADVISOR_PEER_BIN=$(abs "$CADVISOR_PEER_BIN") \
  $GO test "${buildflags[@]}" -tags "$REAL_TAGS" -skip "^($KUBE_E2E_TESTS)\$" -count=1 -v -timeout "$E2E_TIMEOUT" "${testflags[@]}" ./test/e2e/

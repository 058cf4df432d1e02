#!/usr/bin/env bash
# make kube-test: the test cluster (internal/testing/kubetest; docs/kube.md).
# First the manifests against its real kube-apiserver (KUBE_TESTS in
# deploy/, build tag REAL_TAGS: deploy/ with strict validation, the
# OpenTelemetry Operator's CRD (OTEL_OPERATOR_CRD) with deploy/operator/, the Helm chart at
# OTEL_COLLECTOR_CHART rendered with deploy/helm/values.yaml against
# deploy/daemonset.yaml) and its node (kubelet, containerd, CNI bridge).
# These packages' clusters start one after the other (-p 1): their ports
# are picked free and bound later, and two clusters starting at once raced
# for one (a CI run's etcd: "bind: address already in use"). Then the
# user's path (test/e2e/cluster_test.go, KUBE_E2E_TESTS): the image of make
# image imported, deploy/ applied, the DaemonSet's pod Ready, a gateway
# collector, Prometheus, workloads, our figures side by side with the
# kubelet's (the table also goes to KUBE_SIDE_BY_SIDE), an in-place resize,
# the pod-resources socket, a rolling update; and README's newcomer path,
# line by line, on a cluster of its own, into Prometheus 3
# (test/e2e/newcomer_test.go; kubectl from make kube-bins). Root; in CI
# (CI set) a missing prerequisite fails a test instead of skipping it.
# The node's runtime is make containerd-bins' (CONTAINERD_BIN_DIR;
# docs/runtimes.md).
# Reads GO, TEST_BUILDFLAGS, GOTESTFLAGS, REAL_TAGS, KUBE_TESTS,
# KUBE_E2E_TESTS, KUBE_BIN_DIR, CONTAINERD_BIN_DIR, IMAGE_ARCHIVE,
# HELM_BIN, PROMETHEUS3_BIN, OTEL_COLLECTOR_CHART, and KUBE_TIMEOUT,
# KUBE_SIDE_BY_SIDE, OTEL_OPERATOR_CRD (defaults below).
source "$(dirname "$0")/lib.sh"
words buildflags "$TEST_BUILDFLAGS"
words testflags "$GOTESTFLAGS"
KUBE_TIMEOUT=${KUBE_TIMEOUT-20m}
KUBE_SIDE_BY_SIDE=${KUBE_SIDE_BY_SIDE-bin/kube-side-by-side.md}
OTEL_OPERATOR_CRD=${OTEL_OPERATOR_CRD-$PWD/../shared/crds/opentelemetry.io_opentelemetrycollectors.yaml}
$GO vet "${buildflags[@]}" -tags "$REAL_TAGS" ./deploy/ ./internal/testing/kubetest/ ./test/e2e/
KUBE_BIN_DIR=$(abs "$KUBE_BIN_DIR") CONTAINERD_BIN_DIR=$(abs "$CONTAINERD_BIN_DIR") HELM_BIN=$(abs "$HELM_BIN") \
  OTEL_COLLECTOR_CHART=$OTEL_COLLECTOR_CHART OTEL_OPERATOR_CRD=$OTEL_OPERATOR_CRD \
  $GO test "${buildflags[@]}" -p 1 -tags "$REAL_TAGS" -count=1 -v -timeout "$KUBE_TIMEOUT" \
  -run "^($KUBE_TESTS)\$" \
  "${testflags[@]}" ./deploy/ ./internal/testing/kubetest/
KUBE_BIN_DIR=$(abs "$KUBE_BIN_DIR") CONTAINERD_BIN_DIR=$(abs "$CONTAINERD_BIN_DIR") IMAGE_ARCHIVE=$(abs "$IMAGE_ARCHIVE") KUBE_SIDE_BY_SIDE=$(abs "$KUBE_SIDE_BY_SIDE") \
  HELM_BIN=$(abs "$HELM_BIN") OTEL_COLLECTOR_CHART=$OTEL_COLLECTOR_CHART PROMETHEUS3_BIN=$(abs "$PROMETHEUS3_BIN") \
  $GO test "${buildflags[@]}" -tags "$REAL_TAGS" -count=1 -v -timeout "$KUBE_TIMEOUT" \
  -run "^($KUBE_E2E_TESTS|TestParseExposition)\$" \
  "${testflags[@]}" ./test/e2e/

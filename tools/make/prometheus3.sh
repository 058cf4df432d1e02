#!/usr/bin/env bash
# make prometheus3: Prometheus 3 (github.com/prometheus/prometheus v0.316.0
# = Prometheus 3.16.0) for the e2e's and the cluster tests' OTLP path
# (docs/e2e.md): its OTLP receiver (/api/v1/otlp/v1/metrics) beside the
# prometheus exporter scraped by Debian's Prometheus 2. Built from
# tools/prometheus3/go.mod (its own module, a `tool` line) after checking
# that it requires PROMETHEUS3_MODULE, API only: no builtinassets tag (the
# web UI's files are not compiled in; the API does not need them),
# remove_all_sd (no cloud service discovery: the tests use static targets)
# and netgo. Compiled without inlining (PROMETHEUS3_GCFLAGS, default
# all=-l: a third less compile time; the tests do not need its speed;
# docs/e2e.md has the timings). Into bin/prometheus3/ so that the binary
# is still called `prometheus` (make leftovers recognises a test's
# Prometheus by that name). Reads GO, PROMETHEUS3_BIN, PROMETHEUS3_GCFLAGS.
source "$(dirname "$0")/lib.sh"
PROMETHEUS3_MODULE=v0.316.0
PROMETHEUS3_VERSION=3.16.0
: "${PROMETHEUS3_GCFLAGS=all=-l}"
out=$(abs "$PROMETHEUS3_BIN")
mkdir -p "$(dirname "$out")"
cd tools/prometheus3
v=$($GO list -m -f '{{.Version}}' github.com/prometheus/prometheus)
if [[ $v != "$PROMETHEUS3_MODULE" ]]; then
  echo "tools/prometheus3/go.mod requires github.com/prometheus/prometheus $v, not $PROMETHEUS3_MODULE" >&2
  exit 1
fi
CGO_ENABLED=0 $GO build -trimpath -gcflags="$PROMETHEUS3_GCFLAGS" -tags remove_all_sd,netgo \
  -ldflags="-s -w -X github.com/prometheus/common/version.Version=$PROMETHEUS3_VERSION" \
  -o "$out" github.com/prometheus/prometheus/cmd/prometheus

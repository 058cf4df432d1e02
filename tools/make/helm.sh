#!/usr/bin/env bash
# make helm: Helm (helm.sh/helm/v3 v3.22.0) into HELM_BIN, built from
# tools/helm/go.mod (its own module, a `tool` line) after checking that it
# requires that version, for the deploy tests that render the official
# OpenTelemetry Collector chart with deploy/helm/values.yaml
# (deploy/helm_test.go, tag kube; docs/deploy.md, "Helm: the official
# chart"). The ldflags are upstream's Makefile's: the version, and the
# Kubernetes version `helm template` assumes (1.<its client-go's minor>, as
# upstream computes it; the tests pass --kube-version anyway). Test
# infrastructure: compiled without inlining (HELM_GCFLAGS, default
# all=-l). The chart itself is not built: make kube-test reads a copy of
# chart OTEL_COLLECTOR_CHART_VERSION (the Makefile's) at
# OTEL_COLLECTOR_CHART (default ../shared/charts/opentelemetry-collector;
# elsewhere `helm pull open-telemetry/opentelemetry-collector --version
# <it> --untar`), and the Operator's CRD at OTEL_OPERATOR_CRD.
# Reads GO, HELM_BIN, HELM_GCFLAGS.
source "$(dirname "$0")/lib.sh"
HELM_MODULE=v3.22.0
: "${HELM_GCFLAGS=all=-l}"
mkdir -p "$(dirname "$HELM_BIN")"
out=$(cd "$(dirname "$HELM_BIN")" && pwd)/$(basename "$HELM_BIN")
cd tools/helm
v=$($GO list -m -f '{{.Version}}' helm.sh/helm/v3)
if [[ $v != "$HELM_MODULE" ]]; then
  echo "tools/helm/go.mod requires helm.sh/helm/v3 $v, not $HELM_MODULE" >&2
  exit 1
fi
kminor=$($GO list -m -f '{{.Version}}' k8s.io/client-go | cut -d. -f2)
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_MODULE -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
ldflags+=" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$kminor"
ldflags+=" -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$kminor"
CGO_ENABLED=0 $GO build -trimpath -gcflags="$HELM_GCFLAGS" -ldflags="$ldflags" -o "$out" helm.sh/helm/v3/cmd/helm

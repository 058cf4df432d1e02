#!/usr/bin/env bash
# make soak: TestSoakChurn (test/integration, real-machine tag; root;
# containerd, runc, busybox-static; docs/soak.md) for SOAK_DURATION (default
# 5m) under container churn on a real containerd, within SOAK_TIMEOUT
# (default 60m): make soak SOAK_DURATION=10m. A 30 s form runs in make race.
# Reads GO, REAL_TAGS.
source "$(dirname "$0")/lib.sh"
SOAK_DURATION=${SOAK_DURATION-5m} $GO test -tags "$REAL_TAGS" -count=1 -run '^TestSoakChurn$' -timeout "${SOAK_TIMEOUT-60m}" -v ./test/integration/

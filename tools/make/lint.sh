#!/usr/bin/env bash
# make lint: golangci-lint (LINT: v2.15.0, pinned in tools/lint/go.mod) with
# .golangci.yml (opentelemetry-collector-contrib's configuration, this
# module's import path) over the root module, once per set of build tags
# that compile together, so the real-machine tests are linted too:
#   - the default tags (what `go build ./...` and `make unit` see);
#   - realmachine,v2guest (the real-machine tier, and the v2 guest's test
#     binary);
#   - vmnode, over ./test/v2node/ and ./internal/testing/vmnode/ (the host
#     side of the v2 node redeclares what the v2guest side declares, so it
#     cannot join the set above).
# Every run goes on after a failed one and lists all it found (no cap per
# linter or per message); the script fails if any found something. LINTFLAGS: extra flags for each run (e.g. --fix, or
# --new-from-rev=main). golangci-lint's cache is GOLANGCI_LINT_CACHE
# (default ~/.cache/golangci-lint).
# Reads GO, LINT, LINTFLAGS.
source "$(dirname "$0")/lib.sh"
words lint "$LINT"
words flags "${LINTFLAGS:-}"
rc=0
run() { # run TAGS PACKAGES...
  local tags=$1; shift
  echo "== golangci-lint run --build-tags '${tags}' $*"
  "${lint[@]}" run --max-issues-per-linter=0 --max-same-issues=0 --build-tags "$tags" "${flags[@]}" "$@" || rc=1
}
run "" ./...
run realmachine,v2guest ./...
run vmnode ./test/v2node/ ./internal/testing/vmnode/
exit "$rc"

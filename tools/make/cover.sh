#!/usr/bin/env bash
# make cover: statement coverage of the product packages (the root,
# receiver/*, internal/* but internal/testing/* and internal/metadatatest),
# the unit tier and the real-machine tier measured together: go test -cover
# -coverpkg=<product packages>, each tier's raw counters into its own
# directory under COVER_DIR (-test.gocoverdir, and GOCOVERDIR for the
# processes a test starts from its own binary), merged by go tool covdata.
# It prints one table, product package -> % of statements (unit tier alone,
# both tiers), writes it to COVER_DIR/table.md and the merged profile to
# COVER_DIR/cover.txt (go tool cover -func or -html reads it).
# - the unit tier: go test ./..., as any user runs it;
# - the real-machine tier (COVER_REAL=1, the default; 0 skips it):
#   go test -tags REAL_TAGS COVER_REAL_PKGS (default: those of make race's
#   RACE_PKGS that REAL_TAGS adds files to; their unit tests run again
#   beside the real-machine ones, the other packages' tests are the unit
#   tier's), without KUBE_TESTS, as make race: root,
#   CONTAINERD_BIN_DIR (make containerd-bins) for the containerd tests,
#   and a missing prerequisite skips a test (fails it under CI). The
#   end-to-end, cluster and VM tiers run built binaries, not test
#   binaries: not measured here.
# Not in make test. Reads GO, REAL_TAGS, RACE_PKGS, KUBE_TESTS,
# CONTAINERD_BIN_DIR, GOTESTFLAGS;
# COVER_DIR (build/cover), COVER_REAL, COVER_REAL_PKGS, COVER_TIMEOUT (30m).
source "$(dirname "$0")/lib.sh"
: "${COVER_DIR=build/cover}" "${COVER_REAL=1}" "${COVER_TIMEOUT=30m}"
words testflags "${GOTESTFLAGS-}"
mod=$($GO list -m)
files='{{.ImportPath}} {{.GoFiles}} {{.TestGoFiles}} {{.XTestGoFiles}}'
if [[ -z ${COVER_REAL_PKGS-} ]]; then
  COVER_REAL_PKGS=$(LC_ALL=C comm -13 <($GO list -f "$files" ./... | LC_ALL=C sort) \
    <($GO list -tags "$REAL_TAGS" -f "$files" ${RACE_PKGS:-./...} | LC_ALL=C sort) | cut -d' ' -f1 | tr '\n' ' ')
fi
words realpkgs "$COVER_REAL_PKGS"
mapfile -t product < <($GO list ./... | grep -Ev "^$mod/(internal/testing/|internal/metadatatest\$|test/|deploy\$)")
coverpkg=$(IFS=,; printf %s "${product[*]}")
dir=$(abs "$COVER_DIR")
rm -rf "$dir"
mkdir -p "$dir/unit" "$dir/real"
# A failing test fails the step, after the table of what was measured.
rc=0
echo "== unit tier: $GO test -cover ./..." >&2
GOCOVERDIR="$dir/unit" $GO test -cover -coverpkg="$coverpkg" -timeout "$COVER_TIMEOUT" "${testflags[@]}" ./... \
  -args -test.gocoverdir="$dir/unit" >"$dir/unit.log" 2>&1 || rc=$?
grep -E '^(FAIL|---|ok|panic)' "$dir/unit.log" | grep -v '^ok' >&2 || true
inputs=$dir/unit
if [[ $COVER_REAL == 1 ]]; then
  echo "== real-machine tier: $GO test -tags $REAL_TAGS -cover ${realpkgs[*]}" >&2
  CGO_ENABLED=1 CONTAINERD_BIN_DIR="$(abs "${CONTAINERD_BIN_DIR:-bin/containerd}")" GOCOVERDIR="$dir/real" \
    $GO test -tags "$REAL_TAGS" ${KUBE_TESTS:+-skip "^($KUBE_TESTS)\$"} -cover -coverpkg="$coverpkg" -timeout "$COVER_TIMEOUT" "${testflags[@]}" "${realpkgs[@]}" \
    -args -test.gocoverdir="$dir/real" >"$dir/real.log" 2>&1 || rc=$?
  grep -E '^(FAIL|---|panic)' "$dir/real.log" >&2 || true
  inputs+=,$dir/real
fi
# percent NAME INPUTS: "package percent" lines of INPUTS' counters, into NAME.
percent() {
  $GO tool covdata percent -i="$2" -pkg="$coverpkg" |
    awk '$1 ~ /\// && /coverage:/ { p=$3; sub(/%/, "", p); print $1, p }' | LC_ALL=C sort >"$dir/$1"
}
percent unit.pct "$dir/unit"
percent all.pct "$inputs"
$GO tool covdata textfmt -i="$inputs" -pkg="$coverpkg" -o "$dir/cover.txt"
{
  if [[ $COVER_REAL == 1 ]]; then
    echo "| package | unit % | unit + real machine % |"
    echo "|---|---:|---:|"
  else
    echo "| package | unit % |"
    echo "|---|---:|"
  fi
  LC_ALL=C join -a 2 -e - -o 0,1.2,2.2 "$dir/unit.pct" "$dir/all.pct" | while read -r pkg u a; do
    name=${pkg#"$mod"}
    name=${name#/}
    if [[ $COVER_REAL == 1 ]]; then
      echo "| ${name:-. (root)} | $u | $a |"
    else
      echo "| ${name:-. (root)} | $u |"
    fi
  done
  total=$($GO tool cover -func="$dir/cover.txt" | awk '/^total:/ { print $3 }')
  if [[ $COVER_REAL == 1 ]]; then echo "| total | | $total |"; else echo "| total | $total |"; fi
} | tee "$dir/table.md"
exit "$rc"

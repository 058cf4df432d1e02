#!/usr/bin/env bash
# make mutants: the mutation score of the core packages at the unit tier.
# gremlins (MUTANTS: v0.6.0, pinned in tools/mutants/go.mod) mutates each
# non-test Go file of each directory of MUTANTS_PKGS and its subdirectories
# (comparisons, arithmetic, increments, negations: gremlins' default
# mutators) and runs that package's tests (plain go test: no build tags, no
# root) once per mutant. A mutant is killed when a test fails, lived when
# they pass, not covered when no test runs its line (not run), timed out
# past MUTANTS_TIMEOUT_COEFFICIENT times the package's first test run, not
# viable when it does not compile.
# gremlins copies the module once per worker, so it runs on a copy of the
# files git tracks or would track (not bin/ or build/), under
# MUTANTS_DIR/src (removed at the end). Per package (directory name with / as -) it writes
# MUTANTS_DIR/<pkg>.log (every mutant's status and position) and .json
# (gremlins' report), then prints one table (package, mutants, killed,
# lived, not covered, timed out, not viable, efficacy = killed /
# (killed + lived), mutant coverage = (killed + lived + timed out) /
# (all but not viable), minutes) into MUTANTS_DIR/table.md and the lived
# mutants (package file:line:column MUTATOR) into MUTANTS_DIR/lived.txt.
# MUTANTS_FILES, a regular expression on paths from the repository root
# (e.g. 'receiver/scrape/(memory|cpu)\.go'), mutates only the files it
# matches; MUTANTS_GOFLAGS is added to GOFLAGS for every go test (e.g.
# -skip=^TestHeap). Not in make test (docs/tests.md: the score and its
# run time). Reads GO, MUTANTS; MUTANTS_PKGS (internal/calc
# internal/cgroupfs internal/identity receiver/scrape), MUTANTS_FILES,
# MUTANTS_DIR (build/mutants), MUTANTS_WORKERS (1),
# MUTANTS_TIMEOUT_COEFFICIENT (5), MUTANTS_GOFLAGS, MUTANTS_FLAGS (extra
# gremlins flags).
source "$(dirname "$0")/lib.sh"
: "${MUTANTS_PKGS:=internal/calc internal/cgroupfs internal/identity receiver/scrape}"
: "${MUTANTS_DIR:=build/mutants}" "${MUTANTS_WORKERS:=1}" "${MUTANTS_TIMEOUT_COEFFICIENT:=5}"
: "${MUTANTS_FILES:=}" "${MUTANTS_GOFLAGS:=}" "${MUTANTS_FLAGS:=}"
words mutants "$MUTANTS"
words pkgs "$MUTANTS_PKGS"
words flags "$MUTANTS_FLAGS"
dir=$(abs "$MUTANTS_DIR")
src=$dir/src
rm -rf "$dir"
mkdir -p "$src"
trap 'rm -rf "$src"' EXIT
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$src"
# -count=1: gremlins times the first (coverage) run to set the mutants'
# timeout; a cached result would time every mutant out.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-count=1${MUTANTS_GOFLAGS:+ $MUTANTS_GOFLAGS}"
rc=0
rows=()
: >"$dir/lived.txt"
for pkg in "${pkgs[@]}"; do
  pkg=${pkg#./}
  pkg=${pkg%/}
  name=${pkg//\//-}
  excl=()
  if [[ -n $MUTANTS_FILES ]]; then
    while IFS= read -r f; do
      [[ $f =~ $MUTANTS_FILES ]] && continue
      rel=${f#"$pkg/"}
      excl+=(--exclude-files "^${rel//./\\.}\$")
    done < <(cd "$src" && find "$pkg" -name '*.go' ! -name '*_test.go' | LC_ALL=C sort)
  fi
  echo "== gremlins unleash $pkg${MUTANTS_FILES:+ (files matching $MUTANTS_FILES)}" >&2
  start=$(date +%s)
  "${mutants[@]}" unleash --workers "$MUTANTS_WORKERS" --timeout-coefficient "$MUTANTS_TIMEOUT_COEFFICIENT" \
    --output "$dir/$name.json" "${excl[@]}" "${flags[@]}" "$src/$pkg" >"$dir/$name.log" 2>&1 || rc=$?
  secs=$(($(date +%s) - start))
  tail -n 4 "$dir/$name.log" >&2
  count() { grep -cE "^ *$1 " "$dir/$name.log" || true; }
  k=$(count KILLED) l=$(count LIVED) n=$(count 'NOT COVERED') t=$(count 'TIMED OUT') v=$(count 'NOT VIABLE')
  all=$((k + l + n + t))
  eff=$(awk -v k="$k" -v l="$l" 'BEGIN { if (k + l) printf "%.1f", 100 * k / (k + l); else print "-" }')
  cov=$(awk -v c="$((k + l + t))" -v a="$all" 'BEGIN { if (a) printf "%.1f", 100 * c / a; else print "-" }')
  rows+=("| $pkg | $all | $k | $l | $n | $t | $v | $eff | $cov | $(awk -v s="$secs" 'BEGIN { printf "%.1f", s / 60 }') |")
  sed -nE "s|^ *LIVED ([A-Z_]+) at (.*)\$|$pkg/\\2 \\1|p" "$dir/$name.log" >>"$dir/lived.txt"
done
{
  echo "| package | mutants | killed | lived | not covered | timed out | not viable | efficacy % | mutant coverage % | min |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
} | tee "$dir/table.md"
echo "== lived mutants ($dir/lived.txt):"
cat "$dir/lived.txt"
exit "$rc"

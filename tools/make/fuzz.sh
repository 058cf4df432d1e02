#!/usr/bin/env bash
# make fuzz, fuzz-smoke and fuzz-build: every Fuzz target of every package
# for FUZZTIME each (make fuzz, default 30s: make fuzz FUZZTIME=5m), FUZZ_SMOKE
# (make fuzz-smoke, default 2000x, what make test runs) or once (make
# fuzz-build, which compiles the instrumented test binaries that fuzz-smoke
# then finds in the Go cache: make test's background).
#   tools/make/fuzz.sh fuzz|fuzz-smoke|fuzz-build
# fuzz-smoke's is a count, not a duration: with a duration Go's fuzz
# coordinator races its own deadline and, on a loaded machine, fails a
# target with a bare "context deadline exceeded" and no failing input (CI
# saw it on FuzzSplitImage). The seed corpora also run as plain tests.
# The targets are found without compiling: go list names the test files
# this build selects (build tags count), and their `func FuzzX(` lines name
# the targets (`go test -list` would build and link a plain test binary of
# every package, a compile nothing else in make test uses). Reads GO.
source "$(dirname "$0")/lib.sh"
case ${1-} in
  fuzz) fuzztime=${FUZZTIME-30s} ;;
  fuzz-smoke) fuzztime=${FUZZ_SMOKE-2000x} ;;
  fuzz-build) fuzztime=1x ;;
  *) echo "usage: fuzz.sh fuzz|fuzz-smoke|fuzz-build" >&2; exit 2 ;;
esac
for pkg in $(grep -rl --include='*_test.go' --exclude-dir=tools --exclude-dir=build --exclude-dir=bin '^func Fuzz' . | xargs -n1 dirname | sort -u); do
  files=$($GO list -f '{{range .TestGoFiles}}{{$.Dir}}/{{.}} {{end}}{{range .XTestGoFiles}}{{$.Dir}}/{{.}} {{end}}' "$pkg")
  # shellcheck disable=SC2086 # files is a list of paths
  for f in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $files | sort -u); do
    echo "=== $f ($pkg, $fuzztime)"
    $GO test -run '^$' -fuzz "^$f\$" -fuzztime "$fuzztime" "$pkg"
  done
done

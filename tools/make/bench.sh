#!/usr/bin/env bash
# make bench: the benchmarks of BENCH_PKGS with the real-machine tag (the
# scrape against the raw-read floor at N=10..5000 per layout, per-stage
# ones; BENCH_MAX_N caps the sizes), BENCHTIME each, into build/bench.out,
# and the table BENCHMARKS.md records (internal/testing/benchtable) into
# build/bench-table.md. Reads GO, REAL_TAGS.
source "$(dirname "$0")/lib.sh"
: "${BENCHTIME=2s}" "${BENCH_PKGS=./receiver/scrape ./internal/cgroupfs ./internal/procfs ./internal/rawfile}"
words pkgs "$BENCH_PKGS"
mkdir -p build
$GO test -tags "$REAL_TAGS" -run '^$' -bench . -benchmem -benchtime "$BENCHTIME" -timeout 90m "${pkgs[@]}" | tee build/bench.out
$GO run ./internal/testing/benchtable <build/bench.out | tee build/bench-table.md

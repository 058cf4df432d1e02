#!/usr/bin/env bash
# make bench-peer: our collector against cAdvisor on the same real cgroups
# (test/peer, build tag REAL_TAGS, TestPeer; root; BENCHMARKS.md): N real container
# cgroups with processes, cAdvisor as the kubelet embeds it
# (tools/cadvisorpeer, its own module, version pinned there) and the
# distribution side by side (OTLP into Prometheus 3 too), CPU ticks and RSS
# of each process, under each condition of BENCH_PEER_CONDITIONS: quiet
# (nothing else runs) and loaded (the benchmark's own CPU hogs,
# BENCH_PEER_LOAD_FACTOR busy threads per core). Each size waits up to
# BENCH_PEER_QUIET_WAIT for the 1-min load to drop below
# BENCH_PEER_QUIET_LOAD, and fails when the window's foreign CPU (what the
# benchmark did not run) exceeds BENCH_PEER_FOREIGN_MAX cores. Prints one
# table per condition and writes build/bench-peer.md.
#   make bench-peer BENCH_PEER_N=50 BENCH_PEER_WARMUP=20s BENCH_PEER_DURATION=30s
# BENCH_PEER_PERF=<dir> also records a perf profile of every process.
# A/B: another collector build and/or environment run collection-only beside
# the others, e.g. BENCH_PEER_BASELINE_BIN=bin/otelcol-old or
# BENCH_PEER_BASELINE_BIN=bin/otelcol-containerstats BENCH_PEER_BASELINE_ENV=GOGC=50
# The defaults are below; make passes a BENCH_PEER_* given on its command
# line (or in the environment) through. Also reads GO, REAL_TAGS, OTELCOL_BIN,
# CADVISOR_PEER_BIN, PROMETHEUS3_BIN.
source "$(dirname "$0")/lib.sh"
# The go test gets every BENCH_PEER_* (as the recipe did), the vet none.
peer=()
for kv in N=50,200,500 WARMUP=30s DURATION=120s INTERVAL=10s PERF= DENSE= CONDITIONS=quiet,loaded \
  QUIET_LOAD=1.0 QUIET_WAIT=5m FOREIGN_MAX=0.1 LOAD_FACTOR=4 BASELINE_ENV= OURS_ENV=; do
  v=BENCH_PEER_${kv%%=*}
  peer+=("$v=${!v-${kv#*=}}")
done
baseline=${BENCH_PEER_BASELINE_BIN-}
peer+=("BENCH_PEER_BASELINE_BIN=${baseline:+$(abs "$baseline")}" "BENCH_PEER_OUT=$PWD/build/bench-peer.md")
$GO vet -tags "$REAL_TAGS" ./test/peer/
env "${peer[@]}" OTELCOL_BIN="$(abs "$OTELCOL_BIN")" CADVISOR_PEER_BIN="$(abs "$CADVISOR_PEER_BIN")" \
  PROMETHEUS3_BIN="$(abs "$PROMETHEUS3_BIN")" \
  $GO test -tags "$REAL_TAGS" -count=1 -v -run '^TestPeer$' -timeout 180m ./test/peer/

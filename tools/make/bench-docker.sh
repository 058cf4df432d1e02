#!/usr/bin/env bash
# make bench-docker: on a Docker host, our collector against cAdvisor
# standalone (its own binary's defaults: housekeeping 1 s, dynamic up to
# 60 s, its default metric set, every cgroup; tools/cadvisorpeer
# -standalone) and against contrib's dockerstats receiver's Engine API
# traffic, with the engine's own CPU counted (test/peer TestDockerHost,
# build tag REAL_TAGS; root; BENCHMARKS.md "On a Docker host"). N real
# containers of a private dockerd (Debian's docker.io), one in ten busy;
# per size three windows: the engine alone, ours beside cAdvisor, ours
# beside the dockerstats calls. Waits for a quiet machine (BENCH_PEER_QUIET_*)
# and fails a window whose foreign CPU exceeds BENCH_PEER_FOREIGN_MAX.
# Prints the table and writes build/bench-docker.md.
#   make bench-docker BENCH_DOCKER_N=20 BENCH_DOCKER_WARMUP=20s BENCH_DOCKER_DURATION=30s BENCH_DOCKER_IDLE=20s
# Also reads GO, REAL_TAGS, OTELCOL_BIN, CADVISOR_PEER_BIN.
source "$(dirname "$0")/lib.sh"
vars=()
for kv in DOCKER_N=50,200 DOCKER_WARMUP=150s DOCKER_DURATION=180s DOCKER_IDLE=60s DOCKER_REPLAY_WARMUP=30s \
  PEER_INTERVAL=10s PEER_QUIET_LOAD=1.0 PEER_QUIET_WAIT=5m PEER_FOREIGN_MAX=0.1; do
  v=BENCH_${kv%%=*}
  vars+=("$v=${!v-${kv#*=}}")
done
$GO vet -tags "$REAL_TAGS" ./test/peer/
env "${vars[@]}" BENCH_PEER_CONDITIONS=quiet BENCH_DOCKER_OUT="$PWD/build/bench-docker.md" \
  OTELCOL_BIN="$(abs "$OTELCOL_BIN")" CADVISOR_PEER_BIN="$(abs "$CADVISOR_PEER_BIN")" \
  $GO test -tags "$REAL_TAGS" -count=1 -v -run '^TestDockerHost$' -timeout 120m ./test/peer/

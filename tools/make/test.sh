#!/usr/bin/env bash
# make test: the steps CI checks, in order, with the background builds
# beside them, then the leftover check. Called by the Makefile as
#   tools/make/test.sh GO=go SUBMAKE=make TEST_STEPS='...' TEST_BG='...'
# (make test TEST_STEPS='vet race' runs those steps only; TEST_BG= runs
# everything in its step). docs/ci.md has the why.
#
# - Each step is `make <step>`. The first failing step ends the steps
#   (this script then exits 2), as make would; `make leftovers` runs after
#   them whatever happened (a failed step, a test timeout) and fails the
#   run (exit 1) when a test left a process, cgroup or mount behind. Either
#   way make test fails (make's own exit status, 2).
# - TEST_BG: builds and checks that depend on no step before them. They
#   start at once, one after the other, as `nice -n 19 ionice -c 3 make
#   <target>`, output to build/test-background.log, so they use the CPU
#   the steps leave idle. They run in a process group of their own
#   (set -m) inside this session, killed as one when the steps end; not a
#   new session (setsid): under the kernel's autogroups
#   (sched_autogroup_enabled) a new session is a scheduling group of its
#   own and takes half the CPU whatever its nice value. Each of their
#   targets holds build/.lock-<target> for its whole recipe (the
#   Makefile's LOCK; fuzz, fuzz-smoke and fuzz-build share
#   build/.lock-fuzz), which its step takes too: a step whose target still
#   runs in the background waits, then runs it again on a warm Go cache
#   (seconds). A background failure is only logged; its step runs the
#   target again and fails there with its output.
# - At the end: each background target's end, then each step's wall time
#   and the core-seconds the machine left idle during it (/proc/stat), so
#   a slow run names its slow step and says whether the cores were busy.
#   A step's time includes the prerequisites it builds and any wait for
#   its background run.
source "$(dirname "$0")/lib.sh"
MAKE=${SUBMAKE:-make}
read -ra steps <<<"${TEST_STEPS-}"
read -ra bgs <<<"${TEST_BG:-}"

rc=0 times=() t0=$SECONDS bg=
hz=$(getconf CLK_TCK)
idle() { awk -v hz="$hz" '/^cpu /{printf "%d", ($5 + $6) / hz}' /proc/stat; }
mkdir -p build
if ((${#bgs[@]})); then
  set -m # its own process group (killed as one below), in this session
  (
    for s in "${bgs[@]}"; do
      t=$SECONDS
      nice -n 19 ionice -c 3 "$MAKE" --no-print-directory "$s" || echo "background: $s failed (its step runs it again)"
      echo "background: $s done after $((SECONDS - t)) s, at $SECONDS s"
    done
  ) >build/test-background.log 2>&1 </dev/null &
  bg=$!
  set +m
  trap 'kill -TERM -- -$bg 2>/dev/null || true' EXIT
  echo "background (build/test-background.log): ${bgs[*]}"
fi
for s in "${steps[@]}"; do
  t=$SECONDS i=$(idle)
  if ! "$MAKE" --no-print-directory "$s"; then
    rc=2 times+=("$(printf '%5ds %6d  %s (failed)' $((SECONDS - t)) $(($(idle) - i)) "$s")")
    break
  fi
  times+=("$(printf '%5ds %6d  %s' $((SECONDS - t)) $(($(idle) - i)) "$s")")
done
if [[ -n $bg ]]; then
  kill -TERM -- -"$bg" 2>/dev/null || true
  wait "$bg" 2>/dev/null || true
  printf '\n=== make test: background (build/test-background.log)\n'
  grep '^background:' build/test-background.log || true
fi
t=$SECONDS i=$(idle)
"$MAKE" --no-print-directory leftovers || rc=1
times+=("$(printf '%5ds %6d  %s' $((SECONDS - t)) $(($(idle) - i)) leftovers)")
printf '\n=== make test: step timings (wall, idle core-seconds)\n'
printf '%s\n' "${times[@]}"
printf '%5ds  total, exit %d\n' $((SECONDS - t0)) "$rc"
exit "$rc"

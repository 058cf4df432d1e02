# Build, code generation and tests for the container_stats receiver and the
# otelcol-containerstats collector distribution.
#
#   make run     build the collector and run it with config/local.yaml
#   make test    everything CI checks (generated code and dashboards, vet,
#                the unit tests under the race detector, the distribution
#                build, the end-to-end test, the real cluster, the fuzz
#                smoke, the no-cgo type check and tests, the darwin,
#                windows and linux/arm64 type check, the amd64 and arm64
#                binaries against the golden files, the cgroup v2 guest),
#                then the leftover check (make leftovers), which runs even
#                when a step failed
#   make otelcol-arm64  the collector for linux/arm64 (cgo, Debian's cross
#                toolchain); make arch-test runs both binaries (arm64 under
#                qemu-user) on the fixtures against the golden files
#   make unit    the unit tests without the race detector (quicker)
#   make dashboards  the Grafana dashboards (dashboards/, tools/dashboards)
#   make image   the collector as an OCI image archive (no docker engine)
#   make e2e     the end-to-end test (root; containerd, runc, prometheus;
#                Prometheus 3 built by make prometheus3)
#   make gpu-check  our GPU figures next to nvidia-smi's (needs a GPU)
#   make bench-peer  the collector against cAdvisor on real cgroups (root)
#   make kube-bins   etcd, the control plane, the kubelet and kubectl
#                (k8s.io/kubernetes v1.34.4) into bin/kube; make kube-test
#                deploy/ on that real cluster, README's newcomer path too
#   make helm    helm v3.22.0 into bin/helm (the chart's test, in kube-test)
#   make v2-test the receiver on a real cgroup v2 + systemd node: a QEMU
#                guest (root; qemu-system-x86, mmdebstrap; docs/v2-node.md)

# Each recipe runs as ONE bash script with -e: a failing line stops it, and
# `cd` or variables carry over to the following lines.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.ONESHELL:
.DEFAULT_GOAL := otelcol

GO ?= go
# go-nvml's headers mark many NVML calls deprecated: keep the build log readable.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

# Tools pinned in tools/go.mod: ocb (cmd/builder) v0.165.0, the collector
# release's; mdatagen v0.159.0, the newest the module proxy serves whole
# (CONTRIBUTING.md, "Versions").
TOOL     := $(GO) tool -modfile=$(CURDIR)/tools/go.mod
MDATAGEN := $(TOOL) mdatagen
BUILDER  := $(TOOL) builder
# tools/crosscheck (type checks from source for another GOOS or without cgo:
# make cross, make nocgo), a package of the tools module.
CROSSCHECK := $(GO) run -C "$(CURDIR)/tools" ./crosscheck

DIST_DIR    := build/otelcol
OTELCOL_BIN := bin/otelcol-containerstats
# The distribution for linux/arm64 (make otelcol-arm64): cgo through
# Debian's cross toolchain (gcc-aarch64-linux-gnu, libc6-dev-arm64-cross).
OTELCOL_ARM64_BIN := bin/otelcol-containerstats-arm64
CC_ARM64          ?= aarch64-linux-gnu-gcc
# Flags for the collector's `go build` (ocb's defaults). Override to build
# differently, e.g. make otelcol OTELCOL_BUILDFLAGS='-race -trimpath'
OTELCOL_BUILDFLAGS ?= -trimpath
OTELCOL_LDFLAGS    ?= -s -w
# NVML's symbols are bound lazily, on every architecture: go-nvml links
# with them undefined and dlopen()s libnvidia-ml.so.1 only when GPU
# metrics start, so a node without the NVIDIA library must not resolve
# them at load. -z lazy is the default of Debian's linkers but not of every
# toolchain (hardened ones default to -z now), and go-nvml leaves it to the
# application (its PR #131); test/archgolden checks each binary's dynamic
# section and relocations, and starts it without the library.
OTELCOL_EXTLDFLAGS := -Wl,-z,lazy
RUN_CONFIG ?= config/local.yaml
# First line of a build recipe that `make test` may also run in the
# background (TEST_BG): holds build/.lock-<target> for the rest of the
# recipe, so two invocations of one target run one after the other.
LOCK = mkdir -p "$(CURDIR)/build" && exec 9>"$(CURDIR)/build/.lock-$@" && flock 9

# `make image`: the distribution as one multi-arch OCI image archive
# (linux/amd64 and linux/arm64 in an image index) written by tools/ociimage
# (its own module, go-containerregistry): the binary, its glibc, the
# default config, Debian's CA bundle, the LICENSE, the OCI annotations
# version/source/revision, user uid 0 (docs/deploy.md). Import:
# ctr -n k8s.io images import $(IMAGE_ARCHIVE) (the node's platform).
IMAGE_NAME     ?= docker.io/library/otelcol-containerstats:$(VERSION)
IMAGE_ARCHIVE  ?= bin/otelcol-containerstats-image.tar
IMAGE_SOURCE   ?= https://github.com/containerstats/containerstatsreceiver
IMAGE_REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
IMAGE_CA       ?= /etc/ssl/certs/ca-certificates.crt
E2E_TIMEOUT   ?= 10m

TEST_TIMEOUT ?= 20m
RACE_TIMEOUT ?= 30m
# Extra flags for both test runs, e.g. make unit GOTESTFLAGS='-run TestX -v'
GOTESTFLAGS ?=
# Packages run under the race detector. All of them for now; narrow this if
# the race run ever gets too slow for CI.
RACE_PKGS ?= ./...
# Build flags of vet and of the real-machine steps' test binaries (e2e,
# kube-test, v2-test): race-instrumented like the race step's, so a package
# is compiled once for all of them, not once plain and once with -race
# (go vet accepts -race and compiles the packages it checks against that
# way). Needs cgo (gcc); TEST_BUILDFLAGS= builds them plain.
TEST_BUILDFLAGS ?= -race
# The build tag of the packages' real-machine tests (real cgroups and
# runtimes, root): `go test ./...` leaves them out; vet, race, bench and
# soak take them in.
REAL_TAGS := realmachine

# Pathspecs of what mdatagen writes (quoted: git matches them, so a deleted
# file counts too); check-generated fails if `generate` changes any of them.
GENERATED := 'internal/metadata' 'documentation.md' 'generated_*.go'

.PHONY: all generate check-generated dashboards check-dashboards vet unit race nocgo cross fuzz fuzz-smoke fuzz-build v2guest-build v2guest-image bench bench-peer cadvisor-peer soak test test-steps leftovers otelcol otelcol-arm64 arch-test image e2e run clean gpu-check

# mdatagen names the package of the generated tests after the base name of
# metadata.yaml's directory (filepath.Base, symlinks not resolved), so run it
# through a symlink named containerstatsreceiver: the output then does not
# depend on what the clone's directory is called.
generate:
	tmp=$$(mktemp -d)
	trap 'rm -rf "$$tmp"' EXIT
	ln -s "$(CURDIR)" "$$tmp/containerstatsreceiver"
	cd "$$tmp/containerstatsreceiver"
	$(MDATAGEN) metadata.yaml

check-generated: generate
	if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	  echo "check-generated: not a git work tree, cannot compare generated files" >&2
	  exit 1
	fi
	changes=$$(git status --porcelain -- $(GENERATED))
	if [ -n "$$changes" ]; then
	  echo "Generated files are out of date with metadata.yaml (run 'make generate' and commit):" >&2
	  echo "$$changes" >&2
	  git --no-pager diff --stat -- $(GENERATED) >&2
	  exit 1
	fi

# The Grafana dashboards we ship (dashboards/*.json), the PromQL for
# kubernetes-mixin-otel users (dashboards/mixin/) and its table in
# docs/dashboards.md, generated by tools/dashboards (its own module, on the
# Grafana Foundation SDK); check-dashboards fails when the committed files
# differ from the generator's output (docs/dashboards.md).
dashboards:
	cd tools/dashboards
	$(GO) vet .
	$(GO) run . -root "$(CURDIR)"

check-dashboards:
	cd tools/dashboards
	$(GO) vet .
	$(GO) run . -root "$(CURDIR)" -check

vet:
	$(GO) vet $(TEST_BUILDFLAGS) -tags $(REAL_TAGS) ./...
	$(GO) vet $(TEST_BUILDFLAGS) -tags peerbench ./test/peer/

# The unit tier: no root, no real machine (`go test ./...` as any user).
unit:
	$(GO) test -timeout $(TEST_TIMEOUT) $(GOTESTFLAGS) ./...

# The unit tests and the real-machine tests of the packages (build tag
# realmachine: real cgroups, containerd, the soak; root), under the race
# detector: what make test runs.
race:
	CGO_ENABLED=1 $(GO) test -race -tags $(REAL_TAGS) -timeout $(RACE_TIMEOUT) $(GOTESTFLAGS) $(RACE_PKGS)

# Without cgo (go-nvml needs it) GPU metrics are off (internal/gpu/nocgo.go):
# tools/crosscheck type-checks every package of the module and its tests
# from source that way (CGO_ENABLED=0: the !cgo files in, the cgo ones
# out; 1178 packages in about 10 s, compiling nothing; it replaced a
# no-cgo `go vet` that compiled 735 packages), then internal/gpu's no-cgo
# test runs (nocgo_test.go: Open reports ErrUnavailable naming cgo, which
# the scrape handles as it does a node without the NVIDIA library,
# TestScrapeGPUAbsentRealNVML). receiver/scrape's gpu_nocgo_test.go runs
# the whole scrape without cgo: make nocgo NOCGO_PKGS='./internal/gpu/...
# ./receiver/scrape/' NOCGO_RUN=GPU (its test binary compiles 701 packages
# without cgo, 241 s of a cold make test's background, so CI only
# type-checks it). Compiled without inlining (NOCGO_GCFLAGS), like the
# other test infrastructure: the tests check behaviour, not speed.
NOCGO_PKGS    ?= ./internal/gpu/...
NOCGO_RUN     ?= .
NOCGO_GCFLAGS ?= all=-l
nocgo:
	$(LOCK)
	$(CROSSCHECK) -goos linux -tests -C "$(CURDIR)" ./...
	CGO_ENABLED=0 $(GO) test -gcflags='$(NOCGO_GCFLAGS)' -timeout $(TEST_TIMEOUT) -run '$(NOCGO_RUN)' $(GOTESTFLAGS) $(NOCGO_PKGS)

# The module builds where the collector builds: darwin and windows too,
# without cgo (the receiver refuses to start there, naming root_path), and
# linux/arm64. tools/crosscheck type-checks it for each platform (GOOS or
# GOOS/GOARCH) from source, compiling
# nothing: go list picks each package's files for that platform as go build
# does, and go/types is the compiler's own type checker, so a type or
# build-tag error (a name a !linux file lacks, a stub missing, a syscall
# field whose type differs on arm64) fails here as `GOOS=<os> GOARCH=<arch>
# go build` fails; only back-end errors (assembly, the linker) need a real
# build (CROSS_BUILD=1). 663 packages per system in about 10 s
# warm, where the build compiled 654 packages per system (647 s of a cold
# CI run's background, CONTRIBUTING.md "CI time"). The distribution is our
# module plus core and contrib components that their own projects build
# for those systems, so CI checks only the module (CROSS_DIST=1 checks
# $(DIST_DIR) too). linux/arm64 is checked without cgo here; its cgo
# build is make otelcol-arm64's, which make test runs (arch-test).
CROSS_PLATFORMS ?= darwin windows linux/arm64
CROSS_DIST      ?=
CROSS_BUILD     ?=
cross: $(if $(CROSS_DIST),otelcol)
	$(LOCK)
	$(GO) test -C tools ./crosscheck
	$(CROSSCHECK) -goos "$(CROSS_PLATFORMS)" -C "$(CURDIR)" ./...
	$(if $(CROSS_DIST),$(CROSSCHECK) -goos "$(CROSS_PLATFORMS)" -C "$(CURDIR)/$(DIST_DIR)" .)
	$(if $(CROSS_BUILD),for p in $(CROSS_PLATFORMS); do os=$${p%%/*} arch=$$($(GO) env GOARCH); [[ $$p == */* ]] && arch=$${p#*/}; GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) build ./...; $(if $(CROSS_DIST),(cd $(DIST_DIR) && GOOS=$$os GOARCH=$$arch CGO_ENABLED=0 $(GO) build -buildvcs=false -o /dev/null .);) done)

# The distribution's binaries against the fixture trees (test/archgolden,
# build tag archgolden): the host's (linux/amd64 in CI) natively and the
# arm64 one under qemu-user (Debian's qemu-user-static, invoked with the
# arm64 glibc of libc6-dev-arm64-cross as its library prefix: binfmt_misc
# need not be registered), each running one receiver per layout of
# testdata/fixtures with root_path on a copy of it; each layout's second
# scrape must equal testdata/golden/<layout>.yaml, which the scrape's own
# tests write. Also: the binaries start without libnvidia-ml and say so
# once per receiver, and bind NVML's symbols lazily (OTELCOL_EXTLDFLAGS).
# No root; about 15 s. In CI a missing binary, emulator or C library
# fails it.
QEMU_AARCH64   ?= qemu-aarch64-static
QEMU_LD_PREFIX ?= /usr/aarch64-linux-gnu
arch-test: otelcol otelcol-arm64
	$(GO) vet $(TEST_BUILDFLAGS) -tags archgolden ./test/archgolden/
	OTELCOL_BIN="$(CURDIR)/$(OTELCOL_BIN)" OTELCOL_ARM64_BIN="$(CURDIR)/$(OTELCOL_ARM64_BIN)" \
	  QEMU_AARCH64="$(QEMU_AARCH64)" QEMU_LD_PREFIX="$(QEMU_LD_PREFIX)" CC_ARM64="$(CC_ARM64)" \
	  $(GO) test $(TEST_BUILDFLAGS) -tags archgolden -count=1 -v -timeout 5m $(GOTESTFLAGS) ./test/archgolden/

# Add end-to-end pieces as further prerequisites of test-steps (they can
# rely on $(OTELCOL_BIN), built by the otelcol prerequisite). The leftover
# check runs last whatever happened before it (a failed step, a test
# timeout): a run that leaves a process, cgroup or mount behind fails.
# Each step's time is printed at the end (a step's time includes the
# prerequisites it builds first and any wait for its background build,
# below), with the CPU the machine left idle during it (core-seconds, from
# /proc/stat), so a slow CI run names its slow step and says whether the
# cores were busy. The first failing step ends the run, as make would.
#
# The unit tests run once, under the race detector (race; make unit runs
# them without it). Every test binary and vet of make test is built with
# $(TEST_BUILDFLAGS), so each package is compiled once for all of them
# (CONTRIBUTING.md, "CI time").
#
# TEST_BG are builds and checks that do not depend on the steps before
# them. They start in the background when `make test` starts, one after the
# other, at the lowest CPU priority (nice 19): they take the CPU the steps
# leave idle (real-machine tests waiting on containers, the cluster, the
# outage) instead of running in their steps' time. They stay in make's
# session (set -m: a process group of their own, killed as one at the
# end): with the kernel's autogroups (sched_autogroup_enabled) a new
# session (setsid) is a scheduling group of its own and takes half the CPU
# whatever its nice value. Each of their targets holds a lock for its whole
# recipe ($(LOCK), build/.lock-<target>), which its step's own invocation
# takes too: a step whose target is still running in the background waits
# for it, then runs it again on a warm Go cache (seconds; go test and go
# vet print their cached results). A background target that fails only
# says so (build/test-background.log); its step runs it again and fails
# there with its output (the background runs at ionice's idle class too).
# The checks that need nothing built (fuzz-smoke, nocgo, cross) come after
# the cluster, so their background runs have its idle time, then arch-test
# (the arm64 distribution, built in the background), and v2-test
# is last, when the background is done: the TCG guest slows down badly
# beside a compile even at nice 19 (TestV2Node took 509 s instead of 322 s
# in a cold run; nice does not keep another process off the core's caches
# and memory bandwidth), and its tests time what runs in the guest. TEST_BG=
# runs everything in its step.
TEST_STEPS := check-generated check-dashboards vet race otelcol e2e kube-test fuzz-smoke nocgo cross arch-test v2-test
TEST_BG    ?= prometheus3 otelcol-arm64 kube-bins helm cadvisor-peer v2guest-build fuzz-build v2guest-image nocgo cross
test:
	rc=0 times=() t0=$$SECONDS bg=
	hz=$$(getconf CLK_TCK)
	idle() { awk -v hz=$$hz '/^cpu /{printf "%d", ($$5 + $$6) / hz}' /proc/stat; }
	mkdir -p build
	if [ -n "$(strip $(TEST_BG))" ]; then
	  set -m # its own process group (killed as one below), in this session
	  bash -c 'for s in $(TEST_BG); do t=$$SECONDS; nice -n 19 ionice -c 3 $(MAKE) --no-print-directory $$s || echo "background: $$s failed (its step runs it again)"; echo "background: $$s done after $$((SECONDS - t)) s, at $$SECONDS s"; done' \
	    > build/test-background.log 2>&1 </dev/null &
	  bg=$$!
	  set +m
	  trap "kill -TERM -- -$$bg 2>/dev/null || true" EXIT
	  echo "background (build/test-background.log): $(TEST_BG)"
	fi
	for s in $(TEST_STEPS); do
	  t=$$SECONDS i=$$(idle)
	  if ! $(MAKE) --no-print-directory $$s; then
	    rc=2 times+=("$$(printf '%5ds %6d  %s (failed)' $$((SECONDS - t)) $$(($$(idle) - i)) $$s)")
	    break
	  fi
	  times+=("$$(printf '%5ds %6d  %s' $$((SECONDS - t)) $$(($$(idle) - i)) $$s)")
	done
	if [ -n "$$bg" ]; then
	  kill -TERM -- -$$bg 2>/dev/null || true
	  wait $$bg 2>/dev/null || true
	  printf '\n=== make test: background (build/test-background.log)\n'
	  grep '^background:' build/test-background.log || true
	fi
	t=$$SECONDS i=$$(idle)
	$(MAKE) --no-print-directory leftovers || rc=1
	times+=("$$(printf '%5ds %6d  %s' $$((SECONDS - t)) $$(($$(idle) - i)) leftovers)")
	printf '\n=== make test: step timings (wall, idle core-seconds)\n'
	printf '%s\n' "$${times[@]}"
	printf '%5ds  total, exit %d\n' $$((SECONDS - t0)) $$rc
	exit $$rc

test-steps: $(TEST_STEPS)

# What real-machine tests left behind (internal/testing/leftovers): test
# processes (containerd and its shims, containers, cgrouptest children,
# collectors, Prometheus), cgroups under kubepods in every hierarchy, mounts
# under the temp directory, network namespaces. Waits for the machine lock
# (no running test's pods count), names each leftover and fails; -clean
# then removes them, so the next run starts clean.
leftovers:
	$(GO) run ./internal/testing/cmd/leftovers -clean

# Every Fuzz target of every package, FUZZTIME each (make fuzz FUZZTIME=5m).
# The seed corpora also run as plain tests in `unit`.
FUZZTIME ?= 30s
# The targets are found without compiling: go list names the test files
# this build selects (build tags count), and their `func FuzzX(` lines name
# the targets (`go test -list` would build and link a plain test binary of
# each package: a compile of 404 packages nothing else in make test uses).
fuzz:
	$(LOCK)
	for pkg in $$(grep -rl --include='*_test.go' --exclude-dir=tools --exclude-dir=build --exclude-dir=bin '^func Fuzz' . | xargs -n1 dirname | sort -u); do
	  files=$$($(GO) list -f '{{range .TestGoFiles}}{{$$.Dir}}/{{.}} {{end}}{{range .XTestGoFiles}}{{$$.Dir}}/{{.}} {{end}}' "$$pkg")
	  for f in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$files | sort -u); do
	    echo "=== $$f ($$pkg, $(FUZZTIME))"
	    $(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) "$$pkg"
	  done
	done

# What CI runs: every fuzz target briefly. A count (-fuzztime Nx), not a
# duration: with a duration Go's fuzz coordinator races its own deadline
# and, on a loaded machine, fails a target with a bare "context deadline
# exceeded" and no failing input (CI saw it on FuzzSplitImage).
FUZZ_SMOKE ?= 2000x
fuzz-smoke:
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZ_SMOKE)

# Every fuzz target once (compiles the instrumented test binaries, which
# fuzz-smoke then finds in the Go cache): what make test runs in the
# background.
fuzz-build:
	$(MAKE) --no-print-directory fuzz FUZZTIME=1x

# Benchmarks (scrape vs raw-read floor at N=10..5000 per layout, per-stage
# ones) and the table BENCHMARKS.md records. BENCH_MAX_N caps the sizes.
BENCHTIME ?= 2s
BENCH_PKGS ?= ./receiver/scrape ./internal/cgroupfs ./internal/procfs ./internal/rawfile
bench:
	mkdir -p build
	$(GO) test -tags $(REAL_TAGS) -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -timeout 90m $(BENCH_PKGS) | tee build/bench.out
	$(GO) run ./internal/testing/benchtable < build/bench.out | tee build/bench-table.md

# Our collector against cAdvisor on the same real cgroups (test/peer, build
# tag peerbench; root): N real container cgroups with processes, cAdvisor as
# the kubelet embeds it (tools/cadvisorpeer, its own module, version pinned
# there) and the distribution side by side (OTLP into Prometheus 3 too:
# make prometheus3), CPU ticks and RSS of each process, under each condition
# of BENCH_PEER_CONDITIONS: quiet (nothing else runs) and loaded (the
# benchmark's own CPU hogs, BENCH_PEER_LOAD_FACTOR busy threads per core).
# Each size waits up to BENCH_PEER_QUIET_WAIT for the 1-min load to drop
# below BENCH_PEER_QUIET_LOAD, and fails when the window's foreign CPU (what
# the benchmark did not run) exceeds BENCH_PEER_FOREIGN_MAX cores. Prints
# one table per condition (BENCHMARKS.md records them) and writes
# build/bench-peer.md.
#   make bench-peer BENCH_PEER_N=50 BENCH_PEER_WARMUP=20s BENCH_PEER_DURATION=30s
# BENCH_PEER_PERF=<dir> also records a perf profile of every process.
CADVISOR_PEER_BIN := bin/cadvisorpeer
BENCH_PEER_N        ?= 50,200,500
BENCH_PEER_WARMUP   ?= 30s
BENCH_PEER_DURATION ?= 120s
BENCH_PEER_INTERVAL ?= 10s
BENCH_PEER_PERF     ?=
BENCH_PEER_DENSE    ?=
BENCH_PEER_CONDITIONS  ?= quiet,loaded
BENCH_PEER_QUIET_LOAD  ?= 1.0
BENCH_PEER_QUIET_WAIT  ?= 5m
BENCH_PEER_FOREIGN_MAX ?= 0.1
BENCH_PEER_LOAD_FACTOR ?= 4
# A/B: another collector build and/or environment run collection-only beside
# the others, e.g. BENCH_PEER_BASELINE_BIN=bin/otelcol-old or
# BENCH_PEER_BASELINE_BIN=bin/otelcol-containerstats BENCH_PEER_BASELINE_ENV=GOGC=50
BENCH_PEER_BASELINE_BIN ?=
BENCH_PEER_BASELINE_ENV ?=
BENCH_PEER_OURS_ENV     ?=
cadvisor-peer:
	$(LOCK)
	mkdir -p $(dir $(CADVISOR_PEER_BIN))
	cd tools/cadvisorpeer
	$(GO) vet .
	$(GO) build -trimpath -o "$(CURDIR)/$(CADVISOR_PEER_BIN)" .

bench-peer: otelcol cadvisor-peer prometheus3
	$(GO) vet -tags peerbench ./test/peer/
	BENCH_PEER_N="$(BENCH_PEER_N)" BENCH_PEER_WARMUP="$(BENCH_PEER_WARMUP)" \
	  BENCH_PEER_DURATION="$(BENCH_PEER_DURATION)" BENCH_PEER_INTERVAL="$(BENCH_PEER_INTERVAL)" \
	  BENCH_PEER_CONDITIONS="$(BENCH_PEER_CONDITIONS)" BENCH_PEER_QUIET_LOAD="$(BENCH_PEER_QUIET_LOAD)" \
	  BENCH_PEER_QUIET_WAIT="$(BENCH_PEER_QUIET_WAIT)" BENCH_PEER_FOREIGN_MAX="$(BENCH_PEER_FOREIGN_MAX)" \
	  BENCH_PEER_LOAD_FACTOR="$(BENCH_PEER_LOAD_FACTOR)" PROMETHEUS3_BIN="$(CURDIR)/$(PROMETHEUS3_BIN)" \
	  BENCH_PEER_PERF="$(BENCH_PEER_PERF)" BENCH_PEER_DENSE="$(BENCH_PEER_DENSE)" BENCH_PEER_OUT="$(CURDIR)/build/bench-peer.md" \
	  BENCH_PEER_BASELINE_BIN="$(if $(BENCH_PEER_BASELINE_BIN),$(abspath $(BENCH_PEER_BASELINE_BIN)))" \
	  BENCH_PEER_BASELINE_ENV="$(BENCH_PEER_BASELINE_ENV)" BENCH_PEER_OURS_ENV="$(BENCH_PEER_OURS_ENV)" \
	  OTELCOL_BIN="$(CURDIR)/$(OTELCOL_BIN)" CADVISOR_PEER_BIN="$(CURDIR)/$(CADVISOR_PEER_BIN)" \
	  $(GO) test -tags peerbench -count=1 -v -run '^TestPeer$$' -timeout 180m ./test/peer/

# Prometheus 3 (github.com/prometheus/prometheus v0.316.0 = Prometheus
# 3.16.0) for the e2e's OTLP path (docs/e2e.md): its OTLP receiver
# (/api/v1/otlp/v1/metrics) against the prometheus exporter scraped by
# Debian's Prometheus 2. Built from tools/prometheus3/go.mod (its own
# module, a `tool` line), API only: no builtinassets tag (the web UI's
# files are not compiled in; the API does not need them) and
# remove_all_sd (no cloud service discovery: the e2e uses static targets
# only), which keeps the cold build short (docs/e2e.md has its timing).
# In bin/prometheus3/ so that the binary is still called `prometheus`
# (make leftovers recognises a test's Prometheus by that name).
PROMETHEUS3_BIN     := bin/prometheus3/prometheus
PROMETHEUS3_MODULE  := v0.316.0
PROMETHEUS3_VERSION := 3.16.0
# Compiled without inlining: a third less compile time; the e2e's OTLP sink
# does not need the speed (CONTRIBUTING.md, "CI time").
PROMETHEUS3_GCFLAGS ?= all=-l
.PHONY: prometheus3
prometheus3:
	$(LOCK)
	mkdir -p $(dir $(PROMETHEUS3_BIN))
	cd tools/prometheus3
	v=$$($(GO) list -m -f '{{.Version}}' github.com/prometheus/prometheus)
	if [ "$$v" != $(PROMETHEUS3_MODULE) ]; then
	  echo "tools/prometheus3/go.mod requires github.com/prometheus/prometheus $$v, not $(PROMETHEUS3_MODULE)" >&2
	  exit 1
	fi
	CGO_ENABLED=0 $(GO) build -trimpath -gcflags='$(PROMETHEUS3_GCFLAGS)' -tags remove_all_sd,netgo \
	  -ldflags='-s -w -X github.com/prometheus/common/version.Version=$(PROMETHEUS3_VERSION)' \
	  -o "$(CURDIR)/$(PROMETHEUS3_BIN)" github.com/prometheus/prometheus/cmd/prometheus

# The end-to-end test (test/e2e, build tag e2e; docs/e2e.md): the built
# collector against real workloads, exporting to a real Prometheus (Debian's
# 2.x by remote write and by scraping the prometheus exporter; Prometheus 3
# over OTLP) and over OTLP to a second collector. Needs root; in CI (CI set)
# a missing prerequisite fails it instead of skipping.
e2e: otelcol image prometheus3
	$(GO) vet $(TEST_BUILDFLAGS) -tags e2e ./test/e2e/
	OTELCOL_BIN="$(CURDIR)/$(OTELCOL_BIN)" OTELCOL_ARM64_BIN="$(CURDIR)/$(OTELCOL_ARM64_BIN)" QEMU_AARCH64="$(QEMU_AARCH64)" \
	  IMAGE_ARCHIVE="$(CURDIR)/$(IMAGE_ARCHIVE)" IMAGE_NAME="$(IMAGE_NAME)" \
	  PROMETHEUS3_BIN="$(CURDIR)/$(PROMETHEUS3_BIN)" \
	  $(GO) test $(TEST_BUILDFLAGS) -tags e2e -count=1 -v -timeout $(E2E_TIMEOUT) $(GOTESTFLAGS) ./test/e2e/

# The cgroup v2 node (docs/v2-node.md): internal/testing/vmnode builds a
# QEMU guest from Debian packages (kernel, systemd, containerd, runc; cached
# by package version in $(VMNODE_CACHE)) and boots it under TCG with no
# network; test/v2node runs the receiver's real-machine families in it
# through CRI on the systemd driver, cAdvisor's load reader (field note 1)
# and a standalone kubelet (field note 2) beside it, and checks our v2
# fixtures against the guest's kernel. The field-note tables go to
# $(V2NODE_OUT). Root; in CI a missing prerequisite fails.
VMNODE_CACHE   ?= $(HOME)/.cache/containerstats-vmnode
V2NODE_OUT     ?= bin/v2node
V2NODE_TIMEOUT ?= 40m
v2-test: cadvisor-peer kube-bins v2guest-build
	$(GO) vet $(TEST_BUILDFLAGS) -tags vmnode ./internal/testing/vmnode/
	$(GO) vet $(TEST_BUILDFLAGS) -tags v2node ./test/v2node/
	$(GO) vet $(TEST_BUILDFLAGS) -tags v2guest ./test/v2node/
	VMNODE_CACHE="$(VMNODE_CACHE)" \
	  $(GO) test $(TEST_BUILDFLAGS) -tags vmnode -count=1 -v -timeout 10m -run '^TestBoot$$' $(GOTESTFLAGS) ./internal/testing/vmnode/
	VMNODE_CACHE="$(VMNODE_CACHE)" V2NODE_OUT="$(CURDIR)/$(V2NODE_OUT)" \
	  CADVISOR_PEER_BIN="$(CURDIR)/$(CADVISOR_PEER_BIN)" KUBE_BIN_DIR="$(CURDIR)/$(KUBE_BIN_DIR)" \
	  $(GO) test $(TEST_BUILDFLAGS) -tags v2node -count=1 -v -timeout $(V2NODE_TIMEOUT) -run '^TestV2Node$$' $(GOTESTFLAGS) ./test/v2node/

# What TestV2Node builds for the guest (the v2guest test binary, plain: it
# runs in the TCG guest; the workload, without cgo), built ahead with the
# same flags so that the test's own builds find the Go cache warm: in a cold
# make test nothing else compiles these packages plain, and make test runs
# this in the background (it was 99 s of a cold v2-test).
v2guest-build:
	$(LOCK)
	mkdir -p build/v2guest
	cd test/v2node
	$(GO) test -c -tags v2guest -o "$(CURDIR)/build/v2guest/v2guest.test" .
	CGO_ENABLED=0 $(GO) build -o "$(CURDIR)/build/v2guest/workload" ../../internal/testing/cmd/workload

# The guest itself (kernel, initramfs, root filesystem from Debian
# packages; internal/testing/vmnode), built into $(VMNODE_CACHE) or found
# there, booting nothing: make test runs this in the background too, where
# its apt and dpkg work overlaps the compiles (it was 1m36s of a cold
# v2-test, with a core idle). It takes the machine lock, as the v2 tests do.
# Not a prerequisite of v2-test: TestBoot builds the guest the same way if
# the cache has none, and waits (machine lock, the cache's lock) for a
# build in progress.
v2guest-image:
	$(LOCK)
	VMNODE_CACHE="$(VMNODE_CACHE)" \
	  $(GO) test $(TEST_BUILDFLAGS) -tags vmnode -count=1 -v -timeout 10m -run '^TestPrepareGuest$$' $(GOTESTFLAGS) ./internal/testing/vmnode/

# Long soak under container churn on real containerd (root; containerd, runc,
# busybox-static): make soak SOAK_DURATION=10m. A 30 s form runs in `race`.
SOAK_DURATION ?= 5m
SOAK_TIMEOUT  ?= 60m
soak:
	SOAK_DURATION=$(SOAK_DURATION) $(GO) test -tags $(REAL_TAGS) -count=1 -run '^TestSoakChurn$$' -timeout $(SOAK_TIMEOUT) -v .

# The collector's version: --version, service.version, the receiver's scope
# version, the image's tag and annotations. ocb writes dist.version into
# the generated main.go as a literal, so the build runs ocb on a copy of
# builder-config.yaml with $(VERSION) in it (build/builder-config.yaml).
# Local builds stay 0.0.0-dev; make release VERSION=x.y.z.
VERSION ?= 0.0.0-dev
ifeq ($(shell printf '%s' '$(VERSION)' | grep -Ex '[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?'),)
$(error VERSION=$(VERSION) is not a semantic version x.y.z[-pre])
endif

# ocb generates the distribution's sources and go.mod in $(DIST_DIR) and
# resolves its modules (strict version check on); the compile is ours so that
# it runs with cgo on (go-nvml needs it). Each architecture compiles a copy
# of those sources (build/otelcol-<arch>), taken under build/.lock-dist
# with ocb's run: make test builds arm64 in the background (TEST_BG) while
# its otelcol step may run ocb again. Both steps are incremental: a warm
# rebuild takes a few seconds.
#   dist_sources ARCH: generate the sources, copy them to build/otelcol-ARCH
define dist_sources
mkdir -p "$(CURDIR)/build" $(DIST_DIR) build/otelcol-$(1) $(dir $(OTELCOL_BIN))
exec 8>"$(CURDIR)/build/.lock-dist"
flock 8
sed 's/^  version: 0\.0\.0-dev$$/  version: $(VERSION)/' builder-config.yaml > build/builder-config.yaml
grep -qx '  version: $(VERSION)' build/builder-config.yaml
$(BUILDER) --config build/builder-config.yaml --skip-compilation --skip-strict-versioning=false
rm -f build/otelcol-$(1)/*.go
cp $(DIST_DIR)/*.go $(DIST_DIR)/go.mod $(DIST_DIR)/go.sum build/otelcol-$(1)/
exec 8>&-
endef
OTELCOL_GOBUILD = $(GO) build -buildvcs=false $(OTELCOL_BUILDFLAGS) -ldflags='$(OTELCOL_LDFLAGS) -extldflags=$(OTELCOL_EXTLDFLAGS)'

# The host's architecture (linux/amd64 in CI).
otelcol:
	$(call dist_sources,host)
	cd build/otelcol-host
	CGO_ENABLED=1 $(OTELCOL_GOBUILD) -o "$(CURDIR)/$(OTELCOL_BIN)" .

# linux/arm64 from any Linux host, cgo through $(CC_ARM64) and the
# arm64 glibc of libc6-dev-arm64-cross; make arch-test runs it under
# qemu-user. In make test's background (TEST_BG), right after Prometheus 3:
# the image (e2e, kube-test) holds it; a cold build is a second compile of
# the whole distribution (CONTRIBUTING.md, "CI time").
otelcol-arm64:
	$(LOCK)
	$(call dist_sources,arm64)
	cd build/otelcol-arm64
	CGO_ENABLED=1 GOOS=linux GOARCH=arm64 CC=$(CC_ARM64) $(OTELCOL_GOBUILD) -o "$(CURDIR)/$(OTELCOL_ARM64_BIN)" .

# The image's root filesystem: the binaries, the loader and libraries their
# ELF headers name (the host's glibc for amd64, libc6-dev-arm64-cross's for
# arm64), deploy/config.yaml as the default config, the CA bundle, the
# LICENSE, an empty /tmp; entrypoint the binary, command --config the
# default config. Reproducible: created at the commit's time.
image: otelcol otelcol-arm64
	created=$$(git log -1 --format=%ct 2>/dev/null || echo 0)
	$(GO) run -C tools/ociimage . -o "$(CURDIR)/$(IMAGE_ARCHIVE)" -name "$(IMAGE_NAME)" \
	  -version "$(VERSION)" -source "$(IMAGE_SOURCE)" -revision "$(IMAGE_REVISION)" -created "$$created" \
	  -config "$(CURDIR)/deploy/config.yaml" -ca "$(IMAGE_CA)" -license "$(CURDIR)/LICENSE" -user 0:0 \
	  -platform linux/amd64="$(CURDIR)/$(OTELCOL_BIN)" -platform linux/arm64="$(CURDIR)/$(OTELCOL_ARM64_BIN)" \
	  -- /otelcol-containerstats -- --config /etc/otelcol/config.yaml

# A versioned release into $(RELEASE_DIR): make release VERSION=x.y.z.
# Fails unless CHANGELOG.md has a section `## x.y.z ...`. The binaries per
# architecture (their --version checked), the multi-arch image archive,
# a CycloneDX SBOM of each binary (cyclonedx-gomod, pinned as a Go tool in
# tools/sbom/go.mod, reading the modules the binary was built from), the
# CHANGELOG section, and SHA256SUMS of them all. Local builds stay
# 0.0.0-dev: the next make otelcol builds that again.
RELEASE_DIR := build/release
SBOM        := $(GO) tool -modfile=$(CURDIR)/tools/sbom/go.mod cyclonedx-gomod
.PHONY: release
release:
	if [ "$(VERSION)" = 0.0.0-dev ]; then echo "release: give the version, make release VERSION=x.y.z" >&2; exit 1; fi
	section=$$(awk -v v="$(VERSION)" '/^## /{on = ($$2 == v)} on' CHANGELOG.md)
	if [ -z "$$section" ]; then echo "release: CHANGELOG.md has no section '## $(VERSION) ...'" >&2; exit 1; fi
	$(MAKE) --no-print-directory image VERSION=$(VERSION)
	for b in $(OTELCOL_BIN) $(OTELCOL_ARM64_BIN); do
	  v=$$(case $$b in *arm64) $(QEMU_AARCH64) -L $(QEMU_LD_PREFIX) $$b --version;; *) $$b --version;; esac)
	  [ "$$v" = "otelcol-containerstats version $(VERSION)" ] || { echo "release: $$b --version says '$$v'" >&2; exit 1; }
	done
	rm -rf $(RELEASE_DIR)
	mkdir -p $(RELEASE_DIR)
	p=$(RELEASE_DIR)/otelcol-containerstats_$(VERSION)
	cp $(OTELCOL_BIN) $${p}_linux_amd64
	cp $(OTELCOL_ARM64_BIN) $${p}_linux_arm64
	cp $(IMAGE_ARCHIVE) $${p}_image.tar
	for a in amd64 arm64; do
	  $(SBOM) bin -json -version $(VERSION) -output $${p}_linux_$$a.cdx.json $${p}_linux_$$a
	done
	printf '%s\n' "$$section" > $(RELEASE_DIR)/CHANGELOG-$(VERSION).md
	cd $(RELEASE_DIR)
	sha256sum -- * > SHA256SUMS
	ls -l

# On a node with an NVIDIA GPU and driver: read every GPU once through the
# collector's NVML code (internal/gpu, the real libnvidia-ml.so.1) and
# compare each figure with nvidia-smi --query-gpu taken between two of our
# reads; fails beyond the tolerances it prints (docs/gpu.md has a real
# run). GPUCHECK_BIN alone builds it (cgo) for another machine.
GPUCHECK_BIN ?= bin/gpucheck
gpu-check:
	mkdir -p $(dir $(GPUCHECK_BIN))
	CGO_ENABLED=1 $(GO) build -o "$(GPUCHECK_BIN)" ./internal/testing/gpucheck
	"$(CURDIR)/$(GPUCHECK_BIN)"

# HOSTNAME is a bash variable but usually not exported; config/local.yaml
# reads it for node_name.
run: otelcol
	export HOSTNAME="$${HOSTNAME:-$$(hostname)}"
	exec "$(CURDIR)/$(OTELCOL_BIN)" --config "$(RUN_CONFIG)"

clean:
	rm -rf bin build

# The binaries of the test cluster (internal/testing/kubetest),
# built from tools/kube/go.mod: k8s.io/kubernetes v1.34.4 with its staging
# modules at v0.34.4, and our etcd main on go.etcd.io/etcd/server/v3/embed.
# A separate module, so the collector's go.mod is untouched. Timings on the
# 2-core dev VM are in docs/kube.md. KUBE_CMDS picks which Kubernetes
# commands to build (the harness runs all four; etcd is always built).
KUBE_BIN_DIR ?= bin/kube
KUBE_VERSION := v1.34.4
KUBE_CMDS    ?= kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl
KUBE_LDFLAGS := -s -w \
  -X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
  -X k8s.io/component-base/version.gitMajor=1 \
  -X k8s.io/component-base/version.gitMinor=34 \
  -X k8s.io/component-base/version.gitTreeState=clean
# The cluster's binaries are test infrastructure: compiled without inlining
# (all=-l), a third less compile time for a few percent more CPU in the
# cluster (CONTRIBUTING.md, "CI time"). KUBE_GCFLAGS= builds them as
# Kubernetes releases them.
KUBE_GCFLAGS ?= all=-l
# The cold build of kube-bins took ~4.5 min on 2 cores before -l
# (docs/kube.md), so kube-test is a step of `make test`, which starts it in
# the background (TEST_BG).
.PHONY: kube-bins kube-test
kube-bins:
	$(LOCK)
	mkdir -p $(KUBE_BIN_DIR)
	out=$$(cd $(KUBE_BIN_DIR) && pwd)
	cd tools/kube
	# tools/kube/go.mod must replace exactly the staging modules of the
	# pinned k8s.io/kubernetes, each at v0.<minor>.<patch>.
	upstream=$$($(GO) mod download -json k8s.io/kubernetes | sed -n 's/^\t"GoMod": "\(.*\)",$$/\1/p')
	want=$$(sed -n 's#^\t\(k8s.io/[a-z-]*\) => ./staging/src/.*#\1 => \1 $(subst v1.,v0.,$(KUBE_VERSION))#p' "$$upstream" | sort)
	have=$$(sed -n 's#^\t\(k8s.io/[a-z-]*\) => \(k8s.io/[a-z-]*\) \(v[0-9.]*\)$$#\1 => \2 \3#p' go.mod | sort)
	if [ -z "$$want" ] || [ "$$want" != "$$have" ]; then
	  echo "tools/kube/go.mod: the replace lines differ from the staging modules of $$upstream:" >&2
	  diff <(echo "$$want") <(echo "$$have") >&2 || true
	  exit 1
	fi
	v=$$($(GO) list -m -f '{{.Version}}' k8s.io/kubernetes)
	if [ "$$v" != $(KUBE_VERSION) ]; then
	  echo "tools/kube/go.mod requires k8s.io/kubernetes $$v, not $(KUBE_VERSION)" >&2
	  exit 1
	fi
	CGO_ENABLED=0 $(GO) build -trimpath -gcflags='$(KUBE_GCFLAGS)' -ldflags='$(KUBE_LDFLAGS)' -o "$$out/" \
	  ./etcd $(addprefix k8s.io/kubernetes/cmd/,$(KUBE_CMDS))

# Helm (helm.sh/helm/v3 v3.22.0, built from tools/helm/go.mod: its own
# module, a `tool` line, as tools/prometheus3) for the deploy tests that
# render the official OpenTelemetry Collector chart with
# deploy/helm/values.yaml (deploy/helm_test.go, tag kube; docs/deploy.md,
# "Helm"). The ldflags are upstream's Makefile's: the version, and the
# Kubernetes version `helm template` assumes (1.<its client-go's minor>, as
# upstream computes it); the tests pass --kube-version anyway. Cold (empty
# Go caches) on the 2-core VM: 2m36s, most of it the compile (docs/deploy.md,
# "Helm"), so make test builds it in the background (TEST_BG).
# Compiled without inlining, like the other test infrastructure
# (CONTRIBUTING.md, "CI time"). The chart itself is not built: a copy of
# chart $(OTEL_COLLECTOR_CHART_VERSION) at OTEL_COLLECTOR_CHART (default
# ../shared/charts/opentelemetry-collector; elsewhere `helm pull
# open-telemetry/opentelemetry-collector --version
# $(OTEL_COLLECTOR_CHART_VERSION) --untar`), and the Operator's CRD at
# OTEL_OPERATOR_CRD.
HELM_BIN        ?= bin/helm/helm
HELM_MODULE     := v3.22.0
HELM_GCFLAGS    ?= all=-l
OTEL_COLLECTOR_CHART         ?= $(CURDIR)/../shared/charts/opentelemetry-collector
OTEL_COLLECTOR_CHART_VERSION := 0.170.0
OTEL_OPERATOR_CRD            ?= $(CURDIR)/../shared/crds/opentelemetry.io_opentelemetrycollectors.yaml
.PHONY: helm
helm:
	$(LOCK)
	mkdir -p $(dir $(HELM_BIN))
	out=$$(cd $(dir $(HELM_BIN)) && pwd)/$(notdir $(HELM_BIN))
	cd tools/helm
	v=$$($(GO) list -m -f '{{.Version}}' helm.sh/helm/v3)
	if [ "$$v" != $(HELM_MODULE) ]; then
	  echo "tools/helm/go.mod requires helm.sh/helm/v3 $$v, not $(HELM_MODULE)" >&2
	  exit 1
	fi
	kminor=$$($(GO) list -m -f '{{.Version}}' k8s.io/client-go | cut -d. -f2)
	CGO_ENABLED=0 $(GO) build -trimpath -gcflags='$(HELM_GCFLAGS)' \
	  -ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$(HELM_MODULE) -X helm.sh/helm/v3/internal/version.gitTreeState=clean \
	    -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$$kminor \
	    -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$$kminor" \
	  -o "$$out" helm.sh/helm/v3/cmd/helm

# The test cluster (internal/testing/kubetest; docs/kube.md): the manifests
# against its real kube-apiserver (deploy/, build tag kube; with the
# OpenTelemetry Operator's CRD and deploy/operator/, and the Helm chart
# rendered with deploy/helm/values.yaml against deploy/daemonset.yaml), its node
# (kubelet, containerd, CNI bridge), and the user's path on it
# (test/e2e/cluster_test.go, tags e2e,kube): the image of `make image`
# imported, deploy/ applied, the DaemonSet's pod Ready, a gateway collector,
# Prometheus, workloads, our figures side by side with the kubelet's (the
# table also goes to $(KUBE_SIDE_BY_SIDE)), an in-place resize, the
# pod-resources socket, a rolling update; and README's newcomer path,
# line by line, on a cluster of its own, into Prometheus 3
# (test/e2e/newcomer_test.go; kubectl from make kube-bins). Root; in CI (CI set) a missing
# prerequisite fails a test instead of skipping it. The deploy and kubetest
# packages' clusters start one after the other (-p 1): their ports are
# picked free and bound later, and two clusters starting at once raced for
# one (a CI run's etcd: "bind: address already in use").
KUBE_TIMEOUT      ?= 20m
KUBE_SIDE_BY_SIDE ?= bin/kube-side-by-side.md
kube-test: kube-bins image helm prometheus3
	$(GO) vet $(TEST_BUILDFLAGS) -tags kube ./deploy/ ./internal/testing/kubetest/
	$(GO) vet $(TEST_BUILDFLAGS) -tags e2e,kube ./test/e2e/
	KUBE_BIN_DIR="$(CURDIR)/$(KUBE_BIN_DIR)" HELM_BIN="$(abspath $(HELM_BIN))" \
	  OTEL_COLLECTOR_CHART="$(OTEL_COLLECTOR_CHART)" OTEL_OPERATOR_CRD="$(OTEL_OPERATOR_CRD)" \
	  $(GO) test $(TEST_BUILDFLAGS) -p 1 -tags kube -count=1 -v -timeout $(KUBE_TIMEOUT) -run '^(TestManifestsOnAPIServer|TestOperatorOnAPIServer|TestHelmChart|TestDaemonSetScheduled|TestNodeRunsPods)$$' $(GOTESTFLAGS) ./deploy/ ./internal/testing/kubetest/
	KUBE_BIN_DIR="$(CURDIR)/$(KUBE_BIN_DIR)" IMAGE_ARCHIVE="$(CURDIR)/$(IMAGE_ARCHIVE)" KUBE_SIDE_BY_SIDE="$(CURDIR)/$(KUBE_SIDE_BY_SIDE)" \
	  HELM_BIN="$(abspath $(HELM_BIN))" OTEL_COLLECTOR_CHART="$(OTEL_COLLECTOR_CHART)" PROMETHEUS3_BIN="$(CURDIR)/$(PROMETHEUS3_BIN)" \
	  $(GO) test $(TEST_BUILDFLAGS) -tags e2e,kube -count=1 -v -timeout $(KUBE_TIMEOUT) -run '^(TestClusterDaemonSet|TestNewcomerPath|TestParseExposition|TestAround)$$' $(GOTESTFLAGS) ./test/e2e/

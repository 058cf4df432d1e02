# Build, code generation and tests of the container_stats receiver and the
# otelcol-containerstats distribution. The longer recipes are the scripts in
# tools/make/, whose headers say what they do and which variables they read.
#   make run | otelcol | otelcol-arm64 | image | release VERSION=x.y.z | release-test
#   make test   what CI runs (.ci/run): TEST_STEPS in order, TEST_BG in the
#               background, then make leftovers, even after a failed step
#               (tools/make/test.sh; docs/ci.md)
#   make unit (no root, no -race) | race | vet | lint | nocgo | cross | fuzz-smoke
#   make generate | check-generated | dashboards | check-dashboards
#   make e2e | kube-test | v2-test | arch-test (real machine: docs/tests.md)
#   make fuzz | bench | bench-peer | bench-docker | soak | cover | mutants | gpu-check | clean
#   make prometheus3 | kube-bins | containerd-bins | crio-bins | helm | cadvisor-peer | v2guest-*: test tools
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.ONESHELL:
.DEFAULT_GOAL := otelcol
GO ?= go
# go-nvml's headers mark many NVML calls deprecated: keep the build log readable.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations
# ocb (cmd/builder) and mdatagen, pinned in tools/go.mod (docs/versions.md);
# tools/crosscheck type-checks from source (make cross, nocgo).
TOOL       := $(GO) tool -modfile=$(CURDIR)/tools/go.mod
MDATAGEN   := $(TOOL) mdatagen
BUILDER    := $(TOOL) builder
CROSSCHECK := $(GO) run -C $(CURDIR)/tools ./crosscheck
# golangci-lint, pinned in its own module tools/lint/go.mod; .golangci.yml.
LINT       := $(GO) tool -modfile=$(CURDIR)/tools/lint/go.mod golangci-lint
LINTFLAGS  ?=
# gremlins (mutation testing), pinned in its own module tools/mutants/go.mod.
MUTANTS    := $(GO) tool -modfile=$(CURDIR)/tools/mutants/go.mod gremlins
# $(call sh,NAME,VARS): tools/make/NAME.sh given GO and VARS as NAME=VALUE
# arguments (tools/make/lib.sh); other arguments may follow.
sh = tools/make/$(1).sh $(foreach v,GO $(2),$(v)='$(subst ','\'',$($(v)))')
# make, for the scripts that run it; not $(MAKE), so make -n release only prints.
SUBMAKE = $(MAKE)
# First line of a recipe make test may also run in the background: holds
# build/.lock-<target> to the recipe's end, so two runs of a target take turns.
LOCK = mkdir -p "$(CURDIR)/build" && exec 9>"$(CURDIR)/build/.lock-$@" && flock 9

# The collector's version (--version, the image's tag); make release VERSION=x.y.z.
VERSION ?= 0.0.0-dev
ifeq ($(shell printf '%s' '$(VERSION)' | grep -Ex '[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?'),)
$(error VERSION=$(VERSION) is not a semantic version x.y.z[-pre])
endif
DIST_DIR           := build/otelcol
OTELCOL_BIN        := bin/otelcol-containerstats
OTELCOL_ARM64_BIN  := bin/otelcol-containerstats-arm64
CC_ARM64           ?= aarch64-linux-gnu-gcc
OTELCOL_BUILDFLAGS ?= -trimpath
OTELCOL_LDFLAGS    ?= -s -w
# go-nvml links NVML's symbols undefined and dlopen()s libnvidia-ml.so.1 only
# when GPU metrics start, so they must bind lazily (hardened toolchains default
# to -z now); test/archgolden checks the binaries' dynamic sections.
OTELCOL_EXTLDFLAGS := -Wl,-z,lazy
# make release sets RECEIVER_PROXY: the receiver module from a module proxy
# directory at vVERSION, not from the work tree (tools/make/release.sh).
RECEIVER_PROXY     ?=
OTELCOL_VARS := BUILDER VERSION DIST_DIR OTELCOL_BIN OTELCOL_ARM64_BIN CC_ARM64 OTELCOL_BUILDFLAGS OTELCOL_LDFLAGS OTELCOL_EXTLDFLAGS RECEIVER_PROXY
IMAGE_NAME     ?= docker.io/library/otelcol-containerstats:$(VERSION)
IMAGE_ARCHIVE  ?= bin/otelcol-containerstats-image.tar
QEMU_AARCH64   ?= qemu-aarch64-static
QEMU_LD_PREFIX ?= /usr/aarch64-linux-gnu
RUN_CONFIG     ?= config/local.yaml

# GOTESTFLAGS: extra test flags, e.g. make unit GOTESTFLAGS='-run TestX -v'.
# TEST_BUILDFLAGS: vet's and the real-machine steps' test builds, the race
# step's flags, so each package compiles once (TEST_BUILDFLAGS= builds plain).
# REAL_TAGS: the real-machine tests' build tag (not in `go test ./...`); the
# VM's are vmnode (the host's side) and v2guest (the guest's test binary).
# The steps pick among real-machine tests by package and name: make race
# runs RACE_PKGS (all but the harnesses with steps of their own) without
# the cluster's tests, KUBE_TESTS (deploy/, internal/testing/kubetest/) and
# KUBE_E2E_TESTS (test/e2e/), which make kube-test runs; make e2e runs
# test/e2e/ without KUBE_E2E_TESTS.
GOTESTFLAGS     ?=
TEST_BUILDFLAGS ?= -race
REAL_TAGS       := realmachine
TEST_TIMEOUT    ?= 20m
RACE_TIMEOUT    ?= 30m
RACE_PKGS       ?= $(shell $(GO) list -tags $(REAL_TAGS) ./... | grep -Ev '/test/(e2e|peer|archgolden|release)$$')
KUBE_TESTS      := TestManifestsOnAPIServer|TestOperatorOnAPIServer|TestHelmChart|TestDaemonSetScheduled|TestNodeRunsPods
KUBE_E2E_TESTS  := TestClusterDaemonSet|TestNewcomerPath|TestAround|TestAroundBounded
TEST_STEPS := check-generated check-dashboards vet race otelcol e2e kube-test lint fuzz-smoke nocgo cross arch-test release-test v2-test
TEST_BG    ?= containerd-bins crio-bins prometheus3 kube-bins helm cadvisor-peer otelcol-arm64 lint v2guest-build fuzz-build v2guest-image nocgo cross
# Test tools and their outputs (docs/e2e.md, docs/kube.md, docs/v2-node.md).
PROMETHEUS3_BIN   := bin/prometheus3/prometheus
CADVISOR_PEER_BIN := bin/cadvisorpeer
KUBE_BIN_DIR      ?= bin/kube
CONTAINERD_BIN_DIR ?= bin/containerd
CRIO_BIN_DIR      ?= bin/crio
KUBE_VERSION      := v1.37.2
HELM_BIN          ?= bin/helm/helm
OTEL_COLLECTOR_CHART_VERSION := 0.170.0
OTEL_COLLECTOR_CHART ?= $(CURDIR)/../shared/charts/opentelemetry-collector
VMNODE_CACHE      ?= $(HOME)/.cache/containerstats-vmnode

.PHONY: generate check-generated dashboards check-dashboards vet lint unit race containerd-bins nocgo cross fuzz fuzz-smoke fuzz-build v2guest-build v2guest-image bench bench-peer cadvisor-peer bench-docker soak test test-steps leftovers otelcol otelcol-arm64 arch-test image e2e run clean gpu-check prometheus3 release release-test kube-bins crio-bins kube-test helm v2-test mutants
generate:
	$(call sh,generate,MDATAGEN)
check-generated:
	$(call sh,generate,MDATAGEN) check
dashboards check-dashboards:
	cd tools/dashboards && $(GO) vet . && $(GO) run . -root "$(CURDIR)" $(if $(findstring check,$@),-check)
vet:
	$(GO) vet $(TEST_BUILDFLAGS) -tags $(REAL_TAGS) ./...
lint:
	$(LOCK)
	$(call sh,lint,LINT LINTFLAGS)
unit:
	$(GO) test -timeout $(TEST_TIMEOUT) $(GOTESTFLAGS) ./...
# The identity tests run on both runtimes (docs/runtimes.md); the others on make containerd-bins'.
race: containerd-bins
	CGO_ENABLED=1 CONTAINERD_BIN_DIR="$(abspath $(CONTAINERD_BIN_DIR))" $(GO) test -race -tags $(REAL_TAGS) -skip '^($(KUBE_TESTS))$$' -timeout $(RACE_TIMEOUT) $(GOTESTFLAGS) $(RACE_PKGS)
nocgo:
	$(LOCK)
	$(call sh,nocgo,CROSSCHECK TEST_TIMEOUT GOTESTFLAGS)
cross: $(if $(CROSS_DIST),otelcol)
	$(LOCK)
	$(call sh,cross,CROSSCHECK DIST_DIR)
# + marks it recursive, as $(MAKE) would: make -n test lists the steps' commands.
test:
	+$(call sh,test,SUBMAKE TEST_STEPS TEST_BG)
test-steps: $(TEST_STEPS)
leftovers: ; $(GO) run ./internal/testing/cmd/leftovers -clean
# One lock for the three: fuzz-smoke (a step) waits for fuzz-build (background).
fuzz fuzz-smoke fuzz-build:
	mkdir -p build && exec 9>build/.lock-fuzz && flock 9
	$(call sh,fuzz) $@
bench: ; $(call sh,bench,REAL_TAGS)
cadvisor-peer:
	$(LOCK)
	cd tools/cadvisorpeer && $(GO) vet . && $(GO) build -trimpath -o "$(CURDIR)/$(CADVISOR_PEER_BIN)" .
bench-peer: otelcol cadvisor-peer prometheus3
	$(call sh,bench-peer,REAL_TAGS OTELCOL_BIN CADVISOR_PEER_BIN PROMETHEUS3_BIN)
bench-docker: otelcol cadvisor-peer
	$(call sh,bench-docker,REAL_TAGS OTELCOL_BIN CADVISOR_PEER_BIN)
prometheus3:
	$(LOCK)
	$(call sh,prometheus3,PROMETHEUS3_BIN)
e2e: otelcol image prometheus3 containerd-bins crio-bins cadvisor-peer
	$(call sh,e2e,TEST_BUILDFLAGS GOTESTFLAGS REAL_TAGS KUBE_E2E_TESTS OTELCOL_BIN OTELCOL_ARM64_BIN QEMU_AARCH64 IMAGE_ARCHIVE IMAGE_NAME PROMETHEUS3_BIN CONTAINERD_BIN_DIR CRIO_BIN_DIR CADVISOR_PEER_BIN)
kube-bins:
	$(LOCK)
	$(call sh,kube-bins,KUBE_BIN_DIR KUBE_VERSION)
containerd-bins:
	$(LOCK)
	$(call sh,containerd-bins,CONTAINERD_BIN_DIR)
# CRI-O 1.34, pinns and copyimg (tools/crio/go.mod): make e2e's TestCRIO (docs/runtimes.md).
crio-bins:
	$(LOCK)
	$(call sh,crio-bins,CRIO_BIN_DIR)
helm:
	$(LOCK)
	$(call sh,helm,HELM_BIN)
kube-test: kube-bins containerd-bins image helm prometheus3
	$(call sh,kube-test,TEST_BUILDFLAGS GOTESTFLAGS REAL_TAGS KUBE_TESTS KUBE_E2E_TESTS KUBE_BIN_DIR CONTAINERD_BIN_DIR IMAGE_ARCHIVE HELM_BIN PROMETHEUS3_BIN OTEL_COLLECTOR_CHART)
v2-test: cadvisor-peer kube-bins containerd-bins crio-bins v2guest-build
	$(call sh,v2-test,TEST_BUILDFLAGS GOTESTFLAGS VMNODE_CACHE CADVISOR_PEER_BIN KUBE_BIN_DIR CONTAINERD_BIN_DIR CRIO_BIN_DIR)
v2guest-build v2guest-image:
	$(LOCK)
	$(call sh,v2guest,TEST_BUILDFLAGS GOTESTFLAGS VMNODE_CACHE) $(subst v2guest-,,$@)
soak: ; $(call sh,soak,REAL_TAGS)
# Unit and real-machine tiers' statement coverage of the product packages.
cover: $(if $(filter 0,$(COVER_REAL)),,containerd-bins)
	$(call sh,cover,REAL_TAGS RACE_PKGS KUBE_TESTS CONTAINERD_BIN_DIR GOTESTFLAGS)
# Mutation score of the core packages at the unit tier (docs/tests.md).
mutants: ; $(call sh,mutants,MUTANTS)
otelcol:
	$(call sh,otelcol,$(OTELCOL_VARS)) host
otelcol-arm64:
	$(LOCK)
	$(call sh,otelcol,$(OTELCOL_VARS)) arm64
arch-test: otelcol otelcol-arm64
	$(call sh,arch-test,TEST_BUILDFLAGS GOTESTFLAGS REAL_TAGS OTELCOL_BIN OTELCOL_ARM64_BIN QEMU_AARCH64 QEMU_LD_PREFIX CC_ARM64)
image: otelcol otelcol-arm64
	$(call sh,image,VERSION IMAGE_NAME IMAGE_ARCHIVE OTELCOL_BIN OTELCOL_ARM64_BIN)
RELEASE_CHANGELOG ?= CHANGELOG.md
release:
	$(call sh,release,SUBMAKE VERSION OTELCOL_BIN OTELCOL_ARM64_BIN IMAGE_ARCHIVE QEMU_AARCH64 QEMU_LD_PREFIX RELEASE_CHANGELOG)
# make release VERSION=0.1.0-test into build/release (its binaries and image
# in build/release-test, bin/ untouched), then test/release checks it.
release-test:
	$(call sh,release-test,SUBMAKE TEST_BUILDFLAGS GOTESTFLAGS REAL_TAGS QEMU_AARCH64 QEMU_LD_PREFIX)
gpu-check: ; $(call sh,gpu-check)
# config/local.yaml reads HOSTNAME (node_name), which bash does not export.
run: otelcol
	export HOSTNAME="$${HOSTNAME:-$$(hostname)}"
	exec "$(CURDIR)/$(OTELCOL_BIN)" --config "$(RUN_CONFIG)"
clean: ; rm -rf bin build

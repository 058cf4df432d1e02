#!/usr/bin/env bash
# make nocgo: the module without cgo, where GPU metrics are off (go-nvml
# needs cgo; internal/gpu/nocgo.go). tools/crosscheck (CROSSCHECK)
# type-checks every package of the module and its test files from source
# with CGO_ENABLED=0 (the !cgo files in, the cgo ones out), compiling
# nothing; that includes receiver/scrape's gpu_nocgo_test.go, the whole
# scrape without cgo. Then the no-cgo tests of NOCGO_PKGS run (default
# internal/gpu: nocgo_test.go, Open reports ErrUnavailable naming cgo,
# which the scrape handles as it does a node without the NVIDIA library,
# TestScrapeGPUAbsentRealNVML), matching NOCGO_RUN, compiled without
# inlining (NOCGO_GCFLAGS, default all=-l: test infrastructure, a third
# less compile time). The scrape's no-cgo test runs with
#   make nocgo NOCGO_PKGS='./internal/gpu/... ./receiver/scrape/' NOCGO_RUN=GPU
# (not in make test: its test binary is a compile of most of the module
# without cgo, which nothing else in make test shares).
# Reads GO, CROSSCHECK, TEST_TIMEOUT, GOTESTFLAGS, and NOCGO_PKGS, NOCGO_RUN,
# NOCGO_GCFLAGS (defaults below).
source "$(dirname "$0")/lib.sh"
words testflags "$GOTESTFLAGS"
: "${NOCGO_PKGS=./internal/gpu/...}" "${NOCGO_RUN=.}" "${NOCGO_GCFLAGS=all=-l}"
words pkgs "$NOCGO_PKGS"
$CROSSCHECK -goos linux -tests -C "$PWD" ./...
CGO_ENABLED=0 $GO test -gcflags="$NOCGO_GCFLAGS" -timeout "$TEST_TIMEOUT" -run "$NOCGO_RUN" "${testflags[@]}" "${pkgs[@]}"

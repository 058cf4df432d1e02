#!/usr/bin/env bash
# make gpu-check, on a node with an NVIDIA GPU and driver: builds
# internal/testing/gpucheck (cgo) into GPUCHECK_BIN and runs it: it reads
# every GPU once through the collector's NVML code (internal/gpu, the real
# libnvidia-ml.so.1) and compares each figure with nvidia-smi --query-gpu
# taken between two of its reads; fails beyond the tolerances it prints
# (docs/gpu.md has a real run). The binary alone can be copied to another
# machine. Reads GO and GPUCHECK_BIN (default below).
source "$(dirname "$0")/lib.sh"
GPUCHECK_BIN=${GPUCHECK_BIN-bin/gpucheck}
mkdir -p "$(dirname "$GPUCHECK_BIN")"
CGO_ENABLED=1 $GO build -o "$GPUCHECK_BIN" ./internal/testing/gpucheck
"$([[ $GPUCHECK_BIN == /* ]] || printf %s "$PWD/")$GPUCHECK_BIN"

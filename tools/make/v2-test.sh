#!/usr/bin/env bash
# make v2-test: the cgroup v2 node (docs/v2-node.md). internal/testing/vmnode
# builds a QEMU guest from Debian packages (kernel, systemd, CNI plugins,
# podman; cached by package version in VMNODE_CACHE) and boots it under TCG
# with no network (TestBoot); test/v2node (TestV2Node) runs the receiver's
# real-machine families in it through CRI on the systemd driver (make
# containerd-bins' containerd 2.4 and runc 1.5, shared with the guest), cAdvisor's
# load reader (field note 1) and a standalone kubelet (field note 2) beside
# it, real Podman (rootful, a pod, a systemd unit, rootless; TestPodman)
# named through its API sockets, and checks our v2 fixtures against the
# guest's kernel. The field-note tables and Podman's cgroups go to
# V2NODE_OUT. Root; in CI a missing prerequisite fails.
# Reads GO, TEST_BUILDFLAGS, GOTESTFLAGS, VMNODE_CACHE, CADVISOR_PEER_BIN,
# KUBE_BIN_DIR, CONTAINERD_BIN_DIR, CRIO_BIN_DIR (make crio-bins: TestFieldNote2CRIO),
# and V2NODE_OUT, V2NODE_TIMEOUT (defaults below).
source "$(dirname "$0")/lib.sh"
words buildflags "$TEST_BUILDFLAGS"
words testflags "$GOTESTFLAGS"
V2NODE_OUT=${V2NODE_OUT-bin/v2node}
V2NODE_TIMEOUT=${V2NODE_TIMEOUT-40m}
$GO vet "${buildflags[@]}" -tags vmnode ./internal/testing/vmnode/ ./test/v2node/
$GO vet "${buildflags[@]}" -tags v2guest ./test/v2node/
VMNODE_CACHE=$VMNODE_CACHE $GO test "${buildflags[@]}" -tags vmnode -count=1 -v -timeout 10m -run '^TestBoot$' "${testflags[@]}" ./internal/testing/vmnode/
VMNODE_CACHE=$VMNODE_CACHE V2NODE_OUT=$(abs "$V2NODE_OUT") CADVISOR_PEER_BIN=$(abs "$CADVISOR_PEER_BIN") KUBE_BIN_DIR=$(abs "$KUBE_BIN_DIR") \
  CONTAINERD_BIN_DIR=$(abs "$CONTAINERD_BIN_DIR") CRIO_BIN_DIR=$(abs "$CRIO_BIN_DIR") \
  $GO test "${buildflags[@]}" -tags vmnode -count=1 -v -timeout "$V2NODE_TIMEOUT" -run '^TestV2Node$' "${testflags[@]}" ./test/v2node/

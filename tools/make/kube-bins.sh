#!/usr/bin/env bash
# make kube-bins: the binaries of the test cluster (internal/testing/kubetest;
# docs/kube.md) into KUBE_BIN_DIR, built from tools/kube/go.mod (its own
# module, so the collector's go.mod is untouched): k8s.io/kubernetes
# KUBE_VERSION with its staging modules at v0.<minor>.<patch>, and our etcd
# main (tools/kube/etcd, on go.etcd.io/etcd/server/v3/embed). etcd is
# always built; KUBE_CMDS picks the Kubernetes commands (default: the five
# the tests run). One `go build -o DIR/`, so shared packages compile once.
# Before building it checks that tools/kube/go.mod replaces exactly the
# staging modules of the pinned k8s.io/kubernetes, each at
# v0.<minor>.<patch>, and requires KUBE_VERSION. Test infrastructure:
# compiled without inlining (KUBE_GCFLAGS, default all=-l: a third less
# compile time for a few percent more CPU in the cluster; KUBE_GCFLAGS=
# builds them as Kubernetes releases them). Timings: docs/kube.md.
# Reads GO, KUBE_BIN_DIR, KUBE_VERSION, KUBE_CMDS, KUBE_GCFLAGS.
source "$(dirname "$0")/lib.sh"
: "${KUBE_CMDS=kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl}"
: "${KUBE_GCFLAGS=all=-l}"
minor=${KUBE_VERSION#v1.} minor=${minor%%.*}
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION"
ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
mkdir -p "$KUBE_BIN_DIR"
out=$(cd "$KUBE_BIN_DIR" && pwd)
cd tools/kube
upstream=$($GO mod download -json k8s.io/kubernetes | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
want=$(sed -n "s#^\t\(k8s.io/[a-z-]*\) => ./staging/src/.*#\1 => \1 ${KUBE_VERSION/v1./v0.}#p" "$upstream" | sort)
have=$(sed -n 's#^\t\(k8s.io/[a-z-]*\) => \(k8s.io/[a-z-]*\) \(v[0-9.]*\)$#\1 => \2 \3#p' go.mod | sort)
if [[ -z $want || $want != "$have" ]]; then
  echo "tools/kube/go.mod: the replace lines differ from the staging modules of $upstream:" >&2
  diff <(echo "$want") <(echo "$have") >&2 || true
  exit 1
fi
v=$($GO list -m -f '{{.Version}}' k8s.io/kubernetes)
if [[ $v != "$KUBE_VERSION" ]]; then
  echo "tools/kube/go.mod requires k8s.io/kubernetes $v, not $KUBE_VERSION" >&2
  exit 1
fi
cmds=()
for c in $KUBE_CMDS; do cmds+=("k8s.io/kubernetes/cmd/$c"); done
CGO_ENABLED=0 $GO build -trimpath -gcflags="$KUBE_GCFLAGS" -ldflags="$ldflags" -o "$out/" ./etcd "${cmds[@]}"

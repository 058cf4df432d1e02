#!/usr/bin/env bash
# make generate: mdatagen (MDATAGEN) on metadata.yaml. mdatagen names the
# package of the generated tests after the base name of metadata.yaml's
# directory (filepath.Base, symlinks not resolved), so it runs through a
# symlink named containerstatsreceiver: the output then does not depend on
# what the clone's directory is called.
# make check-generated (tools/make/generate.sh check): generate, then fail,
# naming them, if that changed any file mdatagen writes (internal/metadata,
# documentation.md, generated_*.go; pathspecs for git status, so a deleted
# file counts too).
source "$(dirname "$0")/lib.sh"
root=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ln -s "$root" "$tmp/containerstatsreceiver"
(cd "$tmp/containerstatsreceiver" && $MDATAGEN metadata.yaml)
[[ ${1-} == check ]] || exit 0
generated=('internal/metadata' 'documentation.md' 'generated_*.go')
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "check-generated: not a git work tree, cannot compare generated files" >&2
  exit 1
fi
changes=$(git status --porcelain -- "${generated[@]}")
if [[ -n $changes ]]; then
  echo "Generated files are out of date with metadata.yaml (run 'make generate' and commit):" >&2
  echo "$changes" >&2
  git --no-pager diff --stat -- "${generated[@]}" >&2
  exit 1
fi

# Sourced by the scripts in tools/make (not run by itself): strict mode,
# the script's NAME=VALUE arguments, the repository root as the working
# directory, and two helpers.
set -euo pipefail
# The Makefile passes the variables a script reads as NAME=VALUE arguments
# ($(call sh,...)): they become shell variables, not exported, so the
# commands a script runs see the environment make gives any recipe (the
# variables of make's command line and environment), as the recipes these
# scripts replace did. The other arguments stay positional.
rest=()
for a; do
  if [[ $a =~ ^[A-Z][A-Z0-9_]*= ]]; then printf -v "${a%%=*}" %s "${a#*=}"; else rest+=("$a"); fi
done
set -- "${rest[@]}"
unset a rest
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
: "${GO:=go}"
# abs PATH: PATH, absolute against the repository root.
abs() { [[ $1 == /* ]] && printf %s "$1" || printf %s "$PWD/$1"; }
# words NAME VALUE: the array NAME of VALUE's shell words, quotes removed,
# as a Makefile recipe splits $(GOTESTFLAGS) and the like, so that
# GOTESTFLAGS="-run 'TestA|TestB' -v" keeps working.
words() { eval "$1=($2)"; }

#!/bin/sh
# Builds bench/strategies.c into DIR: DIR/strategies from the tree as it is,
# and DIR/PATCH for every patch beside this script (its variant's build), so
# that grid.sh can run variants of several patches in one grid:
#   bench/search_trials/build_all.sh DIR
# With CC="cc -static" the builds carry to another machine (the GPU
# machine's cores) without its libraries.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: bench/search_trials/build_all.sh DIR" >&2; exit 2; }
mkdir -p "$1"
dir=$(cd "$1" && pwd)
"$root/bench/build_replay_tool.sh" strategies "$dir/strategies"
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
for p in "$here"/*.patch; do
  rm -rf "${tree:?}"/*
  cp -r "$root/include" "$root/src" "$root/bench" "$tree/"
  (cd "$tree" && patch -s -p1 <"$p")
  "$tree/bench/build_replay_tool.sh" strategies "$dir/$(basename "$p" .patch)"
done

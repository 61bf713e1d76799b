#!/bin/sh
# Builds bench/strategies.c into DIR: DIR/strategies from the tree as it is,
# and DIR/PATCH for every patch beside this script (its variant's build), so
# that grid.sh can run variants of several patches in one grid:
#   bench/search_trials/build_all.sh DIR
# With CC="cc -static" the builds carry to another machine (the GPU
# machine's cores) without its libraries.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 1 ] || { echo "usage: bench/search_trials/build_all.sh DIR" >&2; exit 2; }
mkdir -p "$1"
dir=$(cd "$1" && pwd)
"$here/build.sh" - "$dir/strategies"
for p in "$here"/*.patch; do
  "$here/build.sh" "$p" "$dir/$(basename "$p" .patch)"
done

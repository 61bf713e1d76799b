#!/bin/sh
# Builds bench/strategies.c into OUTPUT with PATCH (one of the .patch files
# beside this script, or a path to one) applied to a copy of the tree, or
# from the tree as it is for -:
#   bench/search_trials/build.sh PATCH|- OUTPUT
# run.sh, misses.sh and build_all.sh build their variants with it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 2 ] || { echo "usage: bench/search_trials/build.sh PATCH|- OUTPUT" >&2; exit 2; }
[ "$1" != - ] || exec "$root/bench/build_replay_tool.sh" strategies "$2"
patch=$1
[ -f "$patch" ] || patch="$here/$patch"
[ -f "$patch" ] || { echo "search_trials: no patch $1" >&2; exit 2; }
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
cp -r "$root/include" "$root/src" "$root/bench" "$tree/"
(cd "$tree" && patch -s -p1 <"$patch")
"$tree/bench/build_replay_tool.sh" strategies "$2"

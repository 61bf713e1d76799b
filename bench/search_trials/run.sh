#!/bin/sh
# Replays a search variant that was measured and not kept (docs/SEARCH.md,
# "How many repeats miss, and trials not kept"): applies PATCH (one of the
# .patch files beside this script, each a change to src/search/forest.c
# whose setting comes from an environment variable) to a copy of the tree,
# builds bench/strategies.c there, and runs it with the remaining arguments:
#   [VAR=VALUE] bench/search_trials/run.sh PATCH STRATEGIES_ARGS...
# e.g. KT_INIT=20 bench/search_trials/run.sh random_start.patch -r 50 -s 1 -b 100 -S forest_align -v FILES
# Without its variable a patch changes nothing (the default's figures).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 2 ] || { echo "usage: bench/search_trials/run.sh PATCH STRATEGIES_ARGS..." >&2; exit 2; }
patch=$1
shift
[ -f "$patch" ] || patch="$root/bench/search_trials/$patch"
[ -f "$patch" ] || { echo "search_trials: no patch $1" >&2; exit 2; }
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
cp -r "$root/include" "$root/src" "$root/bench" "$tree/"
(cd "$tree" && patch -s -p1 <"$patch")
"$tree/bench/build_replay_tool.sh" strategies "$tree/strategies"
"$tree/strategies" "$@"

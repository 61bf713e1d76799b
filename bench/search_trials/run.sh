#!/bin/sh
# Replays a search variant that was measured and not kept (docs/SEARCH.md,
# "How many repeats miss, and trials not kept"): builds bench/strategies.c
# with PATCH (one of the .patch files beside this script, each a change to
# src/search/forest.c whose setting comes from an environment variable;
# build.sh) and runs it with the remaining arguments:
#   [VAR=VALUE] bench/search_trials/run.sh PATCH STRATEGIES_ARGS...
# e.g. KT_INIT=20 bench/search_trials/run.sh random_start.patch -r 50 -s 1 -b 100 -S forest_align -v FILES
# Without its variable a patch changes nothing (the default's figures).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] || { echo "usage: bench/search_trials/run.sh PATCH STRATEGIES_ARGS..." >&2; exit 2; }
patch=$1
shift
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
"$here/build.sh" "$patch" "$bin/strategies"
"$bin/strategies" "$@"

#!/bin/sh
# The miss counts of docs/SEARCH.md's tables of search trials: for every
# file, the repeats that ended under 0.80 of the optimum at 100 evaluations
# summed over SEEDS (50 repeats each), and the mean fraction over them:
#   [VAR=VALUE] bench/search_trials/misses.sh PATCH|- STRATEGY "SEEDS" FILES...
# PATCH is one of the patches beside this script (built by build.sh, its
# variable from the environment), or - for the tree as it is. The count is
# grid.sh's for a grid of one variant.
# e.g. KT_DIV=2 bench/search_trials/misses.sh escapes.patch forest_align "1 2 3 4 5 6" DIR/*.json.gz
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 4 ] || { echo "usage: bench/search_trials/misses.sh PATCH|- STRATEGY \"SEEDS\" FILES..." >&2; exit 2; }
patch=$1 strategy=$2 seeds=$3
shift 3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$here/build.sh" "$patch" "$out/strategies"
echo misses >"$out/variants"
GRID_STRATEGY=$strategy "$here/grid.sh" "$out/strategies" "$out/variants" "$seeds" "$out/grid" "$@" >/dev/null
n=$(echo "$seeds" | wc -w)
# Every seed's job must have finished: grid.sh drops the lines of one that failed.
if grep -qv " ($n seeds)\$" "$out/grid/summary.txt" || [ ! -s "$out/grid/summary.txt" ]; then
  echo "misses.sh: a replay failed (grid.sh's summary: $(cat "$out/grid/summary.txt"))" >&2
  exit 1
fi
sed 's/^misses //; s/ ([0-9]* seeds)$//' "$out/grid/summary.txt"

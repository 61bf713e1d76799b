#!/bin/sh
# The miss counts of docs/SEARCH.md's tables of search trials: for every
# file, the repeats that ended under 0.80 of the optimum at 100 evaluations
# summed over SEEDS (50 repeats each), and the mean fraction over them:
#   [VAR=VALUE] bench/search_trials/misses.sh PATCH|- STRATEGY "SEEDS" FILES...
# PATCH is one of the patches beside this script (run through run.sh, its
# variable from the environment), or - for the tree as it is.
# e.g. KT_DIV=2 bench/search_trials/misses.sh escapes.patch forest_align "1 2 3 4 5 6" DIR/*.json.gz
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 4 ] || { echo "usage: bench/search_trials/misses.sh PATCH|- STRATEGY \"SEEDS\" FILES..." >&2; exit 2; }
patch=$1 strategy=$2 seeds=$3
shift 3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for s in $seeds; do
  if [ "$patch" = - ]; then
    [ -x "$out/strategies" ] || "$here/../build_replay_tool.sh" strategies "$out/strategies"
    "$out/strategies" -r 50 -s "$s" -b 100 -S "$strategy" -v "$@" 2>>"$out/lines" >/dev/null
  else
    "$here/run.sh" "$patch" -r 50 -s "$s" -b 100 -S "$strategy" -v "$@" 2>>"$out/lines" >/dev/null
  fi
done
# Lines "FILE STRATEGY 100: mean M std S min W below0.80 N failed F".
awk '/ below0\.80 / {f = $1; m[f] += $5; b[f] += $11; n[f]++}
  END {for (f in m) printf "%s: mean %.4f, %d repeats under 0.80\n", f, m[f] / n[f], b[f]}' "$out/lines" | sort

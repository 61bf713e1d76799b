#!/bin/sh
# Replay evaluation of the search strategies (docs/SEARCH.md):
#   bench/strategies.sh [DATASET_DIR] [REPEATS] [BUDGETS]
# runs every strategy (exhaustive aside) on every T4 results file of
# DATASET_DIR (default tests/data/t4, two of the six files docs/SEARCH.md
# replays; its "Recorded spaces" says where all six are) at BUDGETS
# (default 25,50,100,200,400) with REPEATS (default 100) repeats and seed 1,
# and prints a Markdown table of the mean fraction of optimum (WARM=1: every file
# warm-started from the best of the other files of its kernel). The bench program
# is built from the sources it needs, so it runs whatever else is half-built.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/tests/data/t4}
repeats=${2:-100}
budgets=${3:-25,50,100,200,400}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$root/bench/build_replay_tool.sh" strategies "$out/strategies"

files=$(ls "$dir"/*.json.gz "$dir"/*_results*.json 2>/dev/null | grep -v _T1 | tr "\n" " " || true)
[ -n "$files" ] || { echo "no T4 results files in $dir" >&2; exit 2; }
strategies=$("$out/strategies" -r 1 -b 1 $files | sed -n 's/^| \([a-z_]*\) | 1 |.*/\1/p')

# One process per strategy, as many at once as there are cores.
jobs=$(nproc 2>/dev/null || echo 2)
for s in $strategies; do echo "$s"; done |
  xargs -P "$jobs" -I{} sh -c "'$out/strategies' -r $repeats -b $budgets -S {} ${WARM:+-w} $files > '$out/{}.md'"

echo "Replay of $(echo $files | wc -w) files, $repeats repeats, seed 1 (bench/strategies.sh)."
echo
first=1
for s in $strategies; do
  if [ $first = 1 ]; then cat "$out/$s.md"; first=0; else tail -n +3 "$out/$s.md"; fi
done

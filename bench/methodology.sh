#!/bin/sh
# The autotuning_methodology score of every strategy (docs/SEARCH.md):
#   bench/methodology.sh [DATASET_DIR] [REPEATS] [-t DIR] [-S name,name]
# on every T4 results file of DATASET_DIR (default tests/data/t4) with
# REPEATS (default 100) repeats and seed 1. The bench program is built from
# the sources it needs, so it runs whatever else is half-built.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/tests/data/t4}
repeats=${2:-100}
shift $(($# < 2 ? $# : 2))
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$root/bench/build_replay_tool.sh" methodology "$out/methodology"

files=$(ls "$dir"/*.json.gz "$dir"/*_results*.json 2>/dev/null | grep -v _T1 | tr "\n" " " || true)
[ -n "$files" ] || { echo "no T4 results files in $dir" >&2; exit 2; }
"$out/methodology" -r "$repeats" -s 1 "$@" $files

#!/bin/sh
# The held-out check of the default strategy (docs/SEARCH.md, "Held-out
# files"), run once by the integrator on recorded spaces the strategy was
# not developed on (issue 32: the benchmark hub's A6000, MI250X and W7800
# files):
#   bench/heldout.sh DATASET_DIR [REPEATS]
# For every T4 results file of DATASET_DIR it prints the default strategy's
# fraction of the optimum at 100 evaluations (mean and worst of REPEATS
# repeats, default 50, seed 1; `ktune replay`), then the autotuning_methodology
# score of the default and of random search (bench/methodology.sh, the same
# repeats). Needs `make build` (it runs build/ktune, or $KTUNE).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: bench/heldout.sh DATASET_DIR [REPEATS]" >&2; exit 2; }
dir=$1
repeats=${2:-50}
ktune=${KTUNE:-$root/build/ktune}
[ -x "$ktune" ] || { echo "$ktune: not built; run make build first (or set KTUNE)" >&2; exit 2; }
files=$(ls "$dir"/*.json.gz "$dir"/*_results*.json 2>/dev/null | grep -v _T1 | tr "\n" " " || true)
[ -n "$files" ] || { echo "no T4 results files in $dir" >&2; exit 2; }

echo "Default strategy, 100 evaluations, $repeats repeats, seed 1 (ktune replay FILE --budget 100 --repeats $repeats --seed 1):"
echo
echo "| file | strategy | mean | worst | median |"
echo "|---|---|---:|---:|---:|"
for f in $files; do
  "$ktune" replay "$f" --budget 100 --repeats "$repeats" --seed 1 --json |
    python3 -c 'import json, os, sys
r = json.load(sys.stdin)
name = os.path.basename(r["file"]).split(".json")[0]
print("| %s | %s | %.3f | %.3f | %.3f |" % (name, r["strategy"], r["fraction_of_optimum"], r["fraction_min"], r["fraction_median"]))'
done
echo
"$root/bench/methodology.sh" "$dir" "$repeats" -S default,random

#!/bin/sh
# Kernel Tuner's own search strategies scored beside ktune's with the
# autotuning_methodology score (docs/SEARCH.md, issue 32):
#   bench/kernel_tuner_methodology.sh [DATASET_DIR] [REPEATS] [STRATEGIES]
# For every T4 results file of DATASET_DIR (default tests/data/t4; the
# kernel's T1 file, NAME_T1.json for NAME_GPU.json.gz, must sit beside it),
# runs Kernel Tuner's STRATEGIES (comma list, default random_sample,
# genetic_algorithm,simulated_annealing,greedy_ils) REPEATS times (default
# 20) in its simulation mode (bench/peers/kernel_tuner_replay.py), each until
# the window's end plus 10% of recorded time, and prints the score of each
# with ktune's implementation (bench/methodology -x). Needs Kernel Tuner
# 1.5.0 in the Python that PYTHON names (default python3):
#   python3 -m venv /tmp/ktv && /tmp/ktv/bin/pip install kernel_tuner==1.5.0
#   PYTHON=/tmp/ktv/bin/python bench/kernel_tuner_methodology.sh DATASET_DIR 20
# KEEP=DIR keeps the repeats (DIR/kt_STRATEGY_FILE.tsv) for
# bench/methodology_check.py, which scores them with the package itself.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/tests/data/t4}
repeats=${2:-20}
strategies=${3:-random_sample,genetic_algorithm,simulated_annealing,greedy_ils}
python=${PYTHON:-python3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
traces=${KEEP:-$out/traces}
mkdir -p "$traces"

"$root/bench/build_replay_tool.sh" methodology "$out/methodology"
"$python" -c 'import kernel_tuner' 2>/dev/null || { echo "kernel_tuner is not importable by $python (see the header of $0)" >&2; exit 2; }

files=$(ls "$dir"/*.json.gz "$dir"/*_results*.json 2>/dev/null | grep -v _T1 | tr "\n" " " || true)
[ -n "$files" ] || { echo "no T4 results files in $dir" >&2; exit 2; }
# The window of every file, from ktune's implementation: "| NAME | ... | START .. END | ...".
"$out/methodology" -r 1 -S random $files | sed -n 's/^| \([^ |]*\) | [0-9]* | .* | [0-9.]* \.\. \([0-9.]*\) | .*/\1 \2/p' >"$out/windows"
names=""
for s in $(echo "$strategies" | tr , ' '); do
  names="$names${names:+,}kt_$s"
  for f in $files; do
    name=$(basename "$f" | sed 's/\.json.*//')
    t1="$dir/${name%%_*}_T1.json"
    [ -f "$t1" ] || { echo "$t1 is missing (the T1 file of $f)" >&2; exit 2; }
    end=$(awk -v n="$name" '$1 == n { print $2 * 1.1 }' "$out/windows")
    "$python" "$root/bench/peers/kernel_tuner_replay.py" "$f" "$t1" "$s" "$repeats" "$end" "$traces/kt_${s}_$name.tsv" 2>/dev/null
  done
done
"$out/methodology" -S "$names" -x "$traces" $files

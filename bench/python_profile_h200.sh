#!/usr/bin/env bash
# Where a ktune call's host time goes from Python on the H200: each torch
# accessor the C extension reads, timed alone, beside the whole call
# (bench/python_profile.py; docs/BENCHMARKS.md, "Python"). From the
# repository root, with .carry carried:
#
#   bench/python_profile_h200.sh            (results under $OUT, else ./build-python)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUT=${OUT:-$ROOT/build-python}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"
export KTUNE_DB="$WORK/results.db"
. "$ROOT/tests/gpu/python_env.sh"
python_env "$WORK" "$OUT" || { echo "build or install failed (see $OUT/build.log, install.log)"; exit 1; }
"$PY" bench/python_profile.py "$OUT" 2>"$OUT/profile.err" | tee "$OUT/python_profile.txt"
exit "${PIPESTATUS[0]}"

#!/usr/bin/env bash
# Host time per call from Python, ktune beside Triton's @triton.autotune in
# the same run (docs/BENCHMARKS.md, "Python"). From the
# repository root, with .carry carried:
#
#   bench/python_call_cost_h200.sh            (results under $OUT, else ./build-python)
#
# Builds libktune (scripts/h200_build.sh), installs python/ without the
# network (tests/gpu/python_env.sh), then runs bench/python_call_cost_h200.py:
# - the first call for a new key: ktune.tune of kernels/cuda/elementwise.cu
#   for two sizes (16 configurations, before CUDA is initialised), Triton's
#   first call of two keys (compile + autotune of 15 configurations);
# - later calls: 2000 calls x 7 on a 4096-element tensor, host time per call
#   (no synchronize in the loop) and with a synchronize after it, for ktune
#   through the C extension ktune._launch (ktune_extension) and through the
#   ctypes fallback (ktune_ctypes), Triton, torch's own ops and kt_launch
#   called bare through ctypes.
# Look for: "launch path: extension" (a WARNING line instead says the
# extension was not built, and why: see install.log), ktune_extension's
# host us/call (goal under 5 us) against Triton's (21.3 us measured before)
# and ktune_ctypes' (12.5 us before); python_bench.json has every figure.
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
"$PY" bench/python_call_cost_h200.py "$OUT" 2>"$OUT/bench.err" | tee "$OUT/python_bench.txt"
exit "${PIPESTATUS[0]}"

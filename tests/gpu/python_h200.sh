#!/usr/bin/env bash
# Does the Python package launch right on a GPU (the H200)? From the repository
# root, with .carry carried (scripts/h200_build.sh --prepare makes it):
#
#   tests/gpu/python_h200.sh [OUTDIR]      (OUTDIR: $OUT, else ./gpu-out)
#
# Builds libktune with scripts/h200_build.sh, installs python/ into a virtual
# environment without the network (pip install --no-build-isolation
# --no-deps, KTUNE_LIBRARY = that build; without venv or pip it imports the
# package from python/ instead), then runs tests/gpu/python_h200.py: torch
# tensors through kernels/cuda/elementwise.cu and sgemm.cu compared with
# torch's results on the current and on a side stream (each launch ordered
# after work queued before it on that stream), CuPy arrays when CuPy is
# there, the GPU's error paths, each through the C extension ktune._launch
# and through the ctypes fallback. OUTDIR/python.txt: one PASS/FAIL line per
# check (look for "the C extension is the default launch path" and
# "valid calls launched in C"; install.log says why when the extension was
# not built); python_facts.json: tuning times; build.log, install.log.
# Exit status 0 when every check passed.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
OUTDIR=${1:-${OUT:-$ROOT/gpu-out}}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUTDIR"
export KTUNE_DB="$WORK/results.db"
. "$ROOT/tests/gpu/python_env.sh"
python_env "$WORK" "$OUTDIR" || { echo "FAIL  build or install (see $OUTDIR/build.log, install.log)" | tee "$OUTDIR/python.txt"; exit 1; }
echo "ktune Python on $(hostname), $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')" |
  tee "$OUTDIR/python.txt"
"$PY" tests/gpu/python_h200.py "$OUTDIR" 2>"$OUTDIR/python.err" | tee -a "$OUTDIR/python.txt"
exit "${PIPESTATUS[0]}"

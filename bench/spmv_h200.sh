#!/usr/bin/env bash
# Sparse matrix-vector product on the H200, tuned on a real matrix from a
# file and on invented data (does tuning on the real data pick a better
# configuration?): kernels/cuda/spmv.cu (CSR, TPR
# threads per row, BLOCK threads per block) is tuned
#   1. on invented data: row_ptr = iota, one element per row at a random
#      column (what ktune could give it before --input);
#   2. on a power-law matrix written here with NumPy (row lengths from a
#      Zipf law: most rows short, a few with thousands of elements, columns
#      clustered around the diagonal), through --input;
# then both winners are re-measured side by side on the real matrix
# (`ktune bench`, ROUNDS times each, alternating), which is the comparison
# the closing note reports.
#
# From the repository root on the device machine (python3 with NumPy there):
#   bench/spmv_h200.sh                     ROWS=2097152 BUDGET=20s ROUNDS=5 by default
# Writes to $OUT (default ./spmv-h200-out): summary.txt (the figures),
# invented.json, real.json (`ktune tune --json`), bench-*.json, build.log.
# Look for: "on device 0 (NVIDIA H200): 24 of the 24 valid configurations fit its limits (1024
# threads per block, ...)"; the two winners (expected to differ: few threads per row on the
# diagonal, more on the long rows), and "real-data winner is N.NNx the speed
# of the invented-data winner on the real matrix".
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUT=${OUT:-$ROOT/spmv-h200-out}
ROWS=${ROWS:-2097152}
BUDGET=${BUDGET:-20s}
ROUNDS=${ROUNDS:-5}
mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export KTUNE_DB="$WORK/results.db"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }

KTUNE=$(scripts/h200_build.sh "$WORK/build" 2>"$OUT/build.log" | tail -1)
[ -x "$KTUNE" ] || { say "build failed: see $OUT/build.log"; exit 1; }
say "spmv on real and invented data, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), commit $(git rev-parse --short HEAD 2>/dev/null)"

# What the device can launch (ktune space --device: the thread limit).
"$KTUNE" space kernels/cuda/spmv.cu --device 0 | tail -1 | tee -a "$SUMMARY"

# --- the real matrix ------------------------------------------------------------
python3 - "$WORK" "$ROWS" <<'PY' | tee -a "$SUMMARY"
import sys
import numpy as np
folder, rows = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(16)
# Row lengths from a Zipf law (a = 1.8), capped at 8192: a web graph's shape.
lengths = np.minimum(rng.zipf(1.8, rows), 8192).astype(np.int64)
row_ptr = np.zeros(rows + 1, dtype=np.int64)
np.cumsum(lengths, out=row_ptr[1:])
nnz = int(row_ptr[-1])
# Columns near the diagonal (a normal spread of rows / 64), some anywhere.
rows_of = np.repeat(np.arange(rows), lengths)
near = rows_of + rng.normal(0, rows / 64, nnz).astype(np.int64)
far = rng.integers(0, rows, nnz)
col = np.where(rng.random(nnz) < 0.8, near, far) % rows
np.save(folder + "/rp.npy", row_ptr.astype(np.int32))
np.save(folder + "/col.npy", col.astype(np.int32))
np.save(folder + "/val.npy", rng.uniform(-1, 1, nnz).astype(np.float32))
np.save(folder + "/x.npy", rng.uniform(-1, 1, rows).astype(np.float32))
print("real matrix: %d rows, %d elements (%.1f per row; longest row %d, median %d)"
      % (rows, nnz, nnz / rows, lengths.max(), np.median(lengths)))
PY
INPUTS="--input row_ptr=$WORK/rp.npy --input col=$WORK/col.npy --input val=$WORK/val.npy --input x=$WORK/x.npy"

winner_of() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(' '.join('%s=%s' % kv for kv in d['winner']['config'].items()))" "$1"; }
median_of() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['winner']['median_s'])" "$1"; }

# --- the two tunings ---------------------------------------------------------------
"$KTUNE" tune kernels/cuda/spmv.cu --dim ROWS="$ROWS" --budget "$BUDGET" --json --quiet >"$OUT/invented.json" 2>>"$OUT/tune.log"
say "tuned on invented data (ROWS=$ROWS, one element per row), exit $?: winner $(winner_of "$OUT/invented.json")"
# shellcheck disable=SC2086
"$KTUNE" tune kernels/cuda/spmv.cu $INPUTS --budget "$BUDGET" --json --quiet >"$OUT/real.json" 2>>"$OUT/tune.log"
say "tuned on the real matrix, exit $?: winner $(winner_of "$OUT/real.json") ($(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['sizes'])" "$OUT/real.json"))"
A=$(winner_of "$OUT/invented.json")
B=$(winner_of "$OUT/real.json")

# --- both winners on the real matrix, side by side -------------------------------
runs="$WORK/runs.txt"
: >"$runs"
for r in $(seq "$ROUNDS"); do
  for which in invented real; do
    cfg=$A
    [ $which = real ] && cfg=$B
    # shellcheck disable=SC2086
    "$KTUNE" bench kernels/cuda/spmv.cu $INPUTS --autotune "$cfg" --json --quiet >"$OUT/bench-$which-$r.json" 2>>"$OUT/tune.log"
    python3 - "$OUT/bench-$which-$r.json" "$which" "$cfg" <<'PY' >>"$runs"
import json, sys
path, which, cfg = sys.argv[1:]
d = json.load(open(path))
want = dict(kv.split("=") for kv in cfg.split())
for c in d["configurations"]:
    if {k: str(v) for k, v in c["config"].items()} == want and c["status"] == "ok":
        print(which, c["median_s"])
        break
else:
    print(which, "nan")
PY
  done
done
python3 - "$runs" "$A" "$B" <<'PY' | tee -a "$SUMMARY"
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
a = [float(r[1]) for r in rows if r[0] == "invented"]
b = [float(r[1]) for r in rows if r[0] == "real"]
ma, mb = statistics.median(a), statistics.median(b)
print("on the real matrix, median of %d rounds: invented-data winner (%s) %.1f us, real-data winner (%s) %.1f us"
      % (len(a), sys.argv[2], ma * 1e6, sys.argv[3], mb * 1e6))
print("real-data winner is %.2fx the speed of the invented-data winner on the real matrix" % (ma / mb))
PY

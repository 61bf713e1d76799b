#!/usr/bin/env bash
# kernels/cuda/sgemm.cu (fp32, no tensor cores) on the H200 at 4096^3,
# against cuBLAS SGEMM (torch.mm, TF32 off) in the same run. From the
# repository root, with .carry carried:
#
#   bench/sgemm_h200.sh
#
# 1. builds ktune (scripts/h200_build.sh);
# 2. torch makes A and B of small integers and their exact product C
#    (bench/sgemm_ref.py): every configuration must match C exactly, the
#    default one first;
# 3. ktune tunes the whole space (exhaustive), each configuration verified
#    against torch's C (--expect);
# 4. the winner alone again, on ktune's own random data (no --input): the
#    figure does not depend on the integers' low power draw;
# 5. cuBLAS on both kinds of data.
# Everything lands in $OUT (log.txt, *.json, cublas.txt); the last lines
# printed are the table.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUT=${OUT:-$ROOT/build-sgemm}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/sgemm.XXXXXX)
trap 'rm -rf "$W"' EXIT
T0=$(date +%s)
LOG=$OUT/log.txt
say() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$LOG"; }
K=kernels/cuda/sgemm.cu
S=4096

say "building"
KTUNE=$(scripts/h200_build.sh "$W/build" 2>"$OUT/build.err" | tail -1)
[ -x "$KTUNE" ] || { tail -30 "$OUT/build.err"; exit 1; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv | tee -a "$LOG"

say "reference data (torch)"
python3 bench/sgemm_ref.py data "$W" $S $S $S 2>>"$LOG" || exit 1
DATA="--dim M=$S --dim N=$S --dim K=$S --input a=$W/a.bin:f32 --input b=$W/b.bin:f32 --expect c=$W/c.bin:f32"

say "default configuration against torch"
# shellcheck disable=SC2086
timeout 60 "$KTUNE" tune $K $DATA --autotune "$("$KTUNE" space $K | sed -n 's/^default: //p')" --no-db --json \
  >"$OUT/default.json" 2>>"$LOG"
echo "default exit $?" | tee -a "$LOG"

say "tuning ${S}^3, exhaustive, against torch"
# shellcheck disable=SC2086
timeout 200 "$KTUNE" tune $K $DATA --strategy exhaustive --no-db --json >"$OUT/tune.json" 2>>"$LOG"
echo "tune exit $?" | tee -a "$LOG"

WINNER=$(python3 -c 'import json,sys; w=json.load(open(sys.argv[1]))["winner"]["config"]; print(" ".join(f"{k}={v}" for k,v in w.items()))' "$OUT/tune.json")
say "the winner ($WINNER) on ktune's random data"
timeout 60 "$KTUNE" tune $K --dim M=$S --dim N=$S --dim K=$S --autotune "$WINNER" --no-db --json \
  >"$OUT/winner_random.json" 2>>"$LOG"
echo "winner exit $?" | tee -a "$LOG"

say "cuBLAS"
python3 bench/sgemm_ref.py cublas $S $S $S >"$OUT/cublas.txt" 2>>"$LOG"
say "done"
python3 bench/sgemm_table.py "$OUT" $S | tee "$OUT/table.md"

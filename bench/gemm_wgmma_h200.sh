#!/usr/bin/env bash
# kernels/cuda/gemm_wgmma.cu on the H200, against cuBLAS (torch.mm) in the
# same run. From the repository root, with .carry carried:
#
#   bench/gemm_wgmma_h200.sh
#
# 1. builds ktune (scripts/h200_build.sh);
# 2. torch makes random bf16 A, B and the fp32-accumulated reference C for
#    4096^3 (bench/gemm_wgmma_ref.py); the default configuration alone is
#    checked against it (--expect): the kernel is right before it is tuned;
# 3. ktune tunes 4096^3 over the whole space (exhaustive), every
#    configuration verified against torch's C;
# 4. cuBLAS (torch.mm) times the same shapes;
# 5. with time left (DEADLINE, default 540 s), the LLM shapes in one sweep
#    (--sizes, one @key), BUDGET seconds each (default 25), verified against
#    the default configuration; cuBLAS on the same shapes;
# 6. with time left, Triton's tutorial matmul under its autotuner on every
#    shape (bench/gemm_wgmma_triton.py; TRITON=0 skips it): its TFLOP/s and
#    the wall time of each shape's autotuning.
# Everything lands in $OUT (log.txt, *.json, cublas*.txt, triton.txt); the last lines
# printed are the table.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUT=${OUT:-$ROOT/build-gemm-wgmma}
DEADLINE=${DEADLINE:-540}
BUDGET=${BUDGET:-25}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/gemm_wgmma.XXXXXX)
trap 'rm -rf "$W"' EXIT
T0=$(date +%s)
LOG=$OUT/log.txt
say() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$LOG"; }
left() { echo $((DEADLINE - ($(date +%s) - T0))); }
K=kernels/cuda/gemm_wgmma.cu

say "building"
KTUNE=$(scripts/h200_build.sh "$W/build" 2>"$OUT/build.err" | tail -1)
[ -x "$KTUNE" ] || { tail -30 "$OUT/build.err"; exit 1; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv | tee -a "$LOG"

say "reference data (torch)"
python3 bench/gemm_wgmma_ref.py data "$W" 4096 4096 4096 2>>"$LOG" || exit 1
DATA="--dim M=4096 --dim N=4096 --dim K=4096 --input a=$W/a.bin:bf16 --input b=$W/b.bin:bf16 --expect c=$W/c.bin:bf16"

say "default configuration against torch"
# shellcheck disable=SC2086
timeout 120 "$KTUNE" tune $K $DATA --autotune "BN=256 WG_M=64 CONSUMERS=2 STAGES=4 GROUP_M=8 TILES_PER_BLOCK=1" --no-db --json \
  >"$OUT/default.json" 2>>"$LOG"
echo "default exit $?" | tee -a "$LOG"

say "tuning 4096^3, exhaustive, against torch"
# shellcheck disable=SC2086
timeout 240 "$KTUNE" tune $K $DATA --strategy exhaustive --no-db --json >"$OUT/tune4096.json" 2>>"$LOG"
echo "tune exit $?" | tee -a "$LOG"
printf 'M=4096 N=4096 K=4096\n' >"$W/one.txt"
python3 bench/gemm_wgmma_ref.py cublas "$W/one.txt" >"$OUT/cublas4096.txt" 2>>"$LOG"

cat >"$W/llm.txt" <<'SIZES'
M=128 N=4096 K=4096
M=128 N=14336 K=4096
M=128 N=4096 K=14336
M=512 N=4096 K=4096
M=512 N=14336 K=4096
M=512 N=4096 K=14336
M=2048 N=4096 K=4096
M=2048 N=14336 K=4096
M=2048 N=4096 K=14336
M=8192 N=4096 K=4096
M=8192 N=14336 K=4096
M=8192 N=4096 K=14336
SIZES
if [ "$(left)" -gt 120 ]; then
  say "LLM shapes: cuBLAS, then one sweep at --budget ${BUDGET}s a key"
  python3 bench/gemm_wgmma_ref.py cublas "$W/llm.txt" >"$OUT/cublas_llm.txt" 2>>"$LOG"
  timeout $(($(left) - 20)) "$KTUNE" tune $K --sizes "$W/llm.txt" --budget "${BUDGET}s" --db "$W/r.db" --json \
    >"$OUT/sweep.json" 2>>"$LOG"
  echo "sweep exit $?" | tee -a "$LOG"
fi
if [ "${TRITON:-1}" != 0 ] && [ "$(left)" -gt 40 ]; then
  say "Triton's tutorial matmul, autotuned per shape"
  cat "$W/one.txt" "$W/llm.txt" >"$W/all.txt"
  timeout $(($(left) - 10)) python3 bench/gemm_wgmma_triton.py "$W/all.txt" >"$OUT/triton.txt" 2>>"$LOG"
  echo "triton exit $?" | tee -a "$LOG"
fi
say "done"
tail -5 "$OUT/default.json"
python3 bench/gemm_wgmma_table.py "$OUT" | tee "$OUT/table.md"

#!/usr/bin/env bash
# Does ktune rank elementwise.cu's configurations as the kernels' own times
# do, at every size? (issue 27, item 6). For N = 2^14, 2^18, 2^22, 2^26:
# ktune tunes every configuration (16) with --timing auto and with --timing
# events (the launch-by-launch timing of before); bench/graph_timer.cu, built
# by nvcc once per configuration, times each apart from ktune (200 launches
# in a CUDA graph, L2 flushed before each replay, median of 30).
# bench/timing_rank.py prints Spearman's rho and the winner's regret.
#   bench/timing_rank_h200.sh [OUTDIR]     (on the H200 machine)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUTDIR=${1:-${OUT:-$ROOT/gpu-out}}
mkdir -p "$OUTDIR"
KTUNE=$(scripts/h200_build.sh 2>"$OUTDIR/build.log" | tail -1)
[ -x "$KTUNE" ] || { echo "FAIL: build (see build.log)"; tail -20 "$OUTDIR/build.log"; exit 1; }
SIZES="16384 262144 4194304 67108864"
BIN=$(mktemp -d)
DATA=$(mktemp -d) # per-size results; only the table and one archive go to OUTDIR (8 files come back)
nvcc --version | tail -1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv,noheader
# One nvcc build per configuration, several at once.
for b in 128 256 512 1024; do for v in 1 2 4 8; do echo "$b $v"; done; done |
  xargs -P 16 -n 2 sh -c 'nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -DBLOCK=$0 -DVEC=$1 -o '"$BIN"'/gt_$0_$1 bench/graph_timer.cu' ||
  { echo "FAIL: nvcc"; exit 1; }
for n in $SIZES; do
  mkdir -p "$DATA/$n"
  for b in 128 256 512 1024; do for v in 1 2 4 8; do
    echo "$b $v $("$BIN/gt_${b}_$v" "$n")"
  done; done >"$DATA/$n/graph.txt"
  for timing in auto events; do
    "$KTUNE" tune kernels/cuda/elementwise.cu --backend cuda --dim N=$n --timing $timing --no-db --no-cache --quiet \
      --json >"$DATA/$n/$timing.json" 2>"$DATA/$n/$timing.err" || echo "ktune N=$n --timing $timing: exit $?"
  done
done
python3 bench/timing_rank.py "$DATA" $SIZES | tee "$OUTDIR/table.md"
tar -C "$DATA" -czf "$OUTDIR/timing_rank.tar.gz" $SIZES

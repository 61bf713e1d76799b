#!/usr/bin/env bash
# Does ktune rank elementwise.cu's configurations as the kernels' own times
# do, at every size? (issue 27, item 6). For N = 2^14, 2^18, 2^22, 2^26:
# ktune tunes every configuration (16) with --timing auto and with --timing
# events (the launch-by-launch timing of before); bench/graph_timer.cu, built
# by nvcc once per configuration, times each apart from ktune (200 launches
# in a CUDA graph, L2 flushed before each replay, median of 30).
# bench/timing_rank.py prints Spearman's rho and the winner's regret.
# RANK_KERNEL=softmax does the same for kernels/cuda/softmax.cu (18
# configurations) at decode sizes: rows x columns 8x4096, 64x4096, 64x32768.
#   [RANK_KERNEL=softmax] bench/timing_rank_h200.sh [OUTDIR]     (on the H200 machine)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUTDIR=${1:-${OUT:-$ROOT/gpu-out}}
mkdir -p "$OUTDIR"
KTUNE=$(scripts/h200_build.sh 2>"$OUTDIR/build.log" | tail -1)
[ -x "$KTUNE" ] || { echo "FAIL: build (see build.log)"; tail -20 "$OUTDIR/build.log"; exit 1; }
KERNEL=${RANK_KERNEL:-elementwise}
case $KERNEL in
elementwise) SIZES="16384 262144 4194304 67108864" BLOCKS="128 256 512 1024" VECS="1 2 4 8" DEFINE= ;;
softmax) SIZES="8x4096 64x4096 64x32768" BLOCKS="32 64 128 256 512 1024" VECS="1 2 4" DEFINE=-DSOFTMAX ;;
*) echo "RANK_KERNEL: elementwise or softmax, not $KERNEL"; exit 2 ;;
esac
# ktune's dimensions and graph_timer's arguments for one size
dims() { case $KERNEL in softmax) echo "--dim R=${1%x*} --dim C=${1#*x}" ;; *) echo "--dim N=$1" ;; esac; }
args() { echo "$1" | tr x ' '; }
BIN=$(mktemp -d)
DATA=$(mktemp -d) # per-size results; only the table and one archive go to OUTDIR (8 files come back)
nvcc --version | tail -1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv,noheader
# One nvcc build per configuration, several at once.
for b in $BLOCKS; do for v in $VECS; do echo "$b $v"; done; done |
  xargs -P 16 -n 2 sh -c 'nvcc -O3 -gencode=arch=compute_90a,code=sm_90a '"$DEFINE"' -DBLOCK=$0 -DVEC=$1 -o '"$BIN"'/gt_$0_$1 bench/graph_timer.cu' ||
  { echo "FAIL: nvcc"; exit 1; }
for n in $SIZES; do
  mkdir -p "$DATA/$n"
  for b in $BLOCKS; do for v in $VECS; do
    # shellcheck disable=SC2046 # args splits "RxC" on purpose
    echo "$b $v $("$BIN/gt_${b}_$v" $(args "$n"))"
  done; done >"$DATA/$n/graph.txt"
  for timing in auto events; do
    # shellcheck disable=SC2046 # dims gives several words on purpose
    "$KTUNE" tune "kernels/cuda/$KERNEL.cu" --backend cuda $(dims "$n") --timing $timing --no-db --no-cache --quiet \
      --json >"$DATA/$n/$timing.json" 2>"$DATA/$n/$timing.err" || echo "ktune N=$n --timing $timing: exit $?"
  done
done
python3 bench/timing_rank.py "$DATA" $SIZES | tee "$OUTDIR/table.md"
tar -C "$DATA" -czf "$OUTDIR/timing_rank.tar.gz" $SIZES

#!/usr/bin/env bash
# Where a background miss's first call goes, step by step (H200): two fresh
# runs of tests/gpu/miss_cuda.c in background mode with KTUNE_TRACE=1 (and
# one in prepared mode: a blocking first key after kt_kernel_prepare; BG_RUNS
# sets how many background runs); the
# application's own trace lines (kt_kernel_prepare's steps before the first
# call, then kt_launch's miss) are printed, whole traces and outputs kept in
# OUTDIR (trace1.txt, app1.txt, ...).
#   tests/gpu/miss_trace_h200.sh [OUTDIR]     (OUTDIR: $OUT, else ./gpu-out)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
OUTDIR=${1:-${OUT:-$ROOT/gpu-out}}
mkdir -p "$OUTDIR"
KTUNE=$(bash scripts/h200_build.sh /tmp/kb-miss 2>"$OUTDIR/build.log" | tail -1)
[ -x "$KTUNE" ] || { echo "build failed"; exit 1; }
DIR=$(dirname "$KTUNE")
export KTUNE_HELPER="$DIR/ktune-tuner" KTUNE_PRINT_AUTOTUNING=1
CUDA=${CUDA_HOME:-/usr/local/cuda}
# shellcheck disable=SC2046
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -I"$CUDA/include" tests/gpu/miss_cuda.c "$DIR/libktune.a" \
  $(cat "$DIR/link.txt") -L"$CUDA/lib64/stubs" -lcuda -o /tmp/miss_cuda || exit 1
# BG_RUNS background runs (default 2), to catch a slow first call in the act.
for r in $(seq 1 "${BG_RUNS:-2}") p1; do
  mode=background
  [ "${r#p}" != "$r" ] && mode=prepared # KT_MISS_TUNE after kt_kernel_prepare: the blocking first key
  db=$(mktemp -u /tmp/miss-trace-XXXXXX.db)
  KTUNE_TRACE=1 /tmp/miss_cuda "$db" $mode $((1 << 24)) $((1 << 22)) >"$OUTDIR/app$r.txt" 2>"$OUTDIR/trace$r.txt"
  echo "== run $r ($mode)"
  grep -h "result ${mode}_\(handle_creation\|prepare\|first_call\)\|while the tuning runs" "$OUTDIR/app$r.txt" \
    "$OUTDIR/trace$r.txt"
  app=$(awk '/ktune-trace/ && /miss: a shape/ {print $3; exit}' "$OUTDIR/trace$r.txt")
  awk -v pid="$app" '$1 == "ktune-trace" && $3 == pid {if (!t0) t0 = $2; printf "%8.4f s  %s\n", $2 - t0, substr($0, index($0, $4))}' \
    "$OUTDIR/trace$r.txt" | head -28
  # The helper's side (prepare: started, device open, the request taken).
  grep -h "helper: \|worker: device open\|worker: bound" "$OUTDIR/trace$r.txt" | head -12
done
echo "== the first calls, run by run"
grep -H "result \(background\|prepared\)_first_call_first_key_s" "$OUTDIR"/app*.txt

#!/usr/bin/env bash
# Tune on a miss on the H200, in an application that owns its GPU
# (tests/gpu/miss_cuda.c: cuInit, its own stream, cuMemAlloc, then
# kt_launch of kernels/cuda/elementwise.cu): the blocking miss tunes in the
# helper on the application's data and the output is right; the background
# miss launches the fallback at once, then the winner; no ktune-tuner is left
# afterwards. From the repository root with .carry carried:
#
#   tests/gpu/miss_h200.sh        (exit status 0: every check passed)
#
# Look for: "correct (...)" lines, the KTUNE_PRINT_AUTOTUNING lines ("tuned
# 16 configurations", "default configuration while the tuning runs in the
# background", "background tuning's winner"), and "PASS" at the end.
set -u
BUILD=${BUILD:-/tmp/kb-miss}
KTUNE=$(bash bench/h200_build.sh "$BUILD" 2>/dev/null | tail -1)
[ -x "$KTUNE" ] || { echo "build failed"; tail -30 "$BUILD/build.log"; exit 1; }
DIR=$(dirname "$KTUNE")
export KTUNE_HELPER="$DIR/ktune-tuner" KTUNE_PRINT_AUTOTUNING=1
CUDA=${CUDA_HOME:-/usr/local/cuda}
# shellcheck disable=SC2046
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -I"$CUDA/include" tests/gpu/miss_cuda.c "$DIR/libktune.a" \
  $(cat "$DIR/link.txt") -L"$CUDA/lib64/stubs" -lcuda -o /tmp/miss_cuda || exit 1
fail=0
for mode in tune background; do
  db=$(mktemp -u /tmp/miss-$mode-XXXXXX.db)
  echo "== $mode"
  /tmp/miss_cuda "$db" $mode $((1 << 24)) $((1 << 22)) || { echo "miss_cuda $mode failed"; fail=1; }
done
sleep 1
if pgrep -f ktune-tuner >/dev/null; then
  echo "ktune-tuner left behind:"; pgrep -af ktune-tuner; fail=1
fi
[ $fail = 0 ] && echo PASS || echo FAIL
exit $fail

#!/usr/bin/env bash
# kt_launch on the H200: tune kernels/cuda/elementwise.cu once with the
# command line, then launch the stored winner from an application that owns
# its CUDA context and stream (tests/gpu/launch_cuda.c): correctness and the
# host time per launch. Run from the repository root with .carry carried.
set -u
BUILD=/tmp/kb
KTUNE=$(bash scripts/h200_build.sh "$BUILD" 2>/dev/null | tail -1)
[ -x "$KTUNE" ] || { echo "build failed"; tail -30 "$BUILD/build.log"; exit 1; }
LIB="$(dirname "$KTUNE")/libktune.a"
echo "ktune: $KTUNE, library: $LIB"
DB=/tmp/launch.db
N=16777216
"$KTUNE" tune kernels/cuda/elementwise.cu --db "$DB" --dim N=$N --quiet | tail -4
CFLAGS="-O2 -std=c11 -D_GNU_SOURCE -Iinclude -I/usr/local/cuda/include"
LIBS="$(cat "$(dirname "$KTUNE")/link.txt") -L/usr/local/cuda/lib64/stubs -lcuda"
cc $CFLAGS tests/gpu/launch_cuda.c "$LIB" $LIBS -o /tmp/launch_cuda || exit 1
KTUNE_PRINT_AUTOTUNING=1 /tmp/launch_cuda "$DB" $N
echo "launch_cuda exit $?"

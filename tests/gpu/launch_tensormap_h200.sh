#!/usr/bin/env bash
# kt_launch with tensor-map parameters on the H200: tune
# kernels/cuda/gemm_wgmma.cu at two shapes with the command line (one
# --sizes sweep), then launch the stored winners from an application that
# owns its CUDA context, stream and buffers (tests/gpu/launch_tensormap_cuda.c):
# kt_launch builds the maps for the caller's tensors and caches them per
# shape. PASS/FAIL lines. Run from the repository root with .carry carried.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
W=$(mktemp -d /tmp/launch_tensormap.XXXXXX)
trap 'rm -rf "$W"' EXIT
KTUNE=$(bash scripts/h200_build.sh "$W/build" 2>"$W/build.log" | tail -1)
[ -x "$KTUNE" ] || { echo "FAIL build"; tail -30 "$W/build.log"; exit 1; }
LIB="$(dirname "$KTUNE")/libktune.a"
DB=$W/launch.db
printf 'M=512 N=768 K=1024\nM=256 N=1024 K=512\n' >"$W/sizes.txt"
"$KTUNE" tune kernels/cuda/gemm_wgmma.cu --sizes "$W/sizes.txt" --budget 6s --db "$DB" --quiet | tail -4
CFLAGS="-O2 -std=c11 -D_GNU_SOURCE -Iinclude -I/usr/local/cuda/include"
LIBS="$(cat "$(dirname "$KTUNE")/link.txt") -L/usr/local/cuda/lib64/stubs -lcuda -lm"
# shellcheck disable=SC2086
cc $CFLAGS tests/gpu/launch_tensormap_cuda.c "$LIB" $LIBS -o "$W/launch_tensormap_cuda" || { echo "FAIL compile"; exit 1; }
KTUNE_PRINT_AUTOTUNING=1 "$W/launch_tensormap_cuda" "$DB" 512 768 1024 256 1024 512
rc=$?
echo "launch_tensormap_cuda exit $rc"
exit $rc

#!/usr/bin/env bash
# The application-context unit tests (tests/unit/test_app_context.c) on the
# H200's NVIDIA OpenCL platform, where PoCL's CI run cannot reach: an
# application's own cl_context, buffers and queue through kt_launch, and a
# miss that tunes there. Prints each case's result; exit status: the test's.
#
#   tests/gpu/app_context_h200.sh [OUTDIR]     (normally through tests/gpu/session_h200.sh)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
OUTDIR=${1:-${OUT:-$ROOT/gpu-out}}
mkdir -p "$OUTDIR"
KTUNE=$(scripts/h200_build.sh --tests "$ROOT/build-h200" | tail -1) || exit 1
UNIT="$(dirname "$KTUNE")/tests"
"$KTUNE" devices >"$OUTDIR/devices.txt" 2>&1
timeout 300 "$UNIT/test_app_context" >"$OUTDIR/app_context.txt" 2>&1
rc=$?
tail -60 "$OUTDIR/app_context.txt"
exit $rc

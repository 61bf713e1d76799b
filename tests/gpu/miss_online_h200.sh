#!/usr/bin/env bash
# KT_MISS_ONLINE on the H200, in an application that owns its GPU
# (tests/gpu/miss_online_cuda.c: cuInit, its own stream, cuMemAlloc, then
# kt_launch of kernels/cuda/elementwise.cu, each call's output checked): the
# helper verifies the configurations on copies, the application's own calls
# time them (device events around each launch on its stream), and the winner
# is adopted and stored. From the repository root with .carry carried:
#
#   tests/gpu/miss_online_h200.sh [OUTDIR]    (N: $MISS_ONLINE_N, default 2^24; exit status 0: every check passed)
#
# The first argument is the output folder, as for every script that
# tests/gpu/session_h200.sh runs (it passes one); the size comes from the
# environment.
#
# Look for: "correct (...)"; the KTUNE_PRINT_AUTOTUNING lines ("verified 16
# configurations (K passed; setup ..., compile ..., verify ..., measure
# 0.000 s)", "online tuning: K verified configurations", "online tuning's
# winner (measure: K configurations on 5K of the application's calls, ... by
# events ...; adopt ... s)"); the result lines (calls_until_winner,
# winner_stored_after_s, extra_gpu_s: the tuning calls' GPU time beyond as
# many calls of the winner); the timed launches counted from the trace (5 per
# verified configuration, none after the adoption); and "PASS" at the end.
set -u
N=${MISS_ONLINE_N:-$((1 << 24))}
BUILD=${BUILD:-/tmp/kb-miss}
KTUNE=$(bash scripts/h200_build.sh "$BUILD" 2>/dev/null | tail -1)
[ -x "$KTUNE" ] || { echo "build failed"; tail -30 "$BUILD/build.log"; exit 1; }
DIR=$(dirname "$KTUNE")
export KTUNE_HELPER="$DIR/ktune-tuner" KTUNE_PRINT_AUTOTUNING=1
CUDA=${CUDA_HOME:-/usr/local/cuda}
# shellcheck disable=SC2046
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -I"$CUDA/include" tests/gpu/miss_online_cuda.c "$DIR/libktune.a" \
  $(cat "$DIR/link.txt") -L"$CUDA/lib64/stubs" -lcuda -o /tmp/miss_online_cuda || exit 1
fail=0
db=$(mktemp -u /tmp/miss-online-XXXXXX.db)
KTUNE_TRACE=1 /tmp/miss_online_cuda "$db" "$N" >/tmp/miss-online.txt 2>/tmp/miss-online-trace.txt ||
  { echo "miss_online_cuda failed; its stderr's last lines (the trace):"; grep -av '^ktune-trace' /tmp/miss-online-trace.txt | tail -20; tail -20 /tmp/miss-online-trace.txt; fail=1; }
cat /tmp/miss-online.txt
grep -a '^ktune: kernel' /tmp/miss-online-trace.txt
grep -q '^correct' /tmp/miss-online.txt || { echo "an output was wrong"; fail=1; }
grep -aq "online tuning's winner (measure: .* by events" /tmp/miss-online-trace.txt ||
  { echo "no online winner timed by events"; fail=1; }
passed=$(grep -ao 'verified [0-9]* configurations ([0-9]* passed' /tmp/miss-online-trace.txt | head -1 | sed 's/.*(\([0-9]*\) passed/\1/')
timed=$(grep -ac 'online: timed \[' /tmp/miss-online-trace.txt)
after=$(awk "/online tuning's winner/ {w = 1; next} w && /online: timed \\[/ {n++} END {print n + 0}" /tmp/miss-online-trace.txt)
echo "verified configurations: ${passed:-?}; timed launches on the application's calls: $timed; after the adoption: $after"
[ -n "$passed" ] && [ "$timed" = $((5 * passed)) ] || { echo "expected 5 timed launches per verified configuration"; fail=1; }
[ "$after" = 0 ] || { echo "calls after the adoption were timed"; fail=1; }
# A configuration that failed verification is never timed on the caller's data.
grep -ao 'online: timed \[[^]]*\]' /tmp/miss-online-trace.txt | sort | uniq -c
sqlite3 "$db" "SELECT config, median, measurement FROM results WHERE measurement LIKE '%online%' ORDER BY median" 2>/dev/null | head -20
sleep 1
left=$(ps -eo pid=,stat=,args= | awk '$2 !~ /^Z/ && /ktune-tuner/ && !/awk/')
[ -z "$left" ] || { echo "ktune-tuner left behind:"; echo "$left"; fail=1; }
[ $fail = 0 ] && echo PASS || echo FAIL
exit $fail

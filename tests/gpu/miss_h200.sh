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
# Look for: "correct (...)" lines (in background mode the application
# overwrites x on its stream right after the first call), the
# KTUNE_PRINT_AUTOTUNING lines ("tuned 16 configurations", "default
# configuration while the tuning runs in the background", "background
# tuning's winner"), result lines (background_first_call_first_key_s: the
# goal is under 0.001 s, on a handle prepared with kt_kernel_prepare, whose
# cost is background_prepare_s beside background_handle_creation_s;
# background_first_call_second_key_s; copy_device_to_memfd_locked_s_per_gib
# beside the pageable copy_device_to_memfd_s_per_gib), the trace summary of
# a blocking first call (seconds per step: helper start, its worker's cuInit
# and context, which now overlap the job thread's download of the caller's
# tensors ("miss: the caller's tensors downloaded" before "helper: the
# application's tensors are in the request", both after "worker: device
# open" or close to it), compiles, measuring, the finalist rounds ("the
# leader is apart ... after N of 7 rounds" when they settled early), the
# application's own load of the winner), the second key's trace ("miss:
# handed to the warm helper", "worker: kept worker bound to mul_add" and no
# second "worker: device open"), the prepared mode (KT_MISS_TUNE after
# kt_kernel_prepare: prepared_first_call_first_key_s beside
# tune_first_call_first_key_s, and its trace: "prepare: helper spawned",
# "helper: prepared: the worker's device is open", the first miss "handed to
# the warm helper", no "miss: helper spawned"), and "PASS" at the end.
set -u
BUILD=${BUILD:-/tmp/kb-miss}
KTUNE=$(bash scripts/h200_build.sh "$BUILD" 2>/dev/null | tail -1)
[ -x "$KTUNE" ] || { echo "build failed"; tail -30 "$BUILD/build.log"; exit 1; }
DIR=$(dirname "$KTUNE")
# The caller's tensors shared with the helper on the device (the default;
# said all the same), but where a run says host.
export KTUNE_HELPER="$DIR/ktune-tuner" KTUNE_PRINT_AUTOTUNING=1 KTUNE_MISS_TENSORS=device
CUDA=${CUDA_HOME:-/usr/local/cuda}
# shellcheck disable=SC2046
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -I"$CUDA/include" tests/gpu/miss_cuda.c "$DIR/libktune.a" \
  $(cat "$DIR/link.txt") -L"$CUDA/lib64/stubs" -lcuda -o /tmp/miss_cuda || exit 1
fail=0
for mode in tune background; do
  db=$(mktemp -u /tmp/miss-$mode-XXXXXX.db)
  echo "== $mode"
  /tmp/miss_cuda "$db" $mode $((1 << 24)) $((1 << 22)) 2>&1 | tee /tmp/miss-$mode.txt
  [ "${PIPESTATUS[0]}" = 0 ] || { echo "miss_cuda $mode failed"; fail=1; }
done
# The background call snapshots the caller's tensors on its stream: a
# synchronous copy before return means the snapshot was refused.
grep -h '^result background_\(handle_creation\|prepare\|first_call\)' /tmp/miss-background.txt
if grep -q "copied them before returning" /tmp/miss-background.txt; then
  echo "the background miss copied synchronously (no snapshot)"; fail=1
fi
# prepared: KT_MISS_TUNE after kt_kernel_prepare, which started the warm
# helper; its first key is handed to it (no "miss: helper spawned").
echo "== a prepared kernel's first key (KTUNE_TRACE=1)"
db=$(mktemp -u /tmp/miss-prepared-XXXXXX.db)
KTUNE_TRACE=1 /tmp/miss_cuda "$db" prepared $((1 << 24)) $((1 << 22)) >/tmp/miss-prepared.txt 2>/tmp/miss-prepared-trace.txt ||
  { echo "miss_cuda prepared failed"; cat /tmp/miss-prepared.txt; fail=1; }
grep -h '^correct\|^result \(tune\|prepared\)_first_call_first_key_s\|^result prepared_prepare_s' /tmp/miss-tune.txt \
  /tmp/miss-prepared.txt
grep -a "prepare: helper spawned\|helper: prepared\|miss: helper spawned\|handed to the warm helper\|handed to the spare" \
  /tmp/miss-prepared-trace.txt
grep -aq "prepare: helper spawned" /tmp/miss-prepared-trace.txt && ! grep -aq "miss: helper spawned" /tmp/miss-prepared-trace.txt ||
  { echo "the prepared kernel's first miss did not go to the helper prepare started"; fail=1; }
echo "== where a blocking first call's time goes (KTUNE_TRACE=1)"
db=$(mktemp -u /tmp/miss-trace-XXXXXX.db)
KTUNE_TRACE=1 /tmp/miss_cuda "$db" tune $((1 << 24)) $((1 << 22)) >/dev/null 2>/tmp/miss-trace.txt ||
  { echo "miss_cuda under KTUNE_TRACE failed"; fail=1; }
awk -f bench/miss_trace_summary.awk /tmp/miss-trace.txt
echo "== the caller's tensors shared on the device (CUDA IPC), both keys"
grep -a "shared with the helper\|copied from the application's memory\|cannot copy a tensor shared\|decoys of output" /tmp/miss-trace.txt
[ "$(grep -ac 'miss: the caller.s tensors shared with the helper on the device' /tmp/miss-trace.txt)" = 2 ] ||
  { echo "a blocking miss did not share the caller's tensors on the device"; fail=1; }
grep -aq "worker: tensor .* copied from the application's memory" /tmp/miss-trace.txt ||
  { echo "the worker did not copy the caller's tensors on the device"; fail=1; }
! grep -aq "miss: the caller's tensors downloaded into the request" /tmp/miss-trace.txt ||
  { echo "a blocking miss still downloaded the caller's tensors into the request"; fail=1; }
grep -aq "decoys of output .* made on the device" /tmp/miss-trace.txt ||
  { echo "decoys were not made on the device"; fail=1; }
echo "== the same through host memory (KTUNE_MISS_TENSORS=host): right, and nothing shared"
db=$(mktemp -u /tmp/miss-host-XXXXXX.db)
KTUNE_MISS_TENSORS=host KTUNE_TRACE=1 /tmp/miss_cuda "$db" tune $((1 << 24)) $((1 << 22)) >/tmp/miss-host.txt \
  2>/tmp/miss-host-trace.txt || { echo "miss_cuda through host memory failed"; cat /tmp/miss-host.txt; fail=1; }
grep -h '^correct' /tmp/miss-host.txt
! grep -aq "shared with the helper on the device" /tmp/miss-host-trace.txt ||
  { echo "KTUNE_MISS_TENSORS=host still shared the tensors"; fail=1; }
echo "== the second key on the warm helper"
grep -a "handed to the warm helper\|kept worker bound\|worker: device open\|worker: kept" /tmp/miss-trace.txt
[ "$(grep -ac 'worker: device open' /tmp/miss-trace.txt)" = 1 ] ||
  { echo "the second key's worker opened the device again (no warm helper)"; fail=1; }
sleep 1
# Running helpers, not zombies: a warm helper outlives the application by
# design until it sees the application's end, and is then reparented to this
# container's pid 1, which does not reap (an init would).
left=$(ps -eo pid=,stat=,args= | awk '$2 !~ /^Z/ && /ktune-tuner/ && !/awk/')
if [ -n "$left" ]; then
  echo "ktune-tuner left behind:"; echo "$left"; fail=1
fi
zombies=$(ps -eo stat=,args= | awk '$1 ~ /^Z/ && /ktune-tuner/' | wc -l)
echo "ended helpers not yet reaped by pid 1: $zombies"
[ $fail = 0 ] && echo PASS || echo FAIL
exit $fail

#!/usr/bin/env bash
# kt_tune in a process that holds the CUDA driver, on the H200 (the
# limitation docs/DESIGN.md once listed: workers forked from such a process
# could not initialise CUDA). From the repository root with .carry carried:
#
#   tests/gpu/tune_in_cuda_process_h200.sh [OUTDIR]   (OUTDIR: $OUT, else ./gpu-out)
#
# Checks, each line PASS or FAIL in OUTDIR/tune_in_cuda.txt (the documents
# and traces beside it):
#   1. tests/gpu/tune_in_cuda.c: cuInit, the primary context, cuMemAlloc,
#      then kt_tune of kernels/cuda/elementwise.cu at N=2^22 and N=2^24 in the
#      same process: both KT_OK, each winner `ok` (verified against the
#      reference), every configuration's status `ok` (none `runtime`: a worker
#      that could not open the device would fail them all), and the trace
#      says "zygote: a fresh image (libcuda.so.1)" for each tuning, with its
#      workers "bound to mul_add".
#   2. A CUDA sweep of two keys (--dim N=4194304,16777216) in one ktune
#      process (no longer one process per key): both keys with a winner, no
#      "(in a process of its own)", and the second key's zygote a fresh image
#      (compiled without the binary cache, so that NVRTC loads the driver).
#   3. No spawned zygote (ktune-tuner --zygote) left afterwards.
# Look for: PASS lines; "tuned N: BLOCK=.. VEC=.. in S s" (compare S with a
# first tuning's time in docs/BENCHMARKS.md: the fresh image costs about a
# millisecond on the CPU). Exit status 0 when every check passed.
set -u
. "$(dirname "$0")/checks.bash" # ROOT (the working directory), OUTDIR, WORK
checks_begin tune_in_cuda.txt "kt_tune in a process that holds the CUDA driver"
DIR=$(dirname "$KTUNE")
export KTUNE_HELPER="$DIR/ktune-tuner" # the program below is linked with libktune.a elsewhere
CUDA=${CUDA_HOME:-/usr/local/cuda}

# 1. the C program
# shellcheck disable=SC2046
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -I"$CUDA/include" tests/gpu/tune_in_cuda.c "$DIR/libktune.a" \
  $(cat "$DIR/link.txt") -L"$CUDA/lib64/stubs" -lcuda -o "$WORK/tune_in_cuda" 2>"$OUTDIR/tune_in_cuda.cc.log"
check "tune_in_cuda.c builds" $? "$(head -3 "$OUTDIR/tune_in_cuda.cc.log")"
KTUNE_TRACE=1 "$WORK/tune_in_cuda" "$WORK/results.db" $((1 << 22)) $((1 << 24)) "$OUTDIR" \
  >"$OUTDIR/tune_in_cuda.out" 2>"$OUTDIR/tune_in_cuda.trace"
rc=$?
cat "$OUTDIR/tune_in_cuda.out"
check "two kt_tune calls after cuInit, a context and cuMemAlloc: both ok" $rc \
  "exit $rc; $(grep -v '^ktune-trace' "$OUTDIR/tune_in_cuda.trace" | tail -2 | tr '\n' ' ')"
for n in $((1 << 22)) $((1 << 24)); do
  doc="$OUTDIR/tune_$n.json"
  w=$(py "print(d['winner']['status'])" "$doc" 2>/dev/null)
  [ "$w" = ok ]
  check "N=$n: a verified winner" $? "winner status ${w:-none}"
  bad=$(py "print(sorted(set(c['status'] for c in d['configurations']) - {'ok'}))" "$doc" 2>/dev/null)
  [ "$bad" = "[]" ]
  check "N=$n: every configuration ok" $? "other statuses: ${bad:-?}"
done
fresh=$(grep -c "zygote: a fresh image (libcuda.so.1)" "$OUTDIR/tune_in_cuda.trace")
[ "$fresh" -ge 2 ]
check "each tuning's zygote is a fresh image" $? "$fresh of 2"
bound=$(grep -c "worker: bound to mul_add" "$OUTDIR/tune_in_cuda.trace")
[ "$bound" -ge 2 ]
check "their workers are bound to mul_add" $? "$bound binds"

# 2. a CUDA sweep in one process
# --no-binary-cache: the first key compiles through NVRTC, which loads the
# CUDA driver into this process (with every binary cached nothing loads it,
# and the fork path is then the right one: seen on the H200).
KTUNE_TRACE=1 "$KTUNE" tune kernels/cuda/elementwise.cu --dim N=4194304,16777216 --db "$WORK/sweep.db" --json \
  --no-binary-cache \
  >"$OUTDIR/sweep.json" 2>"$OUTDIR/sweep.trace"
rc=$?
winners=$(py "print(sum(k['winner'] is not None and k['winner']['status'] == 'ok' for k in d['keys']))" \
  "$OUTDIR/sweep.json" 2>/dev/null)
[ $rc -eq 0 ] && [ "$winners" = 2 ]
check "a CUDA sweep of two keys: a verified winner each" $? "exit $rc, ${winners:-0} winners"
! grep -q "in a process of its own" "$OUTDIR/sweep.trace"
check "... in one ktune process" $?
grep -q "zygote: a fresh image (libcuda.so.1)" "$OUTDIR/sweep.trace"
check "... the second key's zygote a fresh image (the first key's NVRTC compiles loaded the driver)" $?

# 3. nothing left behind
sleep 1
left=$(pgrep -f "$DIR/ktune-tuner --zygote" | wc -l)
[ "$left" = 0 ]
check "no spawned zygote left" $? "$left left"
rm -rf "$WORK"
say "$FAILED failed"
[ "$FAILED" = 0 ]

#!/usr/bin/env bash
# The CUDA cases of docs/FAULTS.md on a real GPU (written for the H200
# machine). Run from anywhere; it works in the repository root:
#
#   tests/gpu/faults_h200.sh [OUTDIR]      (OUTDIR: $OUT, else ./gpu-out)
#
# Builds ktune with scripts/h200_build.sh (carry .carry: `scripts/h200_build.sh
# --prepare` makes it), then checks, each line PASS or FAIL in
# OUTDIR/faults.txt (the JSON documents in OUTDIR/faults.tar.gz):
#   1. tests/data/cuda_hostile.cu: a configuration that prints (CUDA printf)
#      keeps --json valid and its output kept; one that writes its input is
#      `input`; ones that write past the end or before the start of their
#      output are `bounds`; the winner is the fast correct one.
#   2. `ktune bench` of the printing configuration: --json valid.
#   3. tests/data/cuda_unwritten.cu: a default that leaves 7 elements
#      unwritten is an error naming them (exit 1).
#   4. tests/data/cuda_faulty.cu: an illegal address is `runtime`, twice
#      (retried in a fresh worker), and the run goes on.
#   5. A worker killed with SIGKILL from outside mid-run (sgemm.cu):
#      the run ends 0 and records nothing as failed by its configuration.
#   6. tests/data/cuda_compile_seconds.cu with --budget 10s (configurations of
#      seconds each to compile): the wall time within 5 % of the budget.
#   7. sgemm.cu measured whole (348 configurations since issue 31 item 4; 174 before): the wall time, to
#      compare with docs/BENCHMARKS.md (the checks after each run cost).
#   8. tests/data/cuda_timed_runs.cu: configurations right only on runs from
#      poisoned outputs are `correctness` (the run after the timed runs),
#      damage done in the timed runs (an input, past the end) is charged to
#      the configuration that did it (`input`, `bounds`); the winner is the
#      fast correct one.
#   9. tests/data/cuda_far_writes.cu: writes 8 KiB, 64 KiB and 1 MiB before a
#      1 MiB output and 64 KiB past its end are `bounds` (guard zones in
#      device memory sized for stride bugs); the winner is the correct one.
# Exit status 0 when every check passed.
set -u
. "$(dirname "$0")/checks.bash" # ROOT (the working directory), OUTDIR, WORK
checks_begin faults.txt "ktune CUDA faults"
export KTUNE_DB="$WORK/results.db"

# 1. printing, input and bounds
"$KTUNE" tune tests/data/cuda_hostile.cu --json --quiet >"$WORK/hostile.json" 2>"$WORK/hostile.err"
rc=$?
py 'pass' "$WORK/hostile.json" 2>/dev/null
check "hostile: --json is JSON with a printing kernel" $? "exit $rc"
st() { py "print([c['status'] for c in d['configurations'] if c['config']['VARIANT']==$1][0])" "$WORK/hostile.json" 2>/dev/null; }
out=$(py "print([c.get('output','') for c in d['configurations'] if c['config']['VARIANT']==1][0])" "$WORK/hostile.json" 2>/dev/null)
case "$out" in *"cuda printf from VARIANT=1"*) r=0 ;; *) r=1 ;; esac
check "hostile: CUDA printf kept as the configuration's output" $r "$(echo "$out" | head -1)"
[ "$(st 2)" = input ]; check "hostile: writes its input -> input" $? "$(st 2)"
[ "$(st 3)" = bounds ]; check "hostile: writes past the end -> bounds" $? "$(st 3)"
[ "$(st 5)" = bounds ]; check "hostile: writes before the start -> bounds" $? "$(st 5)"
w=$(py "print(d['winner']['config']['VARIANT'])" "$WORK/hostile.json" 2>/dev/null)
[ "$w" = 4 ] || [ "$w" = 1 ]; check "hostile: the winner is a correct configuration" $? "VARIANT=$w"

# 2. bench --json with a printing configuration
"$KTUNE" bench tests/data/cuda_hostile.cu --autotune VARIANT=1 --json --quiet >"$WORK/bench.json" 2>>"$WORK/hostile.err"
py 'pass' "$WORK/bench.json" 2>/dev/null
check "bench --json is JSON with a printing kernel" $?

# 3. a reference that leaves elements unwritten
"$KTUNE" tune tests/data/cuda_unwritten.cu --quiet >"$WORK/unwritten.out" 2>"$WORK/unwritten.err"
rc=$?
[ $rc -eq 1 ] && grep -q "leaves 7 of 65536 elements of y unwritten" "$WORK/unwritten.err"
check "unwritten reference: an error naming the count" $? "exit $rc: $(grep -o 'it leaves[^(]*' "$WORK/unwritten.err" | head -1)"

# 4. an illegal address, retried in a fresh worker
"$KTUNE" tune tests/data/cuda_faulty.cu --json --quiet >"$WORK/faulty.json" 2>"$WORK/faulty.err"
rc=$?
r=$(py "b=[c for c in d['configurations'] if c['config']['BLOCK']==512][0]; print(b['status'], 'twice' in b.get('message',''), d['worker_restarts'])" "$WORK/faulty.json" 2>/dev/null)
case "$rc $r" in "0 runtime True "*) x=0 ;; *) x=1 ;; esac
check "illegal address: runtime after a retry, the run goes on" $x "exit $rc; status, retried, restarts: $r"

# 5. a worker killed from outside
"$KTUNE" tune kernels/cuda/sgemm.cu --json --quiet --no-db >"$WORK/killed.json" 2>"$WORK/killed.err" &
tuner=$!
sleep 3
victims=""
for z in $(pgrep -P $tuner); do victims="$victims $(pgrep -P "$z")"; done
[ -n "${victims// /}" ] && kill -9 $victims
wait $tuner
rc=$?
r=$(py "print(sum(1 for c in d['configurations'] if c['status'] not in ('ok', 'correctness', 'constraint', 'compile')), d['worker_restarts'])" "$WORK/killed.json" 2>/dev/null)
case "$rc $r" in "0 0 "*) x=0 ;; *) x=1 ;; esac
[ -n "${victims// /}" ] || x=1
check "worker killed from outside: nothing recorded against a configuration" $x "exit $rc; killed:$victims; failed, restarts: $r"

# 6. a time budget over slow compiles
start=$(date +%s.%N)
"$KTUNE" tune tests/data/cuda_compile_seconds.cu --budget 10s --json --quiet --no-db >"$WORK/budget.json" 2>"$WORK/budget.err"
rc=$?
wall=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) - float(sys.argv[2])))" "$(date +%s.%N)" "$start")
r=$(py "c=d['configurations']; print(len(c), sum(1 for x in c if x['status']=='ok'), '%.2f' % max(x.get('compile_s', 0) or 0 for x in c))" "$WORK/budget.json" 2>/dev/null)
[ $rc -eq 0 ] && awk -v w="$wall" 'BEGIN { exit !(w <= 10.5) }'
check "--budget 10s with slow compiles ends within 5 %" $? "exit $rc; wall $wall s; measured, ok, longest compile: $r"

# 7. sgemm whole, for the cost of the checks
start=$(date +%s.%N)
"$KTUNE" tune kernels/cuda/sgemm.cu --json --quiet --no-db >"$WORK/sgemm.json" 2>"$WORK/sgemm.err"
rc=$?
wall=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) - float(sys.argv[2])))" "$(date +%s.%N)" "$start")
r=$(py "print(len(d['configurations']), d['winner']['config'], '%.4g ms' % (d['winner']['final_median_s']*1e3), d['timeline'].get('phases_s'))" "$WORK/sgemm.json" 2>/dev/null)
check "sgemm measured whole" $rc "wall $wall s; $r"

# 8. the timed runs checked too
"$KTUNE" tune tests/data/cuda_timed_runs.cu --json --quiet --no-db >"$WORK/timed.json" 2>"$WORK/timed.err"
rc=$?
tst() { py "print([c['status'] for c in d['configurations'] if c['config']['VARIANT']==$1][0])" "$WORK/timed.json" 2>/dev/null; }
[ "$(tst 1)" = correctness ]; check "timed runs: works only where its output is poison -> correctness" $? "exit $rc; $(tst 1)"
[ "$(tst 2)" = input ]; check "timed runs: writes its input in the timed runs -> input" $? "$(tst 2)"
[ "$(tst 3)" = bounds ]; check "timed runs: writes past the end in the timed runs -> bounds" $? "$(tst 3)"
w=$(py "print(d['winner']['config']['VARIANT'])" "$WORK/timed.json" 2>/dev/null)
[ "$w" = 4 ]; check "timed runs: the winner is the fast correct configuration" $? "VARIANT=$w"

# 9. far writes into the guard zones
"$KTUNE" tune tests/data/cuda_far_writes.cu --json --quiet --no-db >"$WORK/far.json" 2>"$WORK/far.err"
rc=$?
fst() { py "print([c['status'] for c in d['configurations'] if c['config']['VARIANT']==$1][0])" "$WORK/far.json" 2>/dev/null; }
for v in 1 2 3 4; do
  [ "$(fst $v)" = bounds ]; check "far writes: VARIANT=$v -> bounds" $? "exit $rc; $(fst $v)"
done
w=$(py "print(d['winner']['config']['VARIANT'])" "$WORK/far.json" 2>/dev/null)
[ "$w" = 5 ] || [ "$w" = 0 ]; check "far writes: the winner is a correct configuration" $? "VARIANT=$w"

tar -czf "$OUTDIR/faults.tar.gz" -C "$WORK" --exclude build . 2>/dev/null
say "$FAILED checks failed"
rm -rf "$WORK"
[ "$FAILED" -eq 0 ]

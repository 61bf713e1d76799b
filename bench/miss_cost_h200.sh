#!/usr/bin/env bash
# What does a tune on a miss cost kt_launch's caller? On the H200, in one
# device call, beside
# Triton's @triton.autotune (16 configurations each, z = x * y + x, fp32):
#
#   bench/miss_cost_h200.sh        (from the repository root, .carry carried)
#
# 1. kt_launch in an application that owns its CUDA context (tests/gpu/
#    miss_cuda.c), three fresh databases each: KT_MISS_TUNE (the first call
#    for a first key, then for a second key of the same kernel) and
#    KT_MISS_BACKGROUND (the handle's creation and kt_kernel_prepare's
#    time, then the first call's latency on the prepared handle, when the
#    winner was stored, the adopting call, a second key's first call);
#    later calls' host time beside a bare cuLaunchKernel; the cost per GiB
#    of copying the caller's tensors. The second key goes to the helper
#    that tuned the first, still warm (its worker's context open); three
#    more runs with KTUNE_HELPER_IDLE_S=0 (run=cold1..3) give a cold
#    helper's second key (a new process, cuInit and a context);
# 2. `ktune tune` on the command line for the same two keys (fresh database),
#    with --json kept (cli_N.json: the timeline's phases and how many
#    finalist rounds ran, finalist_rounds: done, planned, settled, tied,
#    leader_spread), then the first key again (N=<N1>_again: all stored, the
#    stored winner kept with no rounds: kept_stored_winner=True, the winner
#    the first run's);
# 3. one blocking miss again with KTUNE_TRACE=1 (trace.txt): where the time
#    goes (helper start, cuInit and context in its worker, NVRTC, measuring);
# 4. bench/peers/triton_elementwise.py: Triton's first call for the two keys
#    and the host time of a later call.
# Results under $OUT (default ./build-miss): results.txt ("result NAME VALUE"
# lines, one per run), log.txt (everything printed), trace.txt and
# trace_summary.txt (bench/miss_trace_summary.awk: seconds per step).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUT=${OUT:-$ROOT/build-miss}
mkdir -p "$OUT"
LOG="$OUT/log.txt"
RES="$OUT/results.txt"
: >"$LOG"
: >"$RES"
say() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$LOG"; }
N1=$((1 << 24))
N2=$((1 << 22))
say "miss bench, $(git rev-parse --short HEAD 2>/dev/null)," \
  "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1), N1=$N1 N2=$N2"

KTUNE=$(bash scripts/h200_build.sh /tmp/kb-miss 2>>"$LOG" | tail -1)
[ -x "$KTUNE" ] || { say "build failed"; tail -30 /tmp/kb-miss/build.log | tee -a "$LOG"; exit 1; }
DIR=$(dirname "$KTUNE")
export KTUNE_HELPER="$DIR/ktune-tuner" KTUNE_PRINT_AUTOTUNING=1
CUDA=${CUDA_HOME:-/usr/local/cuda}
# shellcheck disable=SC2046
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -I"$CUDA/include" tests/gpu/miss_cuda.c "$DIR/libktune.a" \
  $(cat "$DIR/link.txt") -L"$CUDA/lib64/stubs" -lcuda -o /tmp/miss_cuda 2>>"$LOG" ||
  { say "miss_cuda did not build"; exit 1; }

run_app() { # MODE RUN
  local db
  db=$(mktemp -u /tmp/miss-bench-XXXXXX.db)
  say "kt_launch $1, run $2"
  /tmp/miss_cuda "$db" "$1" $N1 $N2 >"$OUT/app.txt" 2>>"$LOG" || say "miss_cuda $1 FAILED"
  cat "$OUT/app.txt" >>"$LOG"
  grep '^result ' "$OUT/app.txt" | sed "s/\$/ run=$2/" >>"$RES"
}
for r in 1 2 3; do run_app tune $r; done
for r in 1 2 3; do KTUNE_HELPER_IDLE_S=0 run_app tune cold$r; done
for r in 1 2 3; do run_app prepared $r; done
for r in $(seq 1 "${BG_RUNS:-3}"); do run_app background $r; done # BG_RUNS: more, to catch a slow first call

say "ktune tune on the command line, fresh database"
db=$(mktemp -u /tmp/miss-cli-XXXXXX.db)
# The first key run a third time (N=<N1>_again): every configuration is
# stored, so the stored winner is kept without finalist rounds.
for n in $N1 $N2 "${N1}_again"; do
  t0=$(date +%s.%N)
  "$KTUNE" tune kernels/cuda/elementwise.cu --db "$db" --dim N="${n%_again}" --quiet --json >"$OUT/cli_$n.json" 2>>"$LOG"
  t1=$(date +%s.%N)
  echo "result cli_tune_N=${n}_s $(awk "BEGIN { print $t1 - $t0 }")" >>"$RES"
  python3 - "$OUT/cli_$n.json" "$n" >>"$RES" 2>>"$LOG" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["timeline"]
n = sys.argv[2]
for k, v in t["phases_s"].items():
    print(f"result cli_tune_N={n}_{k}_s {v:.4f}")
r = t["finalist_rounds"]
print(f"result cli_tune_N={n}_finalist_rounds {r['done']}/{r['planned']} settled={r['settled']} "
      f"tied={r.get('tied')} leader_spread={r.get('leader_spread')} kept_stored_winner={r.get('kept_stored_winner')}")
print(f"result cli_tune_N={n}_winner {' '.join('%s=%s' % kv for kv in d['winner']['config'].items())} reused={d['reused']}")
PY
done

say "one blocking miss with KTUNE_TRACE=1"
db=$(mktemp -u /tmp/miss-trace-XXXXXX.db)
KTUNE_TRACE=1 /tmp/miss_cuda "$db" tune $N1 $N2 >>"$LOG" 2>"$OUT/trace.txt"
awk -f bench/miss_trace_summary.awk "$OUT/trace.txt" | tee "$OUT/trace_summary.txt" >>"$LOG"

say "Triton"
python3 bench/peers/triton_elementwise.py $N1 $N2 >"$OUT/triton.txt" 2>>"$LOG" || say "triton FAILED"
cat "$OUT/triton.txt" >>"$LOG"
grep '^result ' "$OUT/triton.txt" >>"$RES"

sleep 1
left=$(ps -eo stat=,args= | awk '$1 !~ /^Z/ && /ktune-tuner/ && !/awk/' | wc -l) # running, not zombies (tests/gpu/miss_h200.sh)
echo "result ktune_tuner_left_behind $left" >>"$RES"
say "done"
cat "$RES"

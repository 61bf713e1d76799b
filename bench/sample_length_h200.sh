#!/usr/bin/env bash
# How long a GPU timing sample must last (KTUNE_SAMPLE_S), on the H200, in
# one device call:
#
#   bench/sample_length_h200.sh        (from the repository root, .carry carried)
#
# 1. `ktune tune --no-db --json` of kernels/cuda/elementwise.cu (16
#    configurations, N = 2^22 three times and N = 2^24 twice) and
#    kernels/cuda/sgemm.cu (4096^3, twice) at each sample length in
#    $LENGTHS (seconds; the binary cache warm after the first run, so each
#    run is measurement only): its wall, search and finalist phases, rounds
#    run, the winner and its time;
# 2. every distinct winner of a kernel and key timed again by one yardstick,
#    `ktune bench --autotune WINNER` with 10 ms samples, three times each
#    (the median kept): a sample length's regret is its winners' yardstick
#    time over the best winner's of that key, minus 1;
# 3. the blocking miss of tests/gpu/miss_cuda.c (a first key N = 2^24, then
#    a second key N = 2^22 on the warm helper), three runs at each of
#    $MISS_LENGTHS, and three background runs with KTUNE_TRACE=1 (each
#    trace kept: bg_trace_R.txt) to find what a slow background first call
#    waits on;
# 4. bench/peers/triton_elementwise.py, the same keys, for the side by side.
# Results under $OUT (default ./build-sample): results.txt ("result NAME
# VALUE" lines), regret.txt, log.txt.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUT=${OUT:-$ROOT/build-sample}
mkdir -p "$OUT"
LOG="$OUT/log.txt"
RES="$OUT/results.txt"
: >"$LOG"
: >"$RES"
LENGTHS=${LENGTHS:-0.002 0.001 0.0005 0.00025}
MISS_LENGTHS=${MISS_LENGTHS:-0.002 0.0005}
say() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$LOG"; }
say "sample length bench, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"

KTUNE=$(bash scripts/h200_build.sh /tmp/kb-sample 2>>"$LOG" | tail -1)
[ -x "$KTUNE" ] || { say "build failed"; exit 1; }
DIR=$(dirname "$KTUNE")
export KTUNE_BINARY_CACHE=/tmp/kb-sample-bincache

# tune NAME FILE DIMS...: one run at the current KTUNE_SAMPLE_S, its figures
# as result lines and its winner in winners.txt ("NAME|CONFIG").
tune() {
  local name=$1 file=$2
  shift 2
  local t0 t1
  t0=$(date +%s.%N)
  "$KTUNE" tune "$file" "$@" --no-db --json --quiet >"$OUT/run.json" 2>>"$LOG" || { say "$name failed"; return; }
  t1=$(date +%s.%N)
  python3 - "$OUT/run.json" "$name" "$KTUNE_SAMPLE_S" "$(awk "BEGIN { print $t1 - $t0 }")" >>"$RES" 2>>"$LOG" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
name, length, wall = sys.argv[2], sys.argv[3], float(sys.argv[4])
p, r, w = d["timeline"]["phases_s"], d["timeline"]["finalist_rounds"], d["winner"]
cfg = " ".join(f"{k}={v}" for k, v in w["config"].items())
print(f"result tune {name} sample={length} wall_s={wall:.3f} search_s={p['search']:.3f} finalists_s={p['finalists']:.3f} "
      f"rounds={r['done']}/{r['planned']} winner_us={w['median_s'] * 1e6:.2f} winner={cfg.replace(' ', ',')}")
with open(sys.argv[1].replace("run.json", "winners.txt"), "a") as f:
    f.write(f"{name}|{cfg}\n")
PY
}

: >"$OUT/winners.txt"
say "compiling once (binary cache) and a first tuning of each kernel, not counted"
KTUNE_SAMPLE_S=0.002 "$KTUNE" tune kernels/cuda/elementwise.cu --dim N=$((1 << 22)) --no-db --quiet >/dev/null 2>>"$LOG"
KTUNE_SAMPLE_S=0.002 "$KTUNE" tune kernels/cuda/sgemm.cu --no-db --quiet >/dev/null 2>>"$LOG"
for rep in 1 2 3; do
  for s in $LENGTHS; do
    export KTUNE_SAMPLE_S=$s
    tune elementwise_N=4194304 kernels/cuda/elementwise.cu --dim N=$((1 << 22))
    [ $rep -le 2 ] && tune elementwise_N=16777216 kernels/cuda/elementwise.cu --dim N=$((1 << 24))
    [ $rep -le 2 ] && tune sgemm_4096 kernels/cuda/sgemm.cu
  done
done

say "the winners timed by one yardstick (10 ms samples, median of three)"
export KTUNE_SAMPLE_S=0.01
sort -u "$OUT/winners.txt" | while IFS='|' read -r name cfg; do
  case $name in
    elementwise_N=*) file=kernels/cuda/elementwise.cu dims=(--dim "N=${name#elementwise_N=}") ;;
    *) file=kernels/cuda/sgemm.cu dims=() ;;
  esac
  for i in 1 2 3; do
    "$KTUNE" bench "$file" "${dims[@]}" --autotune "$cfg" --no-db --json --quiet 2>>"$LOG" | python3 -c '
import json, sys
want = dict(kv.split("=") for kv in sys.argv[1].split())
for c in json.load(sys.stdin)["configurations"]:
    if {k: str(v) for k, v in c["config"].items()} == want:
        print(c["median_s"])' "$cfg" 2>>"$LOG"
  done | sort -g | sed -n 2p | sed "s/^/yardstick $name ${cfg// /,} /" >>"$OUT/yardstick.txt"
done
cat "$OUT/yardstick.txt" >>"$LOG"
python3 - "$RES" "$OUT/yardstick.txt" >"$OUT/regret.txt" 2>>"$LOG" <<'PY'
import collections, statistics, sys
yard = {}
for line in open(sys.argv[2]):
    _, name, cfg, secs = line.split()
    yard[(name, cfg)] = float(secs)
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if f[:2] != ["result", "tune"]:
        continue
    kv = dict(x.split("=", 1) for x in f[3:])
    runs[(f[2], kv["sample"])].append(kv)
for (name, length), rs in sorted(runs.items()):
    best = min(v for (n, _), v in yard.items() if n == name)
    reg = [yard[(name, r["winner"])] / best - 1 for r in rs if (name, r["winner"]) in yard]
    print(f"{name} sample={length}: runs {len(rs)}, wall {statistics.median(float(r['wall_s']) for r in rs):.3f} s, "
          f"search {statistics.median(float(r['search_s']) for r in rs):.3f} s, finalists "
          f"{statistics.median(float(r['finalists_s']) for r in rs):.3f} s, regret mean {100 * statistics.mean(reg):.2f}% "
          f"max {100 * max(reg):.2f}%, winners {sorted(set(r['winner'] for r in rs))}")
PY
cat "$OUT/regret.txt" | tee -a "$LOG"
unset KTUNE_SAMPLE_S

say "blocking and background misses (tests/gpu/miss_cuda.c)"
export KTUNE_HELPER="$DIR/ktune-tuner" KTUNE_PRINT_AUTOTUNING=1
unset KTUNE_BINARY_CACHE # the helper's own, as an application has
CUDA=${CUDA_HOME:-/usr/local/cuda}
# shellcheck disable=SC2046
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -I"$CUDA/include" tests/gpu/miss_cuda.c "$DIR/libktune.a" \
  $(cat "$DIR/link.txt") -L"$CUDA/lib64/stubs" -lcuda -o /tmp/miss_cuda_s 2>>"$LOG" || { say "miss_cuda did not build"; exit 1; }
N1=$((1 << 24)) N2=$((1 << 22))
for s in $MISS_LENGTHS; do
  for r in 1 2 3; do
    db=$(mktemp -u /tmp/miss-sample-XXXXXX.db)
    KTUNE_SAMPLE_S=$s /tmp/miss_cuda_s "$db" tune $N1 $N2 >"$OUT/app.txt" 2>>"$LOG" || say "miss_cuda tune FAILED"
    grep '^result ' "$OUT/app.txt" | sed "s/\$/ sample=$s run=$r/" >>"$RES"
  done
done
for r in 1 2 3; do
  db=$(mktemp -u /tmp/miss-sample-XXXXXX.db)
  KTUNE_TRACE=1 /tmp/miss_cuda_s "$db" background $N1 $N2 >"$OUT/app.txt" 2>"$OUT/bg_trace_$r.txt" || say "miss_cuda background FAILED"
  grep '^result ' "$OUT/app.txt" | sed "s/\$/ run=bg$r/" >>"$RES"
  awk -f bench/miss_trace_summary.awk "$OUT/bg_trace_$r.txt" >"$OUT/bg_trace_summary_$r.txt" 2>>"$LOG"
done

say "Triton"
python3 bench/peers/triton_elementwise.py $N1 $N2 >"$OUT/triton.txt" 2>>"$LOG" || say "triton FAILED"
grep '^result ' "$OUT/triton.txt" >>"$RES"
sleep 1
left=$(ps -eo stat=,args= | awk '$1 !~ /^Z/ && /ktune-tuner/ && !/awk/' | wc -l)
echo "result ktune_tuner_left_behind $left" >>"$RES"
say "done"
cat "$RES"

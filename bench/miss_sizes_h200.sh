#!/usr/bin/env bash
# What does a tune on a miss cost at production sizes, and beside a busy
# application? On the H200, in one device call (issue 29, items 1, 2, 5):
#
#   bench/miss_sizes_h200.sh     (from the repository root, .carry carried;
#                                 SIZES="2048 8192 16384" by default)
#
# kernels/cuda/transpose.cu (26 configurations) through kt_launch in an
# application that owns its CUDA context (tests/gpu/miss_sizes.c), R x R f32
# tensors: R = 2048, 8192, 16384 (16 MB, 256 MB, 1 GB each), a fresh
# database per run, the binary cache warmed first by one tuning at the
# smallest size (so that the figures are the warm-cache ones):
# 0. bench/shm_pages.c at 256 MB on every core (shm_pages.txt): one populate
#    call against a split, the choice kt__populate made from the traces;
# 1. KT_MISS_TUNE twice per size: the first call for key R x R, then for key
#    (R - 32) x R on the helper kept warm; the second run with KTUNE_TRACE=1
#    (trace_R.txt, and trace_summary_R.txt from bench/miss_trace_summary.awk:
#    where the first key's time went); the largest size once, traced; then
#    once more after kt_kernel_prepare (mode prepared: both keys on a warm
#    helper);
# 1a. the blocking first call again with the caller's tensors copied
#    through host memory (KTUNE_MISS_TENSORS=host; every other run here
#    sets KTUNE_MISS_TENSORS=device, the library's default since the
#    nineteenth session: the sharing with the helper's worker on the
#    device): row
#    run=host, traced (trace_host_R.txt, trace_summary_second_host_R.txt);
# 1b. the blocking first call again with shorter timing samples, once per
#    length in $SAMPLE_TRIES (KTUNE_SAMPLE_S, seconds; default 0.0005, ""
#    for none), traced (trace_s<LENGTH>_R.txt and its summary): do the
#    winner and the finalist rounds stay, and what does the miss save?
#    (row run=s<LENGTH> of table.txt);
# 2. KT_MISS_BACKGROUND with the application calling every 50 ms (quiet)
#    and every 2 ms (busy): seconds from the first call to the call that ran
#    the winner, and the winner's kernel time beside the blocking mode's;
#    the winner's `measurement` record as stored (contended or not);
# 3. KT_MISS_ONLINE the same way, where include/ktune.h has it (else one
#    line saying that it is not there);
# 4. bench/peers/triton_transpose.py: Triton's autotuned transpose, its first
#    call and its winner's kernel time at each size (run before the largest
#    size's runs).
# Results under $OUT (default ./build-miss-sizes): results.txt ("result NAME
# VALUE size=R mode=M period=P run=N" lines), table.txt (one row per size
# and mode), log.txt, the traces.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUT=${OUT:-$ROOT/build-miss-sizes}
mkdir -p "$OUT"
LOG="$OUT/log.txt"
RES="$OUT/results.txt"
: >"$LOG"
: >"$RES"
say() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$LOG"; }
SIZES=${SIZES:-"2048 8192 16384"}
SAMPLE_TRIES=${SAMPLE_TRIES-0.0005}
say "miss sizes bench, $(git describe --always --dirty 2>/dev/null)," \
  "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1), sizes $SIZES"

KTUNE=$(bash scripts/h200_build.sh /tmp/kb-miss 2>>"$LOG" | tail -1)
[ -x "$KTUNE" ] || { say "build failed"; tail -30 /tmp/kb-miss/build.log | tee -a "$LOG"; exit 1; }
DIR=$(dirname "$KTUNE")
export KTUNE_HELPER="$DIR/ktune-tuner" KTUNE_MISS_TENSORS=device # but the run=host row
CUDA=${CUDA_HOME:-/usr/local/cuda}
ONLINE=""
grep -q 'KT_MISS_ONLINE' include/ktune.h && ONLINE="-DKT_HAVE_MISS_ONLINE"
# shellcheck disable=SC2046,SC2086
cc -O2 -std=c11 -D_GNU_SOURCE $ONLINE -Iinclude -I"$CUDA/include" tests/gpu/miss_sizes.c "$DIR/libktune.a" \
  $(cat "$DIR/link.txt") -L"$CUDA/lib64/stubs" -lcuda -o /tmp/miss_sizes 2>>"$LOG" ||
  { say "miss_sizes did not build"; exit 1; }

# Shared memory's pages alone, before any miss runs beside it.
cc -O2 -pthread -o /tmp/shm_pages bench/shm_pages.c 2>>"$LOG" && /tmp/shm_pages 256 >"$OUT/shm_pages.txt" 2>>"$LOG" ||
  say "shm_pages did not run"

FAILED=0
run_app() { # MODE R PERIOD_MS RUN [TRACE]
  local db tag="size=$2 mode=$1 period=$3 run=$4"
  db=$(mktemp -u /tmp/miss-sizes-XXXXXX.db)
  say "kt_launch $tag"
  if [ -n "${5:-}" ]; then # trace, or another name for the trace's file
    KTUNE_TRACE=1 /tmp/miss_sizes "$db" "$1" "$2" "$3" >"$OUT/app.txt" 2>"$OUT/${5}_$2.txt"
  else
    /tmp/miss_sizes "$db" "$1" "$2" "$3" >"$OUT/app.txt" 2>>"$LOG"
  fi || { say "miss_sizes $tag FAILED"; FAILED=$((FAILED + 1)); }
  cat "$OUT/app.txt" >>"$LOG"
  grep '^result ' "$OUT/app.txt" | sed "s/\$/ $tag/" >>"$RES"
  # The first key's winner as stored: its measurement record says how it was measured.
  python3 - "$db" "$2" >>"$RES" 2>>"$LOG" <<PY
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
row = db.execute("SELECT r.measurement FROM winners w JOIN keys k ON k.id = w.key_id JOIN results r "
                 "ON r.key_id = w.key_id AND r.config = w.config WHERE k.sizes LIKE ? ORDER BY k.id LIMIT 1",
                 ("%R=" + sys.argv[2] + "%",)).fetchone()
print("result winner_measurement " + (row[0] if row and row[0] else "none").replace(" ", "") + " $tag")
PY
  rm -f "$db" "$db"-*
}

run_triton() {
  say "Triton"
  # shellcheck disable=SC2086
  python3 bench/peers/triton_transpose.py $SIZES >"$OUT/triton.txt" 2>>"$LOG" || say "triton FAILED"
  cat "$OUT/triton.txt" >>"$LOG"
  grep '^result ' "$OUT/triton.txt" >>"$RES"
}

small=${SIZES%% *} largest=${SIZES##* }
run_app tune "$small" 0 warmup # compiles the 26 configurations into the binary cache
for r in $SIZES; do
  # Triton before the largest size, whose runs take longest: a run stopped
  # at its limit still has every peer figure.
  [ "$r" = "$largest" ] && run_triton
  [ "$r" = "$largest" ] || run_app tune "$r" 0 1 # the largest once, traced
  run_app tune "$r" 0 2 trace
  run_app prepared "$r" 0 1 trace_prepared # the first key, too, on a warm helper
  awk -f bench/miss_trace_summary.awk "$OUT/trace_prepared_$r.txt" >"$OUT/trace_summary_prepared_$r.txt"
  awk -f bench/miss_trace_summary.awk "$OUT/trace_$r.txt" >"$OUT/trace_summary_$r.txt"
  awk -v nth=2 -f bench/miss_trace_summary.awk "$OUT/trace_$r.txt" >"$OUT/trace_summary_second_$r.txt"
  # The caller's tensors through host memory, as before they were shared
  # with the helper on the device (KTUNE_MISS_TENSORS=host): row run=host.
  # (Only blocking misses share them: the background and online rows are
  # the same either way.)
  KTUNE_MISS_TENSORS=host run_app tune "$r" 0 host trace_host
  awk -v nth=2 -f bench/miss_trace_summary.awk "$OUT/trace_host_$r.txt" >"$OUT/trace_summary_second_host_$r.txt"
  for s in $SAMPLE_TRIES; do
    KTUNE_SAMPLE_S=$s run_app tune "$r" 0 "s$s" "trace_s$s"
    awk -f bench/miss_trace_summary.awk "$OUT/trace_s${s}_$r.txt" >"$OUT/trace_summary_s${s}_$r.txt"
  done
  for p in 50 2; do run_app background "$r" "$p" 1; done
  if [ -n "$ONLINE" ]; then
    for p in 50 2; do run_app online "$r" "$p" 1; done
  fi
done
[ -n "$ONLINE" ] || echo "result online_mode absent (no KT_MISS_ONLINE in include/ktune.h)" >>"$RES"

sleep 1
left=$(ps -eo stat=,args= | awk '$1 !~ /^Z/ && /ktune-tuner/ && !/awk/' | wc -l) # running, not zombies
echo "result ktune_tuner_left_behind $left" >>"$RES"
python3 - "$RES" >"$OUT/table.txt" <<'PY'
import collections, sys
rows = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 6 or not f[-1].startswith("run="):
        continue
    tag = dict(x.split("=", 1) for x in f[-4:])
    if tag["run"] == "warmup":
        continue
    key = (int(tag["size"]), tag["mode"], tag["period"], tag["run"])
    rows[key][f[1]] = " ".join(f[2:-4])
print("R mode period run | first_s second_s winner_after_s calls winner_us | winner | contended")
for k in sorted(rows):
    v = rows[k]
    print(*k, "|", v.get("first_call_first_key_s", "-"), v.get("first_call_second_key_s", "-"),
          v.get("winner_runs_after_s", "-"), v.get("calls_until_winner", "-"), v.get("winner_kernel_us", "-"),
          "|", v.get("first_key_winner", "-"), "|",
          "contended" if "contended" in v.get("winner_measurement", "") else "quiet")
PY
say "done ($FAILED failed)"
cat "$OUT/table.txt"
grep -h '^result triton' "$RES"
for r in $SIZES; do echo "--- trace R=$r"; cat "$OUT/trace_summary_$r.txt"; done
exit $FAILED

#!/usr/bin/env bash
# Does a time budget hold on the H200? `ktune tune --budget 25s` over
# a kernel whose configurations take seconds each to compile with NVRTC
# (tests/data/cuda_slow_compile.cu), timed as whole processes. From the
# repository root, with .carry carried (scripts/h200_build.sh --prepare):
#
#   BASE=.carry/base bench/time_budget_h200.sh
#
# 1. builds ktune (scripts/h200_build.sh), and the tree in $BASE too when set
#    (the code before the change, for comparison);
# 2. finds the smallest WORK whose configuration compiles in at least 3 s
#    (`ktune bench`);
# 3. tunes with that WORK pinned and budgets $BUDGETS (default "25 10"): each
#    run's process wall, exit status, the tuning's own wall and its
#    time_budget report; then checks that no ktune process is left.
# Results under $OUT (default ./build-budget): summary.txt, log.txt, *.json.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUT=${OUT:-$ROOT/build-budget}
mkdir -p "$OUT"
LOG="$OUT/log.txt"
SUMMARY="$OUT/summary.txt"
: >"$LOG"
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
say "time budgets, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null)," \
  "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $(nproc) cores"
KERNEL=tests/data/cuda_slow_compile.cu

KTUNE=$(scripts/h200_build.sh /tmp/budget-build 2>>"$LOG" | tail -1)
[ -x "$KTUNE" ] || { say "ktune did not build (log.txt)"; exit 1; }
BASE_KTUNE=""
if [ -n "${BASE:-}" ]; then
  base_build=$BASE/scripts/h200_build.sh
  [ -x "$base_build" ] || base_build=$BASE/bench/h200_build.sh # a tree from before it moved to scripts/
  BASE_KTUNE=$(KTUNE_DEPS_DIR="$ROOT/.carry" "$base_build" /tmp/budget-base 2>>"$LOG" | tail -1)
  [ -x "$BASE_KTUNE" ] || { say "the base tree did not build"; BASE_KTUNE=""; }
fi

# run NAME KTUNE COMMAND BUDGET ARGS...: one tuning (COMMAND tune or bench),
# its process wall and summary.
run() {
  local name=$1 k=$2 cmd=$3 b=$4
  shift 4
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout 300 "$k" "$cmd" $KERNEL --backend cuda --no-db --json --quiet --budget "$b" "$@" >"$OUT/$name.json" 2>>"$LOG"
  rc=$?
  t1=$(date +%s.%N)
  python3 - "$OUT/$name.json" "$name" "$b" "$rc" "$(echo "$t1 $t0" | awk '{print $1 - $2}')" <<'P' | tee -a "$SUMMARY"
import json, sys
path, name, budget, rc, wall = sys.argv[1:]
try:
    d = json.load(open(path))
except Exception as e:
    print("%s: --budget %s exit %s, process %.2f s, no JSON (%s)" % (name, budget, rc, float(wall), e)); sys.exit()
st = [c["status"] for c in d["configurations"]]
b = float(budget.rstrip("s")) if budget.endswith("s") else 0
over = " (%+.1f%% of the budget)" % ((float(wall) / b - 1) * 100) if b else ""
print("%s: --budget %s exit %s, process %.2f s%s, tuning %.2f s, compiles %s s, measured %d of %d, "
      "winner %s, time_budget %s" % (name, budget, rc, float(wall), over, d["timeline"]["wall_s"],
      sorted(round(c["compile_s"], 2) for c in d["configurations"] if c["compile_s"] > 0)[-3:], sum(s != "pending" for s in st), len(st),
      d["winner"] and d["winner"]["config"], d.get("time_budget")))
P
}

WORK=""
for w in 2000 8000 16000 32000 64000; do
  run "calibrate_$w" "$KTUNE" bench 1 --autotune "WORK=$w BLOCK=128 SALT=0"
  c=$(python3 -c "import json; print(max(c['compile_s'] for c in json.load(open('$OUT/calibrate_$w.json'))['configurations']))" 2>/dev/null)
  WORK=$w
  python3 -c "import sys; sys.exit(0 if float('${c:-0}') >= 3 else 1)" && break
done
say "WORK=$WORK"
for b in ${BUDGETS:-25 10}; do
  run "now_${b}s" "$KTUNE" tune "${b}s" --autotune "WORK=$WORK"
  [ -n "$BASE_KTUNE" ] && run "before_${b}s" "$BASE_KTUNE" tune "${b}s" --autotune "WORK=$WORK"
done
sleep 1
left=$(pgrep -fa "ktune tune" | grep -v pgrep)
say "ktune processes left: ${left:-none}"

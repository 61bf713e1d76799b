#!/usr/bin/env bash
# Where does a tuning of a slow-compiling kernel spend a budget in seconds?
# (issue 31, item 5; issue 32, item 3). On the H200, from the repository
# root with .carry carried:
#
#   bench/gemm_wgmma_budget_h200.sh            (BUDGETS="5 10 20" by default;
#                                              EXTRA: more ktune options)
#
# kernels/cuda/gemm_wgmma.cu at 4096^3 (about 210 configurations with the
# @cluster stage; NVRTC takes about 0.65 s for each), every tuning with an
# empty binary cache of its own, so that every configuration is compiled:
# 1. the whole space (exhaustive): wall, compile busy over the compile
#    threads, device busy and idle, and every configuration's median, the
#    yardstick for the runs below;
# 2. for each budget, `--budget Ns` with the default strategy and with
#    random search: process wall, configurations compiled and measured, the
#    winner, and the winner's time in the exhaustive run over the
#    exhaustive run's best (1.000 = the best there is; both read from one
#    run's medians, so the figure does not move with the card's clocks).
# Every configuration is verified against torch's fp32-accumulated product
# (bench/gemm_wgmma_ref.py). Results under $OUT (default
# ./build-gemm-budget): table.md, log.txt, *.json.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUT=${OUT:-$ROOT/build-gemm-budget}
BUDGETS=${BUDGETS:-"5 10 20"}
EXTRA=${EXTRA:-} # more ktune options for every run, e.g. EXTRA="--jobs 4": fewer compile threads
mkdir -p "$OUT"
W=$(mktemp -d /tmp/gemm_budget.XXXXXX)
trap 'rm -rf "$W"' EXIT
T0=$(date +%s)
LOG=$OUT/log.txt
: >"$LOG"
say() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$LOG"; }
K=kernels/cuda/gemm_wgmma.cu

say "gemm_wgmma budgets ${BUDGETS// /, } s${EXTRA:+, $EXTRA}, $(git rev-parse --short HEAD 2>/dev/null), $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(nproc) cores"
KTUNE=$(scripts/h200_build.sh "$W/build" 2>"$W/build.err" | tail -1)
[ -x "$KTUNE" ] || { tail -30 "$W/build.err" | tee -a "$LOG"; exit 1; }
python3 bench/gemm_wgmma_ref.py data "$W" 4096 4096 4096 2>>"$LOG" || exit 1
DATA="--dim M=4096 --dim N=4096 --dim K=4096 --input a=$W/a.bin:bf16 --input b=$W/b.bin:bf16 --expect c=$W/c.bin:bf16"

# tune NAME ARGS...: one tuning with an empty binary cache of its own.
tune() {
  local name=$1 t0 rc
  shift
  rm -rf "$W/cache"
  mkdir -p "$W/cache"
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  KTUNE_BINARY_CACHE="$W/cache" timeout 300 "$KTUNE" tune $K $DATA --no-db --json $EXTRA "$@" >"$OUT/$name.json" 2>>"$LOG"
  rc=$?
  echo "$name $rc $(echo "$(date +%s.%N) $t0" | awk '{print $1 - $2}')" >>"$W/walls.txt"
  say "$name: exit $rc"
}

tune exhaustive --strategy exhaustive
for b in $BUDGETS; do
  tune "default_${b}s" --budget "${b}s"
  tune "random_${b}s" --budget "${b}s" --strategy random
done

python3 - "$OUT" "$W/walls.txt" <<'PY' | tee "$OUT/table.md"
import json, sys
out, walls = sys.argv[1], sys.argv[2]
wall = {l.split()[0]: (int(l.split()[1]), float(l.split()[2])) for l in open(walls)}

def load(name):
    try:
        return json.load(open("%s/%s.json" % (out, name)))
    except Exception:
        return None

def key(cfg):
    return " ".join("%s=%s" % kv for kv in sorted(cfg.items()))

ex = load("exhaustive")
if not ex:
    sys.exit("no exhaustive run")
t = {key(c["config"]): c["median_s"] for c in ex["configurations"] if c["status"] == "ok"}
best = min(t.values())
tl = ex["timeline"]
print("exhaustive: %d configurations, %d ok; wall %.1f s, compile busy %.1f s over %d threads, device busy %.1f s, idle %.1f s; best %.4f ms"
      % (len(ex["configurations"]), len(t), tl["wall_s"], tl["compile_busy_s"], tl["compile_threads"],
         tl["device_busy_s"], tl["device_idle_s"], best * 1e3))
print()
print("| run | exit | process wall s | compiled | measured ok | device busy s | winner | best / winner's time, both from the exhaustive run |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for name in sorted(wall, key=lambda n: (n != "exhaustive", n.split("_")[-1].zfill(4), n)):
    r = load(name)
    rc, w = wall[name]
    if not r:
        print("| %s | %d | %.1f | | | | no JSON | |" % (name, rc, w))
        continue
    cs = r["configurations"]
    compiled = sum(1 for c in cs if c.get("compile_s", 0) > 0)
    ok = sum(1 for c in cs if c["status"] == "ok")
    win = r.get("winner") and key(r["winner"]["config"])
    ratio = "%.3f" % (best / t[win]) if win in t else "not in the exhaustive run"
    print("| %s | %d | %.1f | %d | %d | %.1f | %s | %s |" % (name, rc, w, compiled, ok, r["timeline"]["device_busy_s"], win, ratio))
PY
say "done"

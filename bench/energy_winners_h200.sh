#!/usr/bin/env bash
# Time winner against energy winner on the H200 (issue 27, items 4 and 6):
# sgemm.cu (4096^3, the space as it is in this tree) and elementwise.cu at
# N = 2^22 and 2^26 are tuned for time, then for energy and for edp on the same
# database (the energy runs reuse the time run's measurements, energy
# included, and run their own finalist rounds), then each objective's winner
# is timed again alone beside the default (`ktune bench --pin`, --no-cache),
# so that both winners' time and energy come from fresh runs side by side.
# NVML's total-energy counter is also read twice 1 ms apart, then 100 ms
# apart, to see how often it moves. bench/energy_winners.py prints the table.
#   bench/energy_winners_h200.sh [OUTDIR]     (on the H200 machine)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUTDIR=${1:-${OUT:-$ROOT/gpu-out}}
mkdir -p "$OUTDIR"
KTUNE=$(scripts/h200_build.sh 2>"$OUTDIR/build.log" | tail -1)
[ -x "$KTUNE" ] || { echo "FAIL: build (see build.log)"; tail -20 "$OUTDIR/build.log"; exit 1; }
DATA=$(mktemp -d)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader
# How often the counter moves: nvidia-smi has no energy field, so python3 (ctypes) asks NVML.
python3 - <<'PY' || echo "NVML energy probe failed"
import ctypes, time
nv = ctypes.CDLL("libnvidia-ml.so.1")
assert nv.nvmlInit_v2() == 0
h = ctypes.c_void_p()
assert nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h)) == 0
e = ctypes.c_ulonglong()
def read():
    r = nv.nvmlDeviceGetTotalEnergyConsumption(h, ctypes.byref(e))
    return e.value if r == 0 else None
seen = []
t0, last = time.perf_counter(), read()
steps = 0
while time.perf_counter() - t0 < 0.5:
    v = read()
    if v != last: steps += 1; seen.append(v - last); last = v
print(f"NVML total energy: {steps} changes in 0.5 s of reads (idle), steps of {sorted(set(seen))[:8]} mJ")
PY
tune() { # NAME OBJECTIVE ARGS...
  local name=$1 obj=$2
  shift 2
  "$KTUNE" tune "$@" --backend cuda --objective "$obj" --db "$DATA/$name.db" --quiet --json \
    >"$DATA/$name.$obj.json" 2>"$DATA/$name.$obj.err" || echo "ktune $name --objective $obj: exit $? ($(tail -c 300 "$DATA/$name.$obj.err"))"
}
bench_pin() { # NAME OBJECTIVE CONFIG ARGS...: the winner of OBJECTIVE again, alone beside the default
  local name=$1 obj=$2 cfg=$3
  shift 3
  "$KTUNE" bench "$@" --backend cuda --objective energy --autotune "$cfg" --no-db --quiet --json \
    >"$DATA/$name.$obj.bench.json" 2>"$DATA/$name.$obj.bench.err" || echo "ktune bench $name $obj: exit $?"
}
winner() { python3 -c "import json,sys; w=json.load(open(sys.argv[1]))['winner']; print(' '.join(f'{k}={v}' for k, v in w['config'].items()) if w else '')" "$1"; }
run_case() { # NAME ARGS...
  local name=$1
  shift
  for obj in time energy edp; do tune "$name" $obj "$@"; done
  for obj in time energy; do
    cfg=$(winner "$DATA/$name.$obj.json" 2>/dev/null)
    [ -n "$cfg" ] && bench_pin "$name" $obj "$cfg" "$@"
  done
}
# An energy tuning measures each configuration for about a second (NVML's
# counter moves every ~100 ms: src/backend/cuda.c, energy_window_s), so
# sgemm's 348 get a time budget (ENERGY_SGEMM_BUDGET, default 60s) and
# ENERGY_CASES picks the cases (default all three).
CASES=${ENERGY_CASES:-sgemm elementwise_2e22 elementwise_2e26}
for c in $CASES; do
  case $c in
  sgemm) run_case sgemm kernels/cuda/sgemm.cu --budget "${ENERGY_SGEMM_BUDGET:-60s}" ;;
  elementwise_2e22) run_case elementwise_2e22 kernels/cuda/elementwise.cu --dim N=4194304 ;;
  elementwise_2e26) run_case elementwise_2e26 kernels/cuda/elementwise.cu --dim N=67108864 ;;
  esac
done
# shellcheck disable=SC2086
python3 bench/energy_winners.py "$DATA" $CASES | tee "$OUTDIR/table.md"
tar -C "$DATA" --exclude='*.db*' -czf "$OUTDIR/energy_winners.tar.gz" .

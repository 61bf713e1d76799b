#!/usr/bin/env bash
# Does reading NVML around every timed sample slow a tuning's measuring?
# (issue 29: at 256 MB each transpose configuration took 19-44 ms to
# measure for about 5 ms of kernels.) On a GPU machine, from the repository
# root with .carry carried:
#
#   bench/nvml_sample_cost_h200.sh      (ROUNDS=2 by default)
#
# 1. bench/nvml_call_cost.c: each NVML call's median and largest time;
# 2. kernels/cuda/transpose.cu at 8192 x 8192 (256 MB tensors) tuned whole
#    with `ktune tune --json`, ROUNDS times with NVML and ROUNDS times
#    without (KTUNE_LIBNVML=/nonexistent: no readings), alternating: the
#    process wall, the device-busy split and the samples per configuration.
# Results under $OUT (default ./build-nvml-cost): table.txt, log.txt, *.json.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUT=${OUT:-$ROOT/build-nvml-cost}
ROUNDS=${ROUNDS:-2}
mkdir -p "$OUT"
LOG=$OUT/log.txt
: >"$LOG"
KTUNE=$(bash scripts/h200_build.sh /tmp/kb-nvml 2>>"$LOG" | tail -1)
[ -x "$KTUNE" ] || { echo "build failed" | tee -a "$LOG"; exit 1; }
cc -O2 -o /tmp/nvml_call_cost bench/nvml_call_cost.c -ldl && /tmp/nvml_call_cost 50 | tee "$OUT/table.txt"
for r in $(seq "$ROUNDS"); do
  for mode in nvml none; do
    lib=""
    [ $mode = none ] && lib=/nonexistent
    t0=$(date +%s.%N)
    env ${lib:+KTUNE_LIBNVML=$lib} "$KTUNE" tune kernels/cuda/transpose.cu --no-db --json >"$OUT/${mode}_$r.json" 2>>"$LOG"
    echo "$mode $r exit $? wall $(echo "$(date +%s.%N) $t0" | awk '{print $1 - $2}') s" | tee -a "$OUT/table.txt"
  done
done
python3 - "$OUT" "$ROUNDS" <<'PY' | tee -a "$OUT/table.txt"
import json, sys, statistics
out, rounds = sys.argv[1], int(sys.argv[2])
for mode in ("nvml", "none"):
    for r in range(1, rounds + 1):
        try:
            j = json.load(open("%s/%s_%d.json" % (out, mode, r)))
        except Exception as e:
            print(mode, r, "no JSON:", e); continue
        cs = [c for c in j["configurations"] if c["status"] == "ok"]
        tl = j["timeline"]
        print("%s %d: %d ok, wall %.2f s, device busy %.2f s %s, samples per configuration median %s, measuring per configuration median %.4f s"
              % (mode, r, len(cs), tl["wall_s"], tl["device_busy_s"], json.dumps(tl.get("device_busy_split_s")),
                 statistics.median(c["samples"] for c in cs), statistics.median(c["worker_s"]["measure"] for c in cs)))
PY

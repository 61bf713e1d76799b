#!/usr/bin/env bash
# The energy read on a real GPU (tests/gpu/, run on the H100/H200 machine):
# elementwise.cu at N = 2^24 tuned for time, then for energy, each with
# --json. A time tuning of short samples must not read NVML's energy counter
# (src/measure/measure.c, energy_now: it costs milliseconds a read) and still
# ends with verified results; an energy tuning must report the energy of its
# winner. Prints what it checked; exit status 0 when both hold.
#   tests/gpu/energy_h200.sh [OUTDIR]
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
OUTDIR=${1:-${OUT:-$ROOT/gpu-out}}
mkdir -p "$OUTDIR"
KTUNE=$(scripts/h200_build.sh 2>"$OUTDIR/energy_build.log" | tail -1)
[ -x "$KTUNE" ] || { echo "FAIL: build"; tail -20 "$OUTDIR/energy_build.log"; exit 1; }
DB=$(mktemp -u /tmp/energy-XXXXXX.db)
fail=0
for objective in time energy; do
  t0=$(date +%s.%N)
  "$KTUNE" tune kernels/cuda/elementwise.cu --dim N=16777216 --objective "$objective" --db "$DB" --json \
    >"$OUTDIR/energy_$objective.json" 2>"$OUTDIR/energy_$objective.err" || { echo "FAIL: tune --objective $objective"; fail=1; }
  echo "tune --objective $objective: $(awk "BEGIN { print $(date +%s.%N) - $t0 }") s"
done
python3 - "$OUTDIR/energy_time.json" "$OUTDIR/energy_energy.json" <<'PY' || fail=1
import json, sys
t, e = (json.load(open(p)) for p in sys.argv[1:3])
tm, em = t["winner"]["measurement"], e["winner"]["measurement"]
print("time tuning: winner", t["winner"]["config"], t["winner"]["status"], "measurement", json.dumps(tm))
print("energy tuning: winner", e["winner"]["config"], e["winner"]["status"], "measurement", json.dumps(em))
ok = t["winner"]["status"] == "ok" and e["winner"]["status"] == "ok" and "energy_per_launch_j" in json.dumps(em)
print("PASS" if ok else "FAIL: a winner not ok, or no energy in the energy tuning's winner")
sys.exit(0 if ok else 1)
PY
rm -f "$DB" "$DB"-*
exit $fail

#!/usr/bin/env bash
# The energy read on a real GPU (tests/gpu/, run on the H100/H200 machine):
# elementwise.cu at N = 2^24 tuned for time, then for energy, each with
# --json. A time tuning of short samples must not read NVML's energy counter
# (src/measure/measure.c, energy_now: it costs milliseconds a read) and still
# ends with verified results; an energy tuning must report the energy of its
# winner. Writes OUTDIR/energy.txt (PASS/FAIL lines, each tuning's wall time);
# exit status 0 when every check held.
#   tests/gpu/energy_h200.sh [OUTDIR]
set -u
. "$(dirname "$0")/checks.bash" # ROOT (the working directory), OUTDIR, WORK
checks_begin energy.txt "ktune energy read on a GPU"
for objective in time energy; do
  t0=$(date +%s.%N)
  "$KTUNE" tune kernels/cuda/elementwise.cu --dim N=16777216 --objective "$objective" --db "$WORK/results.db" --json \
    >"$OUTDIR/energy_$objective.json" 2>"$OUTDIR/energy_$objective.err"
  check "tune --objective $objective" $? "$(awk "BEGIN { print $(date +%s.%N) - $t0 }") s"
done
python3 - "$OUTDIR/energy_time.json" "$OUTDIR/energy_energy.json" >>"$SUMMARY" <<'PY'
import json, sys
t, e = (json.load(open(p)) for p in sys.argv[1:3])
tm, em = t["winner"]["measurement"], e["winner"]["measurement"]
print("time tuning: winner", t["winner"]["config"], t["winner"]["status"], "measurement", json.dumps(tm))
print("energy tuning: winner", e["winner"]["config"], e["winner"]["status"], "measurement", json.dumps(em))
ok = t["winner"]["status"] == "ok" and e["winner"]["status"] == "ok" and "energy_per_launch_j" in json.dumps(em)
sys.exit(0 if ok else 1)
PY
check "both winners ok, the energy tuning's with its energy" $?

say "$FAILED checks failed"
rm -rf "$WORK"
[ "$FAILED" -eq 0 ]

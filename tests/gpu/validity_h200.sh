#!/usr/bin/env bash
# Validity of measurements on the H200 (issue 27, item 3): elementwise.cu at
# N = 2^22 is tuned twice with --json, first on a quiet GPU, then while
# another process (PyTorch, a matmul loop) holds a compute context on it and
# keeps it busy. Every measurement of the quiet run must say "valid": true;
# in the busy run NVML's process list names the other process, so samples
# are retaken and what stays disturbed is marked ("valid": false,
# "disturbance": "shared") instead of deciding silently. Prints each run's
# counts, winner and the winner's measurement record; no process is left.
#   tests/gpu/validity_h200.sh [OUTDIR]    (exit status 0: both checks held)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
OUTDIR=${1:-${OUT:-$ROOT/gpu-out}}
mkdir -p "$OUTDIR"
KTUNE=$(scripts/h200_build.sh 2>"$OUTDIR/build.log" | tail -1)
[ -x "$KTUNE" ] || { echo "FAIL: build (see build.log)"; tail -20 "$OUTDIR/build.log"; exit 1; }
tune() { "$KTUNE" tune kernels/cuda/elementwise.cu --backend cuda --dim N=4194304 --no-db --no-cache --quiet --json >"$OUTDIR/$1.json" 2>"$OUTDIR/$1.err"; }
summary() { # NAME EXPECT: counts of valid and disturbed measurements, the winner's record
  python3 - "$OUTDIR/$1.json" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ok = [c for c in r["configurations"] if c["status"] == "ok"]
valid = sum(1 for c in ok if c["measurement"].get("valid"))
shared = sum(1 for c in ok if "shared" in c["measurement"].get("disturbance", ""))
retaken = sum(c["measurement"].get("retaken_samples", 0) for c in ok)
print(f"{len(ok)} measured, {valid} valid, {shared} marked shared, {retaken} samples retaken")
print("winner", r["winner"]["config"], "median_s", r["winner"].get("median_s"))
print("winner's measurement", json.dumps(next(c["measurement"] for c in ok if c["config"] == r["winner"]["config"])))
held = valid == len(ok) if sys.argv[2] == "quiet" else shared > 0 and valid < len(ok)
print("PASS" if held else "FAIL", sys.argv[2])
sys.exit(0 if held else 1)
PY
}
FAILED=0
echo "== quiet GPU"
tune quiet || echo "ktune exit $?"
summary quiet quiet || FAILED=1
echo "== beside a PyTorch process keeping the GPU busy"
python3 -c '
import time, torch
a = torch.randn(8192, 8192, device="cuda")
print("busy process ready", flush=True)
t = time.time()
while time.time() - t < 90:
    b = a @ a
    torch.cuda.synchronize()
' >"$OUTDIR/busy.log" 2>&1 &
BUSY=$!
for _ in $(seq 60); do grep -q ready "$OUTDIR/busy.log" && break; sleep 0.5; done
nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader
tune busy || echo "ktune exit $?"
kill "$BUSY" 2>/dev/null
wait "$BUSY" 2>/dev/null
summary busy busy || FAILED=1
grep -i -m3 'valid\|shared\|disturb' "$OUTDIR/busy.err"
left=$(pgrep -f 'ktune(-tuner)? ' | grep -v $$ || true)
[ -z "$left" ] || { echo "FAIL: ktune processes left: $left"; FAILED=1; }
exit $FAILED

#!/usr/bin/env bash
# The CUDA backend on a real GPU (written for the H200 machine; any sm_90
# device works). Run from anywhere; it works in the repository root:
#
#   tests/gpu/run_h200.sh [OUTDIR]        (OUTDIR: $OUT, else ./gpu-out)
#
# Steps, each logged and summarised in OUTDIR/summary.txt:
#   1. build ktune and the unit tests (scripts/h200_build.sh --tests: CMake,
#      else plain cc). What the machine lacks (sqlite3.h, json-c/, zlib.h,
#      runtime libraries) comes from .carry, which `scripts/h200_build.sh
#      --prepare` makes on a machine with the development packages.
#   2. the unit tests: test_cuda must pass; the other groups are reported.
#   3. `ktune devices`: a CUDA device must be listed.
#   4. every kernel in kernels/cuda/ tuned with --json: a winner must exist
#      and be verified (status ok) against the default configuration.
#   5. tests/data/cuda_faulty.cu: BLOCK=512 writes out of bounds; the run
#      must survive, record it as `runtime`, and verify the others.
#   6. cuBLAS SGEMM and bf16 GEMM at 4096^3 (tests/gpu/cublas_gemm.cu, built
#      with nvcc when present) for the TFLOP/s comparison.
# Everything comes back in three files: summary.txt, log.txt, results.tar.gz
# (the JSON documents). Exit status 0 when every required check passed.
# The budgets keep the whole run under about 8 minutes.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
OUTDIR=${1:-${OUT:-$ROOT/gpu-out}}
BUILD=${BUILD:-$ROOT/build-gpu}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$OUTDIR" "$BUILD/json"
LOG="$OUTDIR/log.txt"
SUMMARY="$OUTDIR/summary.txt"
: >"$LOG"
: >"$SUMMARY"
FAILED=0
T0=$(date +%s)

say() { echo "$*" | tee -a "$SUMMARY"; }
log() { echo "== $*" >>"$LOG"; }
check() { # check NAME CONDITION-STATUS [detail]
  if [ "$2" -eq 0 ]; then say "PASS  $1${3:+  ($3)}"; else say "FAIL  $1${3:+  ($3)}"; FAILED=$((FAILED + 1)); fi
}
elapsed() { echo $(($(date +%s) - T0)); }

# ---- 1. build -------------------------------------------------------------

say "ktune CUDA check on $(hostname), $(date -u '+%Y-%m-%d %H:%M UTC')"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /' | tee -a "$SUMMARY"
log "build"
KTUNE=$(scripts/h200_build.sh --tests "$BUILD" 2>>"$LOG" | tail -1)
cat "$BUILD/build.log" >>"$LOG"
[ -x "$KTUNE" ]
check "build ktune" $? "$(elapsed) s"
if [ ! -x "$KTUNE" ]; then
  say "cannot go on without ktune; see log.txt"
  cp "$BUILD/build.log" "$OUTDIR/" 2>/dev/null
  exit 1
fi
UNIT="$(dirname "$KTUNE")/tests"

# ---- 2. unit tests --------------------------------------------------------

[ -x "$UNIT/test_cuda" ] || [ "${KTUNE_GPU_SKIP_UNIT:-0}" = 1 ] || check "unit tests test_cuda" 1 "not built"
for t in "$UNIT"/test_*; do
  [ -x "$t" ] || continue
  [ "${KTUNE_GPU_SKIP_UNIT:-0}" = 1 ] && break
  g=$(basename "$t")
  log "unit tests: $g"
  # test_cuda compiles ~600 configurations: seconds on 16 cores, minutes on 2.
  limit=120
  [ "$g" = test_cuda ] && limit=400
  timeout $limit "$t" >"$BUILD/$g.out" 2>&1
  rc=$?
  cat "$BUILD/$g.out" >>"$LOG"
  summary=$(tail -1 "$BUILD/$g.out")
  [ $rc -eq 124 ] && summary="timed out after $limit s"
  if [ "$g" = test_cuda ]; then
    check "unit tests $g" $rc "$summary"
  else
    say "info  unit tests $g: $summary"
  fi
done

# ---- 3. devices -----------------------------------------------------------

log "ktune devices"
"$KTUNE" devices >"$BUILD/devices.txt" 2>&1
cat "$BUILD/devices.txt" >>"$LOG"
"$KTUNE" devices --json >"$BUILD/json/devices.json" 2>>"$LOG"
grep -q '"cuda"' "$BUILD/json/devices.json" && grep -qi 'sm_' "$BUILD/json/devices.json"
check "ktune devices lists a CUDA device" $? "$(grep -i -m1 'sm_' "$BUILD/devices.txt" | tr -s ' ')"

# ---- 4. tune every shipped kernel -----------------------------------------

# Prints "status winner-config speedup rate" from a ktune --json document, and
# exits 0 when the winner exists and was verified.
summarise_json() {
  python3 - "$1" <<'EOF'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except Exception as e:
    print("no JSON document: %s" % e); sys.exit(1)
cfgs = doc.get("configurations", [])
counts = {}
for c in cfgs:
    counts[c.get("status")] = counts.get(c.get("status"), 0) + 1
w = doc.get("winner")
rate = []
for k in ("winner_tflops", "winner_gbps", "default_tflops", "default_gbps"):
    if k in doc: rate.append("%s=%.4g" % (k, doc[k]))
print("tried %d %s; winner %s; speedup over default %s; %s" % (
    len(cfgs), counts, w and w.get("config"), doc.get("speedup_over_default"), " ".join(rate)))
sys.exit(0 if w and w.get("status") == "ok" else 1)
EOF
}

DB="$BUILD/ktune-gpu.db"
rm -f "$DB"
tune() { # tune FILE BUDGET [extra...]
  local f=$1 budget=$2 name
  shift 2
  name=$(basename "$f" .cu)
  log "ktune tune $f --budget $budget $*"
  timeout 240 "$KTUNE" tune "$f" --backend cuda --budget "$budget" --db "$DB" --json "$@" \
    >"$BUILD/json/$name.json" 2>"$BUILD/$name.err"
  local rc=$?
  cat "$BUILD/$name.err" >>"$LOG"
  head -c 200000 "$BUILD/json/$name.json" >>"$LOG"
  echo "ktune exit status $rc" >>"$LOG"
  return $rc
}

# KTUNE_GPU_KERNELS narrows the list (a shorter run after a fix).
for f in ${KTUNE_GPU_KERNELS:-kernels/cuda/*.cu}; do
  case $(basename "$f") in
  sgemm.cu | gemm_bf16.cu) budget=75s ;;
  *) budget=30s ;;
  esac
  tune "$f" "$budget"
  rc=$?
  detail=$(summarise_json "$BUILD/json/$(basename "$f" .cu).json")
  ok=$?
  [ $rc -ne 0 ] && ok=1
  check "tune $(basename "$f"): verified winner" $ok "exit $rc; $detail"
done

# ---- 5. fault injection ---------------------------------------------------

tune tests/data/cuda_faulty.cu 60s
rc=$?
python3 - "$BUILD/json/cuda_faulty.json" >>"$SUMMARY" <<'EOF'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except Exception as e:
    print("      no JSON document: %s" % e); sys.exit(1)
by_block = {c["config"].get("BLOCK"): c for c in doc.get("configurations", [])}
bad = by_block.get(512, {})
good = [b for b in (128, 256, 1024) if by_block.get(b, {}).get("status") == "ok"]
print("      BLOCK=512: %s: %s" % (bad.get("status"), bad.get("message", "")[:300]))
print("      verified after the fault: BLOCK in %s" % good)
sys.exit(0 if bad.get("status") == "runtime" and len(good) == 3 else 1)
EOF
ok=$?
[ $rc -ne 0 ] && ok=1
check "fault injection: BLOCK=512 recorded as runtime, the others verified" $ok "exit $rc"

# ---- 6. cuBLAS reference --------------------------------------------------

if command -v nvcc >/dev/null 2>&1 || [ -x "$CUDA_HOME/bin/nvcc" ]; then
  NVCC=$(command -v nvcc || echo "$CUDA_HOME/bin/nvcc")
  log "cuBLAS reference"
  if "$NVCC" -O2 -arch=sm_90 tests/gpu/cublas_gemm.cu -lcublas -o "$BUILD/cublas_gemm" >>"$LOG" 2>&1; then
    "$BUILD/cublas_gemm" 4096 4096 4096 2>&1 | tee -a "$LOG" | sed 's/^/info  /' | tee -a "$SUMMARY" >/dev/null
  else
    say "info  cuBLAS reference: nvcc could not build tests/gpu/cublas_gemm.cu (see log.txt)"
  fi
else
  say "info  cuBLAS reference skipped: no nvcc"
fi

# ---- results --------------------------------------------------------------

tar -czf "$OUTDIR/results.tar.gz" -C "$BUILD" json devices.txt 2>>"$LOG"
say "$FAILED check(s) failed; $(elapsed) s in all"
[ "$FAILED" -eq 0 ]

#!/usr/bin/env bash
# The CUDA backend on a real GPU (written for the H200 machine; any sm_90
# device works). Run from anywhere; it works in the repository root:
#
#   tests/gpu/run_h200.sh [OUTDIR]        (OUTDIR: $OUT, else ./gpu-out)
#
# Steps, each logged and summarised in OUTDIR/summary.txt:
#   1. build ktune, its static library and the unit tests with plain cc (no
#      CMake or pkg-config needed). Headers the machine lacks (sqlite3.h,
#      json-c/, zlib.h) are taken from .carry/include, libraries it lacks
#      from .carry/lib; an installed runtime library (libsqlite3.so.0) is
#      linked by its full path when there is no development symlink.
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
JOBS=$(nproc 2>/dev/null || echo 4)
mkdir -p "$OUTDIR" "$BUILD/obj" "$BUILD/json"
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

CFLAGS="-O2 -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -Iinclude -Isrc"
CFLAGS="$CFLAGS -DKTUNE_SOURCE_DIR=\"$ROOT\""
[ -d .carry/include ] && CFLAGS="$CFLAGS -I$ROOT/.carry/include"
if [ -f "$CUDA_HOME/include/cuda.h" ]; then
  CFLAGS="$CFLAGS -isystem $CUDA_HOME/include -DKTUNE_HAVE_CUDA_H=1"
fi
if echo '#include <CL/cl.h>' | cc $CFLAGS -E -x c - >/dev/null 2>&1; then
  CFLAGS="$CFLAGS -DKTUNE_HAVE_CL_H=1 -DCL_TARGET_OPENCL_VERSION=120"
fi
export CFLAGS BUILD

# How to link library NAME: -lNAME when that links, else the full path of a
# carried or installed runtime copy (lib<NAME>.so.N).
link_flag() {
  local name=$1 path
  if echo 'int main(void){return 0;}' | cc -x c - -L"$ROOT/.carry/lib" -l"$name" -o /dev/null 2>/dev/null; then
    echo "-L$ROOT/.carry/lib -l$name"
    return
  fi
  path=$(ls "$ROOT"/.carry/lib/lib"$name".so* 2>/dev/null | head -1)
  [ -z "$path" ] && path=$(ldconfig -p 2>/dev/null | awk -v n="lib$name.so" 'index($1, n) == 1 {print $NF; exit}')
  [ -n "$path" ] && echo "$path" || echo "-l$name"
}

compile_one() { # src -> $BUILD/obj/<path with _>.o
  local o="$BUILD/obj/$(echo "$1" | tr '/' '_').o"
  cc $CFLAGS -c "$1" -o "$o" 2>>"$BUILD/cc.log" || { echo "cc failed: $1" >>"$BUILD/cc.log"; return 1; }
}
export -f compile_one

build() {
  : >"$BUILD/cc.log"
  rm -f "$BUILD"/obj/*.o
  find src -name '*.c' | xargs -P "$JOBS" -I{} bash -c 'compile_one "$@"' _ {} || return 1
  ar rcs "$BUILD/libktune.a" "$BUILD"/obj/*.o || return 1
  LIBS="$(link_flag sqlite3) $(link_flag json-c) $(link_flag z) -ldl -lpthread -lm"
  echo "libraries: $LIBS" >>"$BUILD/cc.log"
  cc $CFLAGS cli/ktune.c "$BUILD/libktune.a" $LIBS -o "$BUILD/ktune" 2>>"$BUILD/cc.log" || return 1
  for t in tests/unit/test_*.c; do
    cc $CFLAGS -Itests/harness "$t" tests/harness/harness.c "$BUILD/libktune.a" $LIBS \
      -o "$BUILD/$(basename "$t" .c)" 2>>"$BUILD/cc.log" || echo "cannot build $t" >>"$BUILD/cc.log"
  done
}

say "ktune CUDA check on $(hostname), $(date -u '+%Y-%m-%d %H:%M UTC')"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /' | tee -a "$SUMMARY"
log "build"
build
rc=$?
cat "$BUILD/cc.log" >>"$LOG"
check "build ktune" $rc "$(elapsed) s"
KTUNE="$BUILD/ktune"
if [ ! -x "$KTUNE" ]; then
  say "cannot go on without ktune; see log.txt"
  cp "$BUILD/cc.log" "$OUTDIR/" 2>/dev/null
  exit 1
fi

# ---- 2. unit tests --------------------------------------------------------

for t in "$BUILD"/test_*; do
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

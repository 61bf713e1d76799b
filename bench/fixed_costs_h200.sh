#!/usr/bin/env bash
# The floor of a small space on the H200: what any CUDA tuner pays
# before its first verified configuration, measured beside ktune's and Kernel
# Tuner's whole runs over kernels/cuda/elementwise.cu (16 configurations).
# From the repository root, with .whl and .carry carried:
#
#   bench/fixed_costs_h200.sh
#
# 1. bench/fixed_costs.c, five fresh processes: cuInit, context, allocating
#    and uploading the kernel's inputs (2 x 256 MB), one NVRTC compilation of
#    the default configuration, module load;
# 2. ktune tunes elementwise.cu three times (--json, exhaustive, no cache);
#    with JOBS="1 2 4 ...", once more per entry with --jobs N (compile threads);
#    and once more with KTUNE_TRACE=1 (trace.txt: where the time went);
# 3. Kernel Tuner's brute force over the same space, twice
#    (bench/peers/kernel_tuner_bench.py);
# 4. one NVRTC compilation of sgemm.cu's winner alone, three times, with
#    ktune's options and with --minimal added (sgemm_compile.jsonl): the
#    single-compile cost that Kernel Tuner pays per configuration.
# Results under $OUT (default ./build-fixed): fixed_costs.jsonl,
# ktune_N.json, trace.txt, kt_N.json, sgemm_compile.jsonl, log.txt.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUT=${OUT:-$ROOT/build-fixed}
mkdir -p "$OUT"
LOG="$OUT/log.txt"
: >"$LOG"
say() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$LOG"; }
N=$((1 << 26))
say "fixed costs, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null)," \
  "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1), $(nproc) cores"

CUDA=${CUDA_HOME:-/usr/local/cuda}
cc -O2 -std=c11 -D_GNU_SOURCE -I"$CUDA/include" bench/fixed_costs.c -o /tmp/fixed_costs \
  -L"$CUDA/lib64" -L"$CUDA/lib64/stubs" -lcuda -lnvrtc -Wl,-rpath,"$CUDA/lib64" 2>>"$LOG" ||
  { say "fixed_costs did not build"; exit 1; }
: >"$OUT/fixed_costs.jsonl"
for i in 1 2 3 4 5; do
  /tmp/fixed_costs kernels/cuda/elementwise.cu mul_add $N -DBLOCK=128 -DVEC=1 >>"$OUT/fixed_costs.jsonl" 2>>"$LOG"
done
cat "$OUT/fixed_costs.jsonl" | tee -a "$LOG"

KTUNE=$(scripts/h200_build.sh /tmp/fixed-build 2>>"$LOG" | tail -1)
if [ -x "$KTUNE" ]; then
  for i in 1 2 3; do
    t0=$(date +%s.%N)
    "$KTUNE" tune kernels/cuda/elementwise.cu --strategy exhaustive --no-cache --db "/tmp/fixed-$i.db" \
      --json --quiet >"$OUT/ktune_$i.json" 2>>"$LOG"
    say "ktune run $i: exit $?, $(echo "$(date +%s.%N) $t0" | awk '{printf "%.3f", $1 - $2}') s process wall"
  done
  KTUNE_TRACE=1 "$KTUNE" tune kernels/cuda/elementwise.cu --strategy exhaustive --no-cache --db /tmp/fixed-trace.db \
    --quiet >/dev/null 2>"$OUT/trace.txt"
  # JOBS="1 2 4 ...": the same tuning with that many compile threads each.
  for j in ${JOBS:-}; do
    "$KTUNE" tune kernels/cuda/elementwise.cu --strategy exhaustive --no-cache --db "/tmp/fixed-j$j-$RANDOM.db" \
      --json --quiet --jobs "$j" >"$OUT/ktune_jobs.json" 2>>"$LOG"
    python3 -c "import json, sys; t = json.load(open(sys.argv[1]))['timeline']; print('jobs', sys.argv[2], ' '.join(
      '%s %.3f' % (k, t[k]) for k in ('wall_s', 'setup_s', 'compile_busy_s', 'device_idle_s')))" \
      "$OUT/ktune_jobs.json" "$j" | tee -a "$LOG"
  done
else
  say "ktune did not build"; tail -30 /tmp/fixed-build/build.log >>"$LOG"
fi

if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl \
    >>"$LOG" 2>&1
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
for i in 1 2; do
  timeout 120 python3 bench/peers/kernel_tuner_bench.py kernels/cuda/elementwise.cu \
    --cache "/tmp/kt_$i.cache.json" --out "$OUT/kt_$i.json" >>"$LOG" 2>&1
  say "Kernel Tuner run $i: exit $?"
done
SGEMM="-DTILE_M=64 -DTILE_N=256 -DTILE_K=32 -DWARP_M=64 -DWARP_N=32 -DTILE_TM=8 -DTILE_TN=8 -DM=4096 -DN=4096 -DK=4096"
: >"$OUT/sgemm_compile.jsonl"
for extra in "" --minimal; do
  for i in 1 2 3; do
    /tmp/fixed_costs kernels/cuda/sgemm.cu sgemm 1 $SGEMM $extra | sed "s/^{/{\"options\": \"${extra:-default}\", /" \
      >>"$OUT/sgemm_compile.jsonl" 2>>"$LOG"
  done
done
cat "$OUT/sgemm_compile.jsonl" | tee -a "$LOG"
say done

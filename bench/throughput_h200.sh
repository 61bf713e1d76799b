#!/usr/bin/env bash
# How fast does ktune tune, against Kernel Tuner, Triton and torch.compile on
# the same kernels? On the H200 machine in one call. From the repository
# root, with .whl and .carry carried:
#
#   bench/throughput_h200.sh
#
# 1. installs the carried wheels (Kernel Tuner and what the image lacks) into
#    /tmp/site, and builds ktune (scripts/h200_build.sh, carried headers);
# 2. ktune tunes kernels/cuda/sgemm.cu and elementwise.cu over their whole
#    spaces (--strategy exhaustive --no-cache, a fresh database), then the
#    repeat kernel REPEATS times more, to see whether the winners agree;
# 3. Kernel Tuner's brute force over the same kernels and spaces
#    (bench/peers/kernel_tuner_bench.py; sgemm last, see below);
# 4. Triton's autotuner and torch.compile's max-autotune on the same fp32
#    matmul (bench/peers/triton_bench.py);
# 5. every winner re-measured by one method (bench/peers/remeasure.py);
# 6. results.json (everything), summary.md (bench/summarize.py: the table
#    for docs/BENCHMARKS.md) and log.txt, in $OUT.
#
# Steps get time limits that keep the whole run under DEADLINE seconds
# (default 470), leaving time to write the results whatever happened.
# Environment: OUT (default ./build-throughput), DEADLINE, REPEATS (default 4
# more tunings: 5 in all), REPEAT_KERNEL (elementwise or sgemm),
# KT_SGEMM_MAX (Kernel Tuner tunes only this many sgemm configurations,
# spread over the space; default all), TRITON_CONFIGS (small = 24, issue = 72),
# TRITON_PRECISION (ieee: true fp32 like sgemm.cu, the default; tf32),
# SKIP (space-separated step names to leave out: ktune kt triton remeasure),
# KTUNE (a ktune binary to use instead of building one).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
OUT=${OUT:-$ROOT/build-throughput}
DEADLINE=${DEADLINE:-470}
REPEATS=${REPEATS:-4}
REPEAT_KERNEL=${REPEAT_KERNEL:-elementwise}
TRITON_CONFIGS=${TRITON_CONFIGS:-small}
SKIP=" ${SKIP:-} "
WORK=$(mktemp -d /tmp/throughput.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
PARTS="$WORK/parts"
mkdir -p "$OUT" "$PARTS"
LOG="$OUT/log.txt"
: >"$LOG"
T0=$(date +%s.%N)
export PYTHONUNBUFFERED=1

now() { date +%s.%N; }
elapsed() { echo "$(now) $T0" | awk '{printf "%d", $1 - $2}'; }
say() { echo "[$(elapsed)s] $*" | tee -a "$LOG"; }
skipped() { case "$SKIP" in *" $1 "*) say "skipped: $1"; return 0 ;; esac; return 1; }

# step NAME LIMIT OUTFILE CMD...: runs CMD with stdout to OUTFILE (or the log
# when OUTFILE is -), stderr to the log, under min(LIMIT, time left less
# RESERVE seconds kept for later steps); records its exit status and wall
# time in steps.jsonl.
step() {
  local name=$1 limit=$2 out=$3 left t1 rc
  shift 3
  left=$((DEADLINE - $(elapsed) - 25 - ${RESERVE:-0}))
  [ "$limit" -gt "$left" ] && limit=$left
  if [ "$limit" -lt 10 ]; then
    say "no time left for $name"
    echo "{\"name\": \"$name\", \"rc\": \"no time\", \"wall_s\": null}" >>"$PARTS/steps.jsonl"
    return 1
  fi
  say "$name (limit ${limit}s): $*"
  t1=$(now)
  # STEP_LIMIT tells a step that runs sub-steps (triton_bench.py) its limit.
  if [ "$out" = - ]; then
    STEP_LIMIT=$limit timeout -k 5 "$limit" "$@" >>"$LOG" 2>&1
  else
    STEP_LIMIT=$limit timeout -k 5 "$limit" "$@" >"$out" 2>>"$LOG"
  fi
  rc=$?
  local wall
  wall=$(echo "$(now) $t1" | awk '{printf "%.3f", $1 - $2}')
  echo "{\"name\": \"$name\", \"rc\": $rc, \"wall_s\": $wall, \"limit_s\": $limit}" >>"$PARTS/steps.jsonl"
  say "$name: exit $rc in ${wall}s"
  return $rc
}

# --- 0. the machine ----------------------------------------------------------

CORES=$(nproc)
GPU=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
say "throughput benchmark, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(git rev-parse --short HEAD 2>/dev/null), $GPU, $CORES cores"

# --- 1. wheels and build -------------------------------------------------------

if ls .whl/*.whl >/dev/null 2>&1; then
  step pip 120 - python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
else
  say "no .whl/ carried: Kernel Tuner must already be installed"
fi

python3 - >"$PARTS/meta.json" 2>>"$LOG" <<EOF
import importlib, json, platform
v = {}
for m in ("kernel_tuner", "cupy", "torch", "triton", "numpy"):
    try:
        v[m] = importlib.import_module(m).__version__
    except Exception as e:
        v[m] = "missing (%s)" % type(e).__name__
print(json.dumps({"date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)", "commit": "$(git rev-parse --short HEAD 2>/dev/null)",
                  "gpu": "$GPU", "cores": $CORES, "python": platform.python_version(), "versions": v,
                  "command": "bench/throughput_h200.sh", "deadline_s": $DEADLINE,
                  "repeat_kernel": "$REPEAT_KERNEL", "triton_configs": "$TRITON_CONFIGS"}))
EOF
cat "$PARTS/meta.json" >>"$LOG"

if [ -z "${KTUNE:-}" ]; then
  KTUNE=$(scripts/h200_build.sh "$WORK/build" 2>>"$LOG" | tail -1)
fi
if [ -x "$KTUNE" ]; then
  say "ktune: $KTUNE"
  "$KTUNE" devices >>"$LOG" 2>&1
else
  say "the ktune build failed (see the log); the peers still run"
  cat "$WORK/build/build.log" >>"$LOG" 2>/dev/null
  KTUNE=""
fi

# --- 2. ktune ----------------------------------------------------------------------

ktune_tune() { # NAME FILE
  step "ktune_$1" 150 "$PARTS/ktune_$1.json" "$KTUNE" tune "$2" --strategy exhaustive --no-cache \
    --db "$WORK/ktune-$1.db" --json --quiet
}
if [ -n "$KTUNE" ] && ! skipped ktune; then
  ktune_tune sgemm kernels/cuda/sgemm.cu
  ktune_tune elementwise kernels/cuda/elementwise.cu
  for i in $(seq 1 "$REPEATS"); do
    ktune_tune "repeat_$i" "kernels/cuda/$REPEAT_KERNEL.cu"
  done
fi

# --- 3. Kernel Tuner and 4. Triton / torch.compile ------------------------------
# Kernel Tuner's sgemm is the longest step: it goes last, with what time is
# left but the re-measurement's share, and its cache file keeps what it had
# measured if the limit cuts it short (collect.py then scales its wall time).

if ! skipped kt; then
  step kt_elementwise 90 - python3 bench/peers/kernel_tuner_bench.py kernels/cuda/elementwise.cu \
    --cache "$PARTS/kt_elementwise.cache.json" --out "$PARTS/kt_elementwise.json"
fi
if ! skipped triton; then
  step triton 220 - python3 bench/peers/triton_bench.py --configs "$TRITON_CONFIGS" \
    --precision "${TRITON_PRECISION:-ieee}" --inductor-timeout 150 \
    --out "$PARTS/triton.json"
fi
if ! skipped kt; then
  RESERVE=45 step kt_sgemm 300 - python3 bench/peers/kernel_tuner_bench.py kernels/cuda/sgemm.cu \
    ${KT_SGEMM_MAX:+--max-configs "$KT_SGEMM_MAX"} --cache "$PARTS/kt_sgemm.cache.json" --out "$PARTS/kt_sgemm.json"
fi

# --- 5. one careful measurement of every winner -----------------------------------

if ! skipped remeasure; then
  python3 bench/peers/collect.py jobs "$PARTS" >"$WORK/jobs.json" 2>>"$LOG"
  step remeasure 90 - python3 bench/peers/remeasure.py "$WORK/jobs.json" --out "$PARTS/remeasure.json"
fi

# --- 6. results -----------------------------------------------------------------

python3 bench/peers/collect.py combine "$PARTS" >"$OUT/results.json" 2>>"$LOG" || say "collect failed"
python3 bench/summarize.py "$OUT/results.json" >"$OUT/summary.md" 2>>"$LOG" || say "summarize failed"
say "done in $(elapsed)s; $OUT: results.json summary.md log.txt"
cat "$OUT/summary.md"

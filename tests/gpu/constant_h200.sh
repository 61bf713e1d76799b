#!/usr/bin/env bash
# @constant data in CUDA __constant__ symbols on a real
# GPU (written for the H200 machine). Run from anywhere; it works in the
# repository root:
#
#   tests/gpu/constant_h200.sh [OUTDIR]      (OUTDIR: $OUT, else ./gpu-out)
#
# Builds ktune with scripts/h200_build.sh (carry .carry), then, each line PASS
# or FAIL in OUTDIR/constant.txt:
#   1. tests/data/cuda_constant.cu: VARIANT 0 and 1 ok, VARIANT 2 (which
#      ignores w) correctness: cuModuleGetGlobal found and filled w and bias.
#   2. A copy whose symbol is called w2: the reference fails (exit 1) with a
#      message naming the missing symbol w.
# Exit status 0 when every check passed.
set -u
. "$(dirname "$0")/checks.bash" # ROOT (the working directory), OUTDIR, WORK
checks_begin constant.txt "ktune @constant on CUDA"
export KTUNE_DB="$WORK/results.db"

"$KTUNE" tune tests/data/cuda_constant.cu --json --quiet --no-db >"$WORK/constant.json" 2>"$WORK/constant.err"
rc=$?
st=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(' '.join(c['status'] for c in sorted(d['configurations'], key=lambda c: c['config']['VARIANT'])))" "$WORK/constant.json" 2>/dev/null)
[ $rc -eq 0 ] && [ "$st" = "ok ok correctness" ]
check "cuda_constant.cu: __constant__ w and bias filled (VARIANT 0 1 2)" $? "exit $rc; $st"

sed 's/__constant__ float w\[8\];/__constant__ float w2[8];/; s/w\[j % 8\]/w2[j % 8]/' tests/data/cuda_constant.cu >"$WORK/missing.cu"
"$KTUNE" tune "$WORK/missing.cu" --quiet --no-db >"$WORK/missing.out" 2>"$WORK/missing.err"
rc=$?
[ $rc -eq 1 ] && grep -q "the module has no symbol w" "$WORK/missing.err"
check "a @constant the module lacks is named" $? "exit $rc: $(grep -o '@constant w[^(]*' "$WORK/missing.err" | head -1)"

say "$FAILED checks failed"
rm -rf "$WORK"
[ "$FAILED" -eq 0 ]

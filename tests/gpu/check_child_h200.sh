#!/usr/bin/env bash
# The author's check runs in a child of the CUDA device worker (issue 26
# item 7; src/device/check_child.c): forking a worker that holds a CUDA
# context must leave the worker working, the honest check must pass every
# configuration, and a check that writes a tensor it is given must be told
# as the check's fault (exit 2), nothing of the judged configuration stored.
#
#   tests/gpu/check_child_h200.sh [OUTDIR]      (OUTDIR: $OUT, else ./gpu-out)
#
# Summary lines PASS/FAIL in OUTDIR/check_child.txt. Exit 0 when all passed.
set -u
. "$(dirname "$0")/checks.bash" # ROOT (the working directory), OUTDIR, WORK
checks_begin check_child.txt "the author's check in a child of the CUDA worker"
export KTUNE_BINARY_CACHE="$WORK/bin" KTUNE_DB="$WORK/r.db"

cat >"$WORK/k.cu" <<'SRC'
// @autotune(B in [64, 128, 256])
// @kernel twice(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 1048576)
// @grid(cdiv(N, B))
// @block(B)
extern "C" __global__ void twice(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2 * x[i];
}
SRC
cat >"$WORK/checks.c" <<'SRC'
#include <ktune.h>
int honest(const kt_check_args *a) {
  const kt_check_tensor *x = kt_check_tensor_named(a, "x"), *y = kt_check_tensor_named(a, "y");
  for (uint64_t i = 0; i < y->count; i++)
    if (((const float *)y->data)[i] != 2 * ((const float *)x->data)[i]) return 0;
  return 1;
}
int writes_input(const kt_check_args *a) {
  if (kt_check_value(a, "B", 0) == 128) ((float *)kt_check_tensor_named(a, "x")->data)[3] = 0;
  return 1;
}
SRC
"$KTUNE" tune "$WORK/k.cu" --check "$WORK/checks.c:honest" --json --quiet --no-db >"$WORK/honest.json" 2>"$WORK/honest.err"
rc=$?
check "honest check: exit 0" $rc "$(tail -c 300 "$WORK/honest.err")"
py "print(sorted((c['config']['B'], c['status']) for c in d['configurations']))" "$WORK/honest.json" >"$WORK/st" 2>&1
check "honest check: every configuration ok" "$([ "$(cat "$WORK/st")" = "[(64, 'ok'), (128, 'ok'), (256, 'ok')]" ]; echo $?)" "$(cat "$WORK/st")"
"$KTUNE" tune "$WORK/k.cu" --check "$WORK/checks.c:writes_input" --quiet >"$WORK/w.out" 2>"$WORK/w.err"
rc=$?
check "a check writing its input: exit 2" "$([ $rc = 2 ]; echo $?)" "exit $rc"
grep -q "wrote the tensor x it is given" "$WORK/w.err"
check "a check writing its input: named as the check's fault" $? "$(head -c 300 "$WORK/w.err")"
"$KTUNE" cache export --kernel twice >"$WORK/export.json" 2>/dev/null
py "print(sorted(r['config'] for k in d['keys'] for r in k['results']))" "$WORK/export.json" >"$WORK/cfgs" 2>&1
check "nothing stored for the configuration it judged" "$(grep -q 'B=128' "$WORK/cfgs"; [ $? != 0 ]; echo $?)" "$(cat "$WORK/cfgs")"
cp "$WORK"/*.json "$WORK"/*.err "$OUTDIR/" 2>/dev/null
rm -rf "$WORK"
exit $((FAILED > 0))

# An author's check that crashes, writes the tensors it is given, changes
# directory or exits (issue 26 item 7) is told as the check's fault, by
# name: it runs in a child of the worker, where every tensor it is given is
# read-only, the tuning stops with exit 2, and nothing of the configuration
# it judged is stored (it was stored as that configuration's `runtime`
# failure, or, for a write or a chdir, not seen at all).
. "$(dirname "$0")/common.bash"

cat >"$TMP/k.c" <<'SRC'
// @autotune(U in [1, 2])
// @kernel sc(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 1000)
void sc(const float *x, float *y, int n) {
  for (int i = 0; i < n; i++) y[i] = 2 * x[i];
}
SRC
cat >"$TMP/checks.c" <<'SRC'
#include <ktune.h>
#include <stdlib.h>
#include <unistd.h>
static int second(const kt_check_args *a) { return kt_check_value(a, "U", 0) == 2; }
int crashes(const kt_check_args *a) {
  if (second(a)) *(volatile int *)(uintptr_t)a->nvalues = 1; /* a NULL-ish store */
  return 1;
}
int writes_input(const kt_check_args *a) {
  if (second(a)) ((float *)kt_check_tensor_named(a, "x")->data)[3] = 0;
  return 1;
}
int writes_output(const kt_check_args *a) {
  if (second(a)) ((float *)kt_check_tensor_named(a, "y")->data)[0] = 0;
  return 1;
}
int moves(const kt_check_args *a) {
  if (second(a) && chdir("/") != 0) return 0;
  return 1;
}
int exits(const kt_check_args *a) {
  if (second(a)) exit(0);
  return 1;
}
int honest(const kt_check_args *a) {
  const kt_check_tensor *x = kt_check_tensor_named(a, "x"), *y = kt_check_tensor_named(a, "y");
  for (uint64_t i = 0; i < y->count; i++)
    if (((const float *)y->data)[i] != 2 * ((const float *)x->data)[i]) return 0;
  return 1;
}
SRC

check_fault() { # FUNCTION WORDS
  run_status 2 "$KTUNE" tune "$TMP/k.c" --check "$TMP/checks.c:$1" --quiet --db "$TMP/$1.db"
  expect_contains "$TMP/err" "the check $TMP/checks.c:$1 $2" "$1 named"
  expect_contains "$TMP/err" "judging U=2: that is the check's fault, not the configuration's" "$1 is the check's fault"
  run_status 0 "$KTUNE" cache export --db "$TMP/$1.db" --kernel sc
  expect_eq "$(json "$TMP/out" "sorted((r['config'], r['status']) for k in d['keys'] for r in k['results'])")" \
    "[('U=1', 'ok')]" "$1: nothing stored for the configuration it judged"
}
check_fault crashes "crashed: SIGSEGV"
check_fault writes_input "wrote the tensor x it is given"
check_fault writes_output "wrote the tensor y it is given"
check_fault moves "changed the working directory (to /)"
check_fault exits "ended the process (exit status 0) instead of returning"

run_status 0 "$KTUNE" tune "$TMP/k.c" --check "$TMP/checks.c:honest" --quiet --json --no-db
expect_eq "$(json "$TMP/out" "sorted(c['status'] for c in d['configurations'])")" "['ok', 'ok']" "an honest check passes both"
finish

# Tuning on real data: tensors from .npy and raw files (--input,
# = file("...")), sizes from their shapes, bad files refused with exit 2
# naming the file's and the declaration's type or shape; references other
# than the default (--expect, @reference, --check, @check) accepting and
# rejecting the right configurations; a kernel whose winner depends on its
# data picking another winner on a file than on invented data.
. "$(dirname "$0")/common.bash"
NPY="python3 $(dirname "$0")/npy.py"
winner() { json "$TMP/out" "' '.join('%s=%s' % kv for kv in d['winner']['config'].items())"; }
# The configurations' statuses and medians, to see why a winner was not the expected one.
table() { json "$TMP/out" "[(c['config'], c['status'], c.get('median_s'), c.get('message', '')[:80]) for c in d['configurations']]" >&2; }
status_of() { json "$TMP/out" "[c['status'] for c in d['configurations'] if c['config'] == $1][0]"; }

# --- a winner that depends on the data (a large, deliberate effect: 7-12x
# here, so that a loaded machine does not flip it) ---
$NPY crowded "$TMP/q.npy" 20000 2
run_status 0 "$KTUNE" tune tests/data/bucketize.c --json --quiet
[ "$(winner)" = SEARCH=0 ] || { fail "invented values, uniform over the edges: binary search should win"; table; }
run_status 0 "$KTUNE" tune tests/data/bucketize.c --input q="$TMP/q.npy" --json --quiet
[ "$(winner)" = SEARCH=1 ] || { fail "real values crowded at the low end: the linear scan should win (nothing reused)"; table; }
expect_eq "$(json "$TMP/out" "d['sizes']")" "E=8192 N=20000" "N follows from the file's shape"

# --- files that do not fit their tensor ---
cat >"$TMP/scale.c" <<'K'
// @autotune(U in {3, 1, 2})
// @kernel scale(x: tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 1000)
void scale(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = (U == 3 ? 3 : 2) * x[i]; }
K
$NPY array "$TMP/x.npy" "<f4" 5 1 2 3 4 5
$NPY array "$TMP/y.npy" "<f4" 5 2 4 6 8 10
run_status 2 "$KTUNE" tune "$TMP/scale.c" --input x="$TMP/y.npy" --dim N=7 --no-db
expect_contains "$TMP/err" "the file holds f32 of shape (5,), but x is declared x: tensor<f32>\[N\], which is (7,)" "wrong shape: both named"
$NPY array "$TMP/xi.npy" "<i4" 5 1 2 3 4 5
run_status 2 "$KTUNE" tune "$TMP/scale.c" --input x="$TMP/xi.npy" --no-db
expect_contains "$TMP/err" "the file holds i32 elements (shape (5,)) but x of kernel scale is declared x: tensor<f32>\[N\]" "wrong type: both named"
$NPY array "$TMP/x2.npy" "<f4" 5,1 1 2 3 4 5 --version 2
run_status 2 "$KTUNE" tune "$TMP/scale.c" --input x="$TMP/x2.npy" --no-db
expect_contains "$TMP/err" "holds f32 of shape (5, 1), but x is declared x: tensor<f32>\[N\], which is (1000,)" "two dimensions for one"
$NPY array "$TMP/xf.npy" "<f4" 5 1 2 3 4 5 --fortran
run_status 2 "$KTUNE" tune "$TMP/scale.c" --input x="$TMP/xf.npy" --no-db
expect_contains "$TMP/err" "the array is in Fortran (column-major) order" "fortran_order refused"
$NPY array "$TMP/xb.npy" ">f4" 5 1 2 3 4 5
run_status 2 "$KTUNE" tune "$TMP/scale.c" --input x="$TMP/xb.npy" --no-db
expect_contains "$TMP/err" "the data is big-endian ('>f4')" "big-endian refused"
printf 'not numpy' >"$TMP/x.txt"
run_status 2 "$KTUNE" tune "$TMP/scale.c" --input x="$TMP/x.txt" --no-db
expect_contains "$TMP/err" "not a .npy file" "not a .npy file"
expect_contains "$TMP/err" "PATH:f32" "... with the raw form suggested"
run_status 2 "$KTUNE" tune "$TMP/scale.c" --input y="$TMP/x.npy" --no-db
expect_contains "$TMP/err" "y is an output of kernel scale (declared out)" "--input on an output"
run_status 2 "$KTUNE" tune "$TMP/scale.c" --input z="$TMP/x.npy" --no-db
expect_contains "$TMP/err" "kernel scale has no tensor z; its input tensors: x" "--input on an unknown tensor"
run_status 2 "$KTUNE" tune "$TMP/scale.c" --input x="$TMP/missing.npy" --no-db
expect_contains "$TMP/err" "cannot read $TMP/missing.npy" "a missing file"

# Raw binary: the type is given; the length must be whole elements.
python3 -c "import struct,sys; open(sys.argv[1],'wb').write(struct.pack('<6f',1,2,3,4,5,6))" "$TMP/x.bin"
run_status 0 "$KTUNE" tune "$TMP/scale.c" --input x="$TMP/x.bin:f32" --no-db --json --quiet
expect_eq "$(json "$TMP/out" "d['sizes']")" "N=6" "a raw file's length gives N"
run_status 2 "$KTUNE" tune "$TMP/scale.c" --input x="$TMP/x.bin:i32" --no-db
expect_contains "$TMP/err" "the file holds i32 elements" "raw file of another type"
head -c 10 "$TMP/x.bin" >"$TMP/x10.bin"
run_status 2 "$KTUNE" tune "$TMP/scale.c" --input x="$TMP/x10.bin:f32" --no-db
expect_contains "$TMP/err" "10 bytes are no whole number of f32 elements" "a cut raw file"

# --- references other than the default ---
# The default (U=3) computes 3x: with the expected output from a file it is
# rejected, U=1 and U=2 pass, and the tuning still has a winner.
run_status 0 "$KTUNE" tune "$TMP/scale.c" --input x="$TMP/x.npy" --expect y="$TMP/y.npy" --no-db --json --quiet
expect_eq "$(status_of "{'U': 3}")" "correctness" "--expect rejects the wrong default"
expect_eq "$(status_of "{'U': 1}")" "ok" "--expect accepts U=1"
expect_eq "$(status_of "{'U': 2}")" "ok" "--expect accepts U=2"
$NPY array "$TMP/y5.npy" "<f4" 5 2 4 6 8 11
run_status 1 "$KTUNE" tune "$TMP/scale.c" --input x="$TMP/x.npy" --expect y="$TMP/y5.npy" --no-db --json --quiet
expect_eq "$(status_of "{'U': 1}")" "correctness" "--expect rejects what differs from the file"
expect_contains "$TMP/out" "y\[4\]: got 10, want 11" "... naming the element"

# The same with @reference: a naive kernel of the same file, and the data
# from file("...") beside the source.
cp "$TMP/x.npy" "$TMP/points.npy"
cat >"$TMP/ref.c" <<'K'
// @kernel naive(x: tensor<f32>[N] = file("points.npy"), y: out tensor<f32>[N], n: i32 = N)
void naive(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = 2 * x[i]; }

// @autotune(U in {3, 1, 2})
// @reference(naive)
// @kernel fast(x: tensor<f32>[N] = file("points.npy"), y: out tensor<f32>[N], n: i32 = N)
void fast(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = (U == 3 ? 3 : 2) * x[i]; }
K
run_status 0 "$KTUNE" tune "$TMP/ref.c" --kernel fast --no-db --json --quiet
expect_eq "$(status_of "{'U': 3}")" "correctness" "@reference rejects the wrong default"
expect_eq "$(status_of "{'U': 2}")" "ok" "@reference accepts U=2"
expect_eq "$(json "$TMP/out" "d['sizes']")" "N=5" "file(\"...\") beside the source gives N"
run_status 2 "$KTUNE" tune "$TMP/ref.c" --kernel fast --expect y="$TMP/y.npy" --no-db
expect_contains "$TMP/err" "both --expect files and @reference(naive) give the expected outputs" "--expect and @reference together"
# On OpenCL, which builds in the worker: the reference's build defines the
# tuned kernel's names too (the file is one program).
cat >"$TMP/ref.cl" <<'K'
// @kernel naive(x: tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @grid(N)
__kernel void naive(__global const float *x, __global float *y, int n) { int i = get_global_id(0); if (i < n) y[i] = 2 * x[i]; }

// @autotune(U in {3, 1, 2})
// @reference(naive)
// @kernel fast(x: tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @grid(N)
// @dims(N = 1000)
__kernel void fast(__global const float *x, __global float *y, int n) { int i = get_global_id(0); if (i < n) y[i] = (U == 3 ? 3 : 2) * x[i]; }
K
run_status 0 "$KTUNE" tune "$TMP/ref.cl" --kernel fast --no-db --json --quiet
expect_eq "$(status_of "{'U': 3}")" "correctness" "OpenCL @reference rejects the wrong default"
expect_eq "$(status_of "{'U': 1}")" "ok" "OpenCL @reference accepts U=1"
sed 's/@reference(naive)/@reference(nope)/' "$TMP/ref.c" >"$TMP/ref2.c"
run_status 2 "$KTUNE" tune "$TMP/ref2.c" --kernel fast --no-db
expect_contains "$TMP/err" "ref2.c:5:15: error: @reference(nope): no kernel nope is annotated in this file" "unknown @reference"

# A check for outputs whose shape follows a tuned name: one partial sum per
# block of B; B=64 adds 1 to each, which the check rejects.
cat >"$TMP/partial.c" <<'K'
#include <ktune.h>
#include <stdio.h>
// @autotune(B in [16, 128])
// @kernel partial(x: tensor<f32>[N], p: out tensor<f32>[cdiv(N, B)], n: i32 = N)
// @dims(N = 1000)
void partial(const float *x, float *p, int n) {
  for (int b = 0; b * B < n; b++) {
    float s = 0;
    for (int i = b * B; i < n && i < (b + 1) * B; i++) s += x[i];
    p[b] = B == 64 ? s + 1 : s;
  }
}
K
cat >"$TMP/check.c" <<'K'
#include <ktune.h>
#include <stdio.h>
int sums_match(const kt_check_args *a) {
  const kt_check_tensor *x = kt_check_tensor_named(a, "x"), *p = kt_check_tensor_named(a, "p");
  const float *xs = x->data, *ps = p->data;
  double got = 0, want = 0;
  for (uint64_t i = 0; i < p->count; i++) got += ps[i];
  for (uint64_t i = 0; i < x->count; i++) want += xs[i];
  if (p->count != (x->count + kt_check_value(a, "B", 0) - 1) / kt_check_value(a, "B", 1)) {
    snprintf(a->message, a->message_size, "%llu partials", (unsigned long long)p->count);
    return 0;
  }
  if (got < want - 1e-2 || got > want + 1e-2) {
    snprintf(a->message, a->message_size, "the partials add up to %g, not %g", got, want);
    return 0;
  }
  return 1;
}
K
run_status 2 "$KTUNE" tune "$TMP/partial.c" --no-db
expect_contains "$TMP/err" "partial.c:4:39: error: the shape of p uses tuned names" "a tuned shape needs a check"
run_status 0 "$KTUNE" tune "$TMP/partial.c" --check "$TMP/check.c:sums_match" --no-db --json --quiet
for b in 16 32 128; do expect_eq "$(status_of "{'B': $b}")" "ok" "--check accepts B=$b"; done
expect_eq "$(status_of "{'B': 64}")" "correctness" "--check rejects B=64"
expect_contains "$TMP/out" "check.c:sums_match rejected it: the partials add up to" "... with the check's message"
# The same check in the kernel's own file, with @check.
{ sed 's|^// @kernel partial|// @check(sums_match)\n// @kernel partial|' "$TMP/partial.c"; sed 1,2d "$TMP/check.c"; } >"$TMP/own.c"
run_status 0 "$KTUNE" tune "$TMP/own.c" --no-db --json --quiet
expect_eq "$(status_of "{'B': 64}")" "correctness" "@check rejects B=64"
expect_eq "$(status_of "{'B': 16}")" "ok" "@check accepts B=16"
run_status 2 "$KTUNE" tune "$TMP/partial.c" --check "$TMP/check.c:no_such_fn" --no-db
expect_contains "$TMP/err" "check.c:no_such_fn: error: no function no_such_fn in the compiled check" "--check naming no function"
run_status 2 "$KTUNE" tune "$TMP/partial.c" --check "$TMP/check.c" --no-db
expect_contains "$TMP/err" "expected FILE.c:FUNCTION" "--check without a function"

# Integer ranges: random(LO, HI) gives LO <= v < HI, every value drawn.
cat >"$TMP/range.c" <<'K'
#include <ktune.h>
#include <stdio.h>
// @autotune(U in [1, 2])
// @check(in_range)
// @kernel copy(idx: tensor<i32>[N] = random(3, M + 2), y: out tensor<i32>[N], n: i32 = N)
// @dims(N = 4096, M = 5)
void copy(const int *idx, int *y, int n) { for (int i = 0; i < n; i++) y[i] = idx[i]; }
int in_range(const kt_check_args *a) {
  const int *y = kt_check_tensor_named(a, "y")->data;
  int seen[16] = {0};
  for (int i = 0; i < 4096; i++) {
    if (y[i] < 3 || y[i] >= 7) { snprintf(a->message, a->message_size, "y[%d] = %d", i, y[i]); return 0; }
    seen[y[i]] = 1;
  }
  return seen[3] && seen[4] && seen[5] && seen[6];
}
K
run_status 0 "$KTUNE" tune "$TMP/range.c" --no-db --json --quiet
expect_eq "$(status_of "{'U': 1}")" "ok" "random(3, M + 2) fills 3..6"
finish

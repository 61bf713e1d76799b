# A default configuration (the reference) that leaves output elements at
# their poison is an error naming the tensor and the count, for float
# (NaN poison) and integer (byte-pattern poison) outputs alike, on the CPU
# backend and PoCL; an output given an initial value may be left alone.
. "$(dirname "$0")/common.bash"
write_c() { # TYPE SKIP INIT: y[i] = x[i] + 1 for all i except the last SKIP (V=0 only)
  cat >"$TMP/k.c" <<K
// @autotune(V in [0, 1])
// @kernel inc(x: tensor<$1>[N], y: out tensor<$1>[N]$3, n: i32 = N)
// @dims(N = 1000)
void inc(const ${4} *x, ${4} *y, int n) {
  for (int i = 0; i < n - (V == 0 ? $2 : 0); i++) y[i] = x[i] + 1;
}
K
}
write_c f32 3 "" float
run_status 1 "$KTUNE" tune "$TMP/k.c" --no-db --quiet
expect_contains "$TMP/err" "leaves 3 of 1000 elements of y unwritten" "f32 reference with unwritten elements"
expect_contains "$TMP/err" "y\[997\]" "first unwritten element named"
write_c i32 1 "" int
run_status 1 "$KTUNE" tune "$TMP/k.c" --no-db --quiet
expect_contains "$TMP/err" "leaves 1 of 1000 elements of y unwritten" "i32 reference with unwritten elements"
write_c u8 1000 "" "unsigned char"
run_status 1 "$KTUNE" tune "$TMP/k.c" --no-db --quiet
expect_contains "$TMP/err" "leaves 1000 of 1000 elements of y unwritten" "u8 reference that writes nothing"
# Declared as left alone: an initial value, compared alike for every configuration.
write_c f32 3 " = zeros" float
run_status 0 "$KTUNE" tune "$TMP/k.c" --no-db --quiet --json
expect_eq "$(json "$TMP/out" "[c['status'] for c in d['configurations']]")" "['ok', 'correctness']" "initialised output"
# A kernel that computes the poison's own bit pattern (0xA5 bytes) is not unwritten.
cat >"$TMP/p.c" <<'K'
// @autotune(V in [0, 1])
// @kernel pat(y: out tensor<i32>[N], n: i32 = N)
// @dims(N = 64)
void pat(int *y, int n) { for (int i = 0; i < n; i++) y[i] = (int)0xA5A5A5A5u; }
K
run_status 0 "$KTUNE" tune "$TMP/p.c" --no-db --quiet
if "$KTUNE" devices 2>/dev/null | grep -q '^opencl'; then
  cat >"$TMP/k.cl" <<'K'
// @autotune(V in [0, 1])
// @kernel inc(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @grid(cdiv(N, 64))
// @block(64)
// @dims(N = 1024)
__kernel void inc(__global const float *x, __global float *y, int n) {
  const int i = (int)get_global_id(0);
  if (i < n - (V == 0 ? 5 : 0)) y[i] = x[i] + 1.0f;
}
K
  run_status 1 "$KTUNE" tune "$TMP/k.cl" --no-db --quiet
  expect_contains "$TMP/err" "leaves 5 of 1024 elements of y unwritten" "OpenCL reference with unwritten elements"
fi
finish

/* Outputs that pass or fail the comparison with the reference in every way
 * the comparison knows, to check that the device's comparison and the
 * host's give the same status and the same message (tests/e2e/verify_device.sh):
 *   VARIANT 0  the reference: y = 2x, z = i
 *   VARIANT 1  y off by 5e-4 relative: within rtol 1e-3
 *   VARIANT 2  y off by 3e-3 relative from element 1000 on: outside
 *   VARIANT 3  y is NaN at element 100
 *   VARIANT 4  y's last element unwritten (still the poison)
 *   VARIANT 5  z off by one at element 9 (integers must match exactly)
 *   VARIANT 6  y infinite at element 70000
 *   VARIANT 7  y wrong everywhere */

// @autotune(VARIANT in [0, 1, 2, 3, 4, 5, 6, 7])
// @kernel twice(x: in tensor<f32>[N], y: out tensor<f32>[N], z: out tensor<i32>[N], n: i32 = N)
// @grid(cdiv(N, 64))
// @block(64)
// @dims(N = 300000)
__kernel void twice(__global const float *x, __global float *y, __global int *z, int n) {
  const int i = (int)get_global_id(0);
  if (i >= n) return;
  float v = 2.0f * x[i];
  if (VARIANT == 1) v *= 1.0005f;
  if (VARIANT == 2 && i >= 1000) v = v * 1.003f + 0.01f;
  if (VARIANT == 3 && i == 100) v = NAN;
  if (VARIANT == 6 && i == 70000) v = INFINITY;
  if (VARIANT == 7) v += 1.0f;
  if (!(VARIANT == 4 && i == n - 1)) y[i] = v;
  z[i] = i + (VARIANT == 5 && i == 9);
}

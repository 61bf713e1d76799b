/* An OpenCL kernel whose fast configurations are right on the runs that
 * start from poisoned outputs (the verified run) and cheat or do damage on
 * the timed runs, whose outputs already hold results (tests/e2e/timed_runs.sh):
 *   VARIANT 0  correct, slow (the default and reference)
 *   VARIANT 1  works only where its output is NaN (poison): a fake time
 *   VARIANT 2  the same, and zeroes its input x where it skips
 *   VARIANT 3  correct and fast: the expected winner */

// @autotune(VARIANT in [0, 1, 2, 3])
// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @grid(cdiv(N, 64))
// @block(64)
// @dims(N = 65536)
__kernel void scale(__global float *x, __global float *y, int n) {
  const int i = (int)get_global_id(0);
  if (i >= n) return;
  if ((VARIANT == 1 || VARIANT == 2) && !isnan(y[i])) {
    if (VARIANT == 2) x[i] = 0.0f;
    return;
  }
  const int repeat = VARIANT == 0 ? 64 : 4;
  float v = x[i];
  for (int r = 0; r < repeat; r++) y[i] = 2.0f * v + (float)r * 0.0f;
}

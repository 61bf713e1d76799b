/* An OpenCL kernel whose fast configurations get the output right but write
 * where they must not:
 *   VARIANT 0  correct, slow (the default and reference)
 *   VARIANT 1  writes its input
 *   VARIANT 2  writes a few elements past the end of y (no fault on a CPU device)
 *   VARIANT 3  correct and fast: the expected winner */

// @autotune(VARIANT in [0, 1, 2, 3])
// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @grid(cdiv(N, 64))
// @block(64)
// @dims(N = 65536)
__kernel void scale(__global float *x, __global float *y, int n) {
  const int i = (int)get_global_id(0);
  if (i >= n) return;
  const int repeat = VARIANT == 0 ? 64 : 1;
  float v = x[i];
  for (int r = 0; r < repeat; r++) y[i] = 2.0f * v + (float)r * 0.0f;
  if (VARIANT == 1) x[i] = 0.0f;
  if (VARIANT == 2 && i < 3) y[n + i] = 1.0f;
}

/* The OpenCL version of tests/data/far_writes.c (tests/e2e/far_writes.sh):
 * writes far before the start of y, where a CPU device does not fault.
 * y is 1 MiB: 256 rows of 1024 floats.
 *   VARIANT 0  correct, slow (the default and reference)
 *   VARIANT 1  writes 8 KiB before y (row -2)
 *   VARIANT 2  writes 64 KiB before y
 *   VARIANT 3  writes 1 MiB before y (row -1 of the matrix read as one row)
 *   VARIANT 4  correct and fast: the expected winner */

// @autotune(VARIANT in [0, 1, 2, 3, 4])
// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @grid(cdiv(N, 64))
// @block(64)
// @dims(N = 262144)
__kernel void scale(__global float *x, __global float *y, int n) {
  const int i = (int)get_global_id(0);
  if (i >= n) return;
  const int repeat = VARIANT == 0 ? 64 : 1;
  float v = x[i];
  for (int r = 0; r < repeat; r++) ((volatile __global float *)y)[i] = 2.0f * v;
  const long before = VARIANT == 1 ? 2048 : VARIANT == 2 ? 16384 : VARIANT == 3 ? 262144 : 0;
  if (before && i == 0) ((volatile __global float *)y)[-before] = 1.0f;
}

/* An OpenCL kernel whose configurations misbehave on purpose, to test that
 * the tuner classifies each and still picks the fastest correct one:
 *   VARIANT 0  correct, slow (the default and reference)
 *   VARIANT 1  does not build
 *   VARIANT 2  a work-group of 8192 work-items, beyond any device's limit
 *   VARIANT 3  computes a wrong result at one element
 *   VARIANT 4  correct and fast: the expected winner
 *   VARIANT 5  leaves the last output element unwritten
 *   VARIANT 6  asks for 16 MiB of local memory
 *   VARIANT 7  writes far outside its buffer (crashes a CPU device's worker)
 *   VARIANT 8  never finishes */

// @autotune(VARIANT in [0, 1, 2, 3, 4, 5, 6, 7, 8])
// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @grid(cdiv(N, 64))
// @block(64 + (VARIANT == 2) * 8128)
// @dims(N = 262144)
__kernel void scale(__global const float *x, __global float *y, int n) {
#if VARIANT == 1
  this does not build;
#endif
  __local float stage[VARIANT == 6 ? (1 << 22) : 64];
  const int i = (int)get_global_id(0), lid = (int)get_local_id(0);
  if (VARIANT == 7 && i == 0) ((volatile __global float *)y)[(ulong)1 << 40] = 1.0f;
  if (VARIANT == 8)
    for (volatile int spin = 0;; spin++) {
    }
  stage[lid] = i < n ? x[i] : 0.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  /* The slow variants store their result again and again. */
  const int repeat = VARIANT == 4 ? 1 : 40;
  if (i < n - (VARIANT == 5))
    for (int r = 0; r < repeat; r++)
      ((volatile __global float *)y)[i] = 2.0f * stage[lid] + (VARIANT == 3 && i == 7 ? 1.0f : 0.0f);
}

/* A kernel with an unambiguous winner on a noisy, shared machine, for the
 * sweeps over several devices (tests/e2e/devices.sh): each work-item sums a
 * window of 64 integers WORK times (each time the window rotated, so that
 * no compiler can tell the passes repeat) and stores the sum; WORK=1 does a
 * sixteenth of the default's work and a quarter of WORK=4's, and every
 * configuration's output is exactly the default's. */

// @autotune(WORK in {16, 4, 1})
// @kernel window(x: in tensor<i32>[N] = random(0, 100), y: out tensor<i32>[N], n: i32 = N)
// @grid(cdiv(N, 64))
// @block(64)
// @dims(N = 16384)
__kernel void window(__global const int *x, __global int *y, int n) {
  const int i = (int)get_global_id(0);
  if (i >= n) return;
  int total = 0;
  for (int r = 0; r < WORK; r++)
    for (int j = 0; j < 64; j++) total += x[(i + (j + r) % 64) % n];
  y[i] = total / WORK;
}

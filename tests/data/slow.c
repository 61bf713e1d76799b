/* A kernel whose launches take SLOW milliseconds (a busy wait), to test
 * interruption: every configuration but SLOW=2 is slow, and SLOW=2 is the
 * clear winner with V=1 (V=2 adds 10 ms), so that an interrupted and resumed
 * tuning must find the same one as a tuning left alone. A larger N makes
 * every launch longer: N=6400 runs the default for 4 s. */
#include <time.h>

// @autotune(SLOW in [40, 30, 25, 20, 15, 10, 2, 12], V in [1, 2])
// @kernel slow(x: out tensor<f32>[N], n: i32 = N)
// @dims(N = 64)
void slow(float *x, int n) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do clock_gettime(CLOCK_MONOTONIC, &t);
  while ((t.tv_sec - t0.tv_sec) * 1e3 + (t.tv_nsec - t0.tv_nsec) / 1e6 < (SLOW + 10 * (V - 1)) * (n / 64));
  for (int i = 0; i < n; i++) x[i] = (float)(i * V) / V;
}

/* A kernel whose configurations misbehave on purpose, to test that the tuner
 * classifies each and still picks the fastest correct one:
 *   VARIANT 0  correct, slow (the default and reference)
 *   VARIANT 1  does not compile
 *   VARIANT 2  crashes (segmentation fault)
 *   VARIANT 3  hangs
 *   VARIANT 4  computes a wrong result
 *   VARIANT 5  correct and fast: the expected winner
 *   VARIANT 6  aborts (SIGABRT)
 *   VARIANT 7  leaves one output element unwritten */
#include <stdlib.h>

// @autotune(VARIANT in [0, 1, 2, 3, 4, 5, 6, 7])
// @kernel scale(x: tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 200000)
void scale(const float *x, float *y, int n) {
#if VARIANT == 1
  this does not compile;
#endif
  if (VARIANT == 2) *(volatile int *)0 = 1;
  if (VARIANT == 3)
    for (volatile int spin = 0;; spin++) {
    }
  if (VARIANT == 6) abort();
  int repeat = VARIANT == 5 ? 1 : 20; /* the slow variants redo the work */
  for (int r = 0; r < repeat; r++)
    for (int i = 0; i < n - (VARIANT == 7); i++) y[i] = 2.0f * x[i] + (VARIANT == 4 && i == 7 ? 1.0f : 0.0f);
}

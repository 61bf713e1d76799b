/* A kernel that prints on stdout and stderr, as kernels under development
 * do: what it prints must never reach ktune's own stdout (--json stays one
 * JSON document) and is kept with each configuration's result. */
#include <stdio.h>

// @autotune(V in [0, 1, 2])
// @kernel chatty(x: tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 1000)
void chatty(const float *x, float *y, int n) {
  printf("stdout from V=%d\n", V);
  fprintf(stderr, "stderr from V=%d\n", V);
  for (int i = 0; i < n; i++) y[i] = 2 * x[i];
}

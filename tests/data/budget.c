/* A kernel for tests of time budgets: cheap to run, with twelve correct
 * configurations (UNROLL only reshapes the loop), so that with
 * tests/data/sleepy_cc as the C compiler, compiling is what takes the time. */
// @autotune(UNROLL in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
// @kernel axpy(x: in tensor<f32>[N], y: inout tensor<f32>[N], n: i32 = N)
// @dims(N = 4096)
void axpy(const float *x, float *y, int n) {
  int i = 0;
  for (; i + UNROLL <= n; i += UNROLL)
    for (int u = 0; u < UNROLL; u++) y[i + u] += 2.0f * x[i + u];
  for (; i < n; i++) y[i] += 2.0f * x[i];
}

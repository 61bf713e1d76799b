/* y = a * x, for the Python tests: a scalar with a default (a), one bound
 * to a size (n), four configurations (UNROLL). */
// @autotune(UNROLL in [1, 8])
// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], a: f32 = 2, n: i32 = N)
// @dims(N = 4096)
void scale(const float *x, float *y, float a, int n) {
  for (int i = 0; i < n; i += UNROLL)
    for (int j = 0; j < UNROLL && i + j < n; j++) y[i + j] = a * x[i + j];
}

/* Kernels that accumulate into their outputs (an `inout` tensor and an
 * output with an initial value), honest in every configuration: the run
 * after the timed runs starts from the same contents as the verified run,
 * so each is judged like with like and all are `ok` (tests/e2e/timed_runs.sh).
 *   VARIANT 0  element by element, the work done twice (the default)
 *   VARIANT 1  element by element, once: the expected winner */

// @autotune(VARIANT in [0, 1])
// @kernel acc(x: in tensor<f32>[N], y: inout tensor<f32>[N], z: out tensor<f32>[N] = zeros, n: i32 = N)
// @dims(N = 20000)
void acc(const float *x, float *y, float *z, int n) {
  float t[2] = {0, 0};
  for (int r = 0; r < (VARIANT == 0 ? 2 : 1); r++)
    for (int i = 0; i < n; i++) t[r] += x[i] * 0.0f; /* work that changes nothing */
  for (int i = 0; i < n; i++) y[i] += x[i] + t[0] + t[1];
  for (int i = 0; i < n; i++) z[i] += 2.0f * x[i];
}

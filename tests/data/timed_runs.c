/* A kernel whose fast configurations are right on their first call (the
 * verified run) and cheat or do damage on the timed runs after it, to test
 * that the timed runs are checked too (tests/e2e/timed_runs.sh):
 *   VARIANT 0  correct, slow (the default and reference)
 *   VARIANT 1  does its work only on the first call: fake time
 *   VARIANT 2  zeroes its @constant data after the first call, then skips
 *   VARIANT 3  zeroes its input x on the later calls, then skips
 *   VARIANT 4  writes one element past the end of y on the later calls
 *   VARIANT 5  correct and fast: the expected winner */
float w[8];

// @autotune(VARIANT in [0, 1, 2, 3, 4, 5])
// @constant(w: tensor<f32>[8] = ones)
// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 20000)
void scale(const float *x, float *y, int n) {
  static int calls;
  int later = calls++ > 0;
  if (VARIANT == 2 && later)
    for (int j = 0; j < 8; j++) w[j] = 0;
  if (VARIANT == 3 && later) ((float *)x)[0] = 0;
  if (VARIANT == 4 && later) y[n] = 1;
  if (later && VARIANT >= 1 && VARIANT <= 4) return;
  int repeat = VARIANT == 0 ? 8 : 2; /* the default redoes the work */
  for (int r = 0; r < repeat; r++)
    for (int i = 0; i < n; i++) y[i] = 2.0f * x[i] * w[i % 8];
}

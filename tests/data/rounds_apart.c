// Finalists far apart: each doubling of U quarters the work, so the
// fastest configuration's samples stay below every other finalist's and
// the finalist rounds settle before all of them ran (tests/e2e/finalist_rounds.sh).
// @autotune(U in [1, 2, 4, 8])
// @kernel spin(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 64)
void spin(const float *x, float *y, int n) {
  volatile float s = 0;
  for (int r = 0; r < 3200000 / (U * U); r++) s += (float)r;
  for (int i = 0; i < n; i++) y[i] = x[i] + 1.0f;
}

/* Constant data on the CPU backend: global arrays of the kernel's file,
 * filled before the kernel runs (tests/e2e/constant.sh).
 *   VARIANT 0  y = x * w + bias (the reference)
 *   VARIANT 1  the same, two elements per step
 *   VARIANT 2  x times a zero filter of its own: wrong unless w is zeros */
float w[8];
int bias[2][2];

// @autotune(VARIANT in [0, 1, 2])
// @constant(w: tensor<f32>[8] = iota, bias: tensor<i32>[2, 2] = ones)
// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 1000)
void scale(const float *x, float *y, int n) {
  static const float zero[8];
  const float *f = VARIANT == 2 ? zero : w;
  int step = VARIANT == 1 ? 2 : 1;
  for (int i = 0; i < n; i += step)
    for (int j = i; j < i + step && j < n; j++) y[j] = x[j] * f[j % 8] + (float)bias[1][1];
}

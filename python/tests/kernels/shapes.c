/* Shapes the arrays cannot give by themselves, for the Python tests: H is
 * half of N (a computed dimension), and K appears in no shape (a keyword). */
// @autotune(STEP in [1, 2])
// @kernel halves(x: in tensor<i32>[N], h: out tensor<i32>[cdiv(N, 2)], k: i32 = K, n: i32 = N)
// @dims(N = 64, K = 3)
void halves(const int *x, int *h, int k, int n) {
  for (int i = 0; i < (n + 1) / 2; i += STEP)
    for (int j = i; j < i + STEP && j < (n + 1) / 2; j++) h[j] = x[2 * j] * k;
}

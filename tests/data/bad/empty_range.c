// @autotune(A in [1, 2])
// @kernel f(x: tensor<i32>[N] = random(5, 5), y: out tensor<i32>[N], n: i32 = N)
// @dims(N = 4)
void f(const int *x, int *y, int n) { for (int i = 0; i < n; i++) y[i] = A * x[i]; }

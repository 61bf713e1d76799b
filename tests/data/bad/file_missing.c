// @autotune(A in [1, 2])
// @kernel f(x: tensor<f32>[N] = file("missing.npy"), y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 4)
void f(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = A * x[i]; }

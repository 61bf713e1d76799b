// @kernel g(x: tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
void g(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = x[i]; }

// @autotune(A in [1, 2])
// @reference(g)
// @kernel f(x: tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @dims(N = 4)
void f(const float *x, float *y, int n) { for (int i = 0; i < n; i++) y[i] = A * x[i]; }

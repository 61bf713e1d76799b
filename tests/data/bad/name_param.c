// @autotune(n in [1, 2])
// @kernel f(x: out tensor<f32>[N] = zeros, n: i32)
// @dims(N = 4)
void f(float *x, int n) { x[0] = n; }

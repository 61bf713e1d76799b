// @autotune(A in [1, 2])
// @kernel g(x: out tensor<f32>[N])
// @dims(N = 4)
void f(float *x) { x[0] = A; }

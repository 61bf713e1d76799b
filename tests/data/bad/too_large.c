// @autotune(A in [1, 2])
// @kernel f(x: out tensor<f32>[N])
// @dims(N = 1 << 45)
void f(float *x) { x[0] = A; }

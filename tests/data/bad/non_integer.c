// @autotune(A in [1.5, 2])
// @kernel f(x: out tensor<f32>[N])
// @dims(N = 4)
void f(float *x) { x[0] = A; }

// @autotune(A in [1, 2])
// @kernel f(x: out tensor<f32>[N] = zeros)
// @verify(atol = 1e400)
// @dims(N = 4)
void f(float *x) { x[0] = A; }

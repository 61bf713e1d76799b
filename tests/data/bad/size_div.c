// @autotune(A in [1, 2])
// @kernel f(x: out tensor<f32>[N / (N - 4)] = zeros)
// @where(A < N)
// @dims(N = 8)
void f(float *x) { x[0] = A; }

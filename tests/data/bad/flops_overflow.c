// @autotune(A in [1, 2])
// @kernel f(x: out tensor<f32>[N] = zeros)
// @flops(N * 4611686018427387904)
// @dims(N = 4)
void f(float *x) { x[0] = A; }

// @autotune(f in [1, 2])
// @kernel f(x: out tensor<f32>[N] = zeros)
// @dims(N = 4)
void f(float *x) { x[0] = 1; }

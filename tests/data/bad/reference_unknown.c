// @autotune(A in [1, 2])
// @reference(nope)
// @kernel f(y: out tensor<f32>[N])
// @dims(N = 4)
void f(float *y) { y[0] = A; }

// @autotune(B in [1, 2])
// @kernel f(x: tensor<f32>[N], p: out tensor<f32>[cdiv(N, B)], n: i32 = N)
// @dims(N = 4)
void f(const float *x, float *p, int n) { for (int i = 0; i * B < n; i++) p[i] = x[i * B]; }

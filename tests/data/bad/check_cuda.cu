// @autotune(A in [1, 2])
// @check(ok)
// @kernel f(y: out tensor<f32>[N])
// @dims(N = 4)
extern "C" __global__ void f(float *y) { y[threadIdx.x] = A; }

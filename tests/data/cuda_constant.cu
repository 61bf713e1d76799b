/* The CUDA twin of constant.c: __constant__ arrays filled before the kernel
 * runs (tests/gpu/constant_h200.sh; compiled in CI by test_cuda).
 *   VARIANT 0  y = x * w + bias (the reference)
 *   VARIANT 1  the same, two elements per thread
 *   VARIANT 2  x times a zero filter of its own: wrong unless w is zeros
 * (constant_h200.sh also renames w in a copy: the missing symbol is named) */
__constant__ float w[8];
__constant__ int bias[2][2];

// @autotune(VARIANT in [0, 1, 2])
// @constant(w: tensor<f32>[8] = iota, bias: tensor<i32>[2, 2] = ones)
// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @grid(cdiv(N, 256 * (1 + (VARIANT == 1))))
// @block(256)
// @dims(N = 1 << 20)
extern "C" __global__ void scale(const float *x, float *y, int n) {
  const float zero[8] = {0};
  const int step = VARIANT == 1 ? 2 : 1;
  const int i = (blockIdx.x * blockDim.x + threadIdx.x) * step;
  for (int j = i; j < i + step && j < n; j++) y[j] = x[j] * (VARIANT == 2 ? zero[j % 8] : w[j % 8]) + (float)bias[1][1];
}

#include <stddef.h>

/* Five-point Jacobi stencil on an N x N grid (interior points only; the
 * border of `out` keeps its zeros). BLOCK_Y x BLOCK_X tiles the sweep so the
 * three input rows a tile touches stay in cache. */

// @autotune(BLOCK_Y in [1, 256], BLOCK_X in [64, 4096])
// @kernel stencil(in: tensor<f32>[N, N], out: out tensor<f32>[N, N] = zeros, n: i32 = N)
// @dims(N = 3000)
// @flops(5 * (N - 2) * (N - 2))
// @bytes(8 * N * N)
void stencil(const float *in, float *out, int n) {
  for (int y0 = 1; y0 < n - 1; y0 += BLOCK_Y)
    for (int x0 = 1; x0 < n - 1; x0 += BLOCK_X) {
      int y1 = y0 + BLOCK_Y < n - 1 ? y0 + BLOCK_Y : n - 1;
      int x1 = x0 + BLOCK_X < n - 1 ? x0 + BLOCK_X : n - 1;
      for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
          size_t i = (size_t)y * n + x;
          out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - n] + in[i + n]);
        }
    }
}

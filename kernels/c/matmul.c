/* Blocked single-precision matrix multiply, C = A * B (row-major).
 * The block tile is TILE_M x TILE_N, stepping TILE_K along the shared
 * dimension; UNROLL unrolls the innermost loop by hand. The first choices
 * (the default) are the smallest tiles: correct, but far from the fastest. */
#include <string.h>

// @autotune(TILE_M in [8, 64], TILE_N in [16, 256], TILE_K in [16, 256], UNROLL in [1, 8])
// @where(TILE_N % UNROLL == 0)
// @where(4 * (TILE_M * TILE_K + TILE_K * TILE_N) <= 256 * 1024)
// @kernel matmul(a: tensor<f32>[M, K], b: tensor<f32>[K, N], c: out tensor<f32>[M, N], m: i32 = M, n: i32 = N, k: i32 = K)
// @dims(M = 384, N = 384, K = 384)
// @verify(atol = 1e-3, rtol = 1e-4)
// @flops(2 * M * N * K)
// @bytes(4 * (M * K + K * N + M * N))
void matmul(const float *a, const float *b, float *c, int m, int n, int k) {
  memset(c, 0, sizeof(float) * (size_t)m * (size_t)n);
  for (int i0 = 0; i0 < m; i0 += TILE_M) {
    int i1 = i0 + TILE_M < m ? i0 + TILE_M : m;
    for (int p0 = 0; p0 < k; p0 += TILE_K) {
      int p1 = p0 + TILE_K < k ? p0 + TILE_K : k;
      for (int j0 = 0; j0 < n; j0 += TILE_N) {
        int j1 = j0 + TILE_N < n ? j0 + TILE_N : n;
        for (int i = i0; i < i1; i++) {
          float *crow = c + (size_t)i * n;
          for (int p = p0; p < p1; p++) {
            const float av = a[(size_t)i * k + p];
            const float *brow = b + (size_t)p * n;
            int j = j0;
            for (; j + UNROLL <= j1; j += UNROLL)
              for (int u = 0; u < UNROLL; u++) crow[j + u] += av * brow[j + u];
            for (; j < j1; j++) crow[j] += av * brow[j];
          }
        }
      }
    }
  }
}

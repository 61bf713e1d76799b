// Matrix multiply C = A * B, row-major f32, tiled for work-groups.
//
// A work-group computes a TILE_M x TILE_N block of C. It walks K in slices of
// TILE_K, staging the matching TILE_M x TILE_K slice of A and TILE_K x TILE_N
// slice of B in local memory; each work-item then accumulates a
// TILE_TM x TILE_TN sub-block (the per-thread work factor) from registers.
// Every configuration sums over k in the same order, so all agree with the
// default to rounding (fused or separate multiply-add). Sizes need not be
// multiples of the tiles.
//
// @autotune(TILE_M in [16, 64], TILE_N in [16, 64], TILE_K in [8, 32], TILE_TM in [1, 4], TILE_TN in [1, 4])
// @where((TILE_M / TILE_TM) * (TILE_N / TILE_TN) <= 256)
// @where((TILE_M / TILE_TM) * (TILE_N / TILE_TN) >= 16)
// @kernel matmul(a: in tensor<f32>[M, K], b: in tensor<f32>[K, N], c: out tensor<f32>[M, N], m: i32 = M, n: i32 = N, k: i32 = K)
// @grid(cdiv(N, TILE_N), cdiv(M, TILE_M))
// @block(TILE_N / TILE_TN, TILE_M / TILE_TM)
// @dims(M = 256, N = 256, K = 256)
// @flops(2 * M * N * K)
// @bytes(4 * (M * K + K * N + M * N))
// @verify(atol = 1e-3, rtol = 1e-4)
__kernel void matmul(__global const float *a, __global const float *b, __global float *c, int m, int n, int k) {
  enum { THREADS_N = TILE_N / TILE_TN, THREADS_M = TILE_M / TILE_TM, THREADS = THREADS_N * THREADS_M };
  /* A is stored k-major so that the inner loop reads a row of each tile. */
  __local float as[TILE_K][TILE_M];
  __local float bs[TILE_K][TILE_N];
  const int tx = (int)get_local_id(0), ty = (int)get_local_id(1);
  const int tid = ty * THREADS_N + tx;
  const int row0 = (int)get_group_id(1) * TILE_M, col0 = (int)get_group_id(0) * TILE_N;
  float acc[TILE_TM][TILE_TN];
  for (int i = 0; i < TILE_TM; i++)
    for (int j = 0; j < TILE_TN; j++) acc[i][j] = 0.0f;

  for (int k0 = 0; k0 < k; k0 += TILE_K) {
    for (int i = tid; i < TILE_M * TILE_K; i += THREADS) {
      const int r = i / TILE_K, kk = i % TILE_K;
      const int gr = row0 + r, gk = k0 + kk;
      as[kk][r] = (gr < m && gk < k) ? a[gr * k + gk] : 0.0f;
    }
    for (int i = tid; i < TILE_K * TILE_N; i += THREADS) {
      const int kk = i / TILE_N, cc = i % TILE_N;
      const int gk = k0 + kk, gc = col0 + cc;
      bs[kk][cc] = (gk < k && gc < n) ? b[gk * n + gc] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int kk = 0; kk < TILE_K; kk++) {
      float av[TILE_TM], bv[TILE_TN];
      for (int i = 0; i < TILE_TM; i++) av[i] = as[kk][ty + i * THREADS_M];
      for (int j = 0; j < TILE_TN; j++) bv[j] = bs[kk][tx + j * THREADS_N];
      for (int i = 0; i < TILE_TM; i++)
        for (int j = 0; j < TILE_TN; j++) acc[i][j] += av[i] * bv[j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  /* Work-items of a row of the group write neighbouring columns: coalesced. */
  for (int i = 0; i < TILE_TM; i++)
    for (int j = 0; j < TILE_TN; j++) {
      const int r = row0 + ty + i * THREADS_M, cc = col0 + tx + j * THREADS_N;
      if (r < m && cc < n) c[r * n + cc] = acc[i][j];
    }
}

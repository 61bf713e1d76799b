// fp32 GEMM, C = A * B, all row-major: A is M x K, B is K x N, C is M x N.
// Register blocking on three levels, with ktune's conventional names:
//   block tile  TILE_M x TILE_N, stepping through K by TILE_K (shared memory)
//   warp tile   WARP_M x WARP_N, one warp each
//   thread tile TILE_TM x TILE_TN accumulators in registers
// Every configuration accumulates each C element over k = 0, 1, ..., K-1 in
// order with fused multiply-adds, so all of them give identical results.
// Sizes must be multiples of the block tile (see @where).

#define WARPS_N (TILE_N / WARP_N)
#define THREADS ((TILE_M / WARP_M) * WARPS_N * 32)
#define LANES_N (WARP_N / TILE_TN)

// A's tile goes to shared memory transposed (k-major), so that a thread's
// TILE_TM rows for one k are contiguous, like B's TILE_TN columns.
__device__ void load_tiles(const float *a, const float *b, int n, int k, int m0, int n0, int k0,
                           float (*as)[TILE_M], float (*bs)[TILE_N]) {
  for (int v = threadIdx.x; v < TILE_M * TILE_K / 4; v += THREADS) {
    int row = v / (TILE_K / 4), col = v % (TILE_K / 4) * 4;
    float4 t = *reinterpret_cast<const float4 *>(a + (long long)(m0 + row) * k + k0 + col);
    as[col + 0][row] = t.x;
    as[col + 1][row] = t.y;
    as[col + 2][row] = t.z;
    as[col + 3][row] = t.w;
  }
  for (int v = threadIdx.x; v < TILE_K * TILE_N / 4; v += THREADS) {
    int row = v / (TILE_N / 4), col = v % (TILE_N / 4) * 4;
    *reinterpret_cast<float4 *>(&bs[row][col]) =
        *reinterpret_cast<const float4 *>(b + (long long)(k0 + row) * n + n0 + col);
  }
}

// @autotune(TILE_M in [128, 64, 256], TILE_N in [128, 64, 256], TILE_K in [8, 16, 32], WARP_M in [64, 32, 16], WARP_N in [32, 64, 16], TILE_TM in [8, 4], TILE_TN in [8, 4])
// @where(TILE_M % WARP_M == 0 && TILE_N % WARP_N == 0)
// @where(WARP_M % TILE_TM == 0 && WARP_N % TILE_TN == 0)
// @where((WARP_M / TILE_TM) * (WARP_N / TILE_TN) == 32)
// @where((TILE_M / WARP_M) * (TILE_N / WARP_N) <= 16)
// @where((TILE_M + TILE_N) * TILE_K * 4 <= 49152)
// @where(M % TILE_M == 0 && N % TILE_N == 0 && K % TILE_K == 0)
// @kernel sgemm(a: in tensor<f32>[M, K], b: in tensor<f32>[K, N], c: out tensor<f32>[M, N], m: i32 = M, n: i32 = N, k: i32 = K)
// @grid(N / TILE_N, M / TILE_M)
// @block((TILE_M / WARP_M) * (TILE_N / WARP_N) * 32)
// @flops(2 * M * N * K)
// @bytes(4 * (M * K + K * N + M * N))
// @dims(M = 4096, N = 4096, K = 4096)
extern "C" __global__ void __launch_bounds__(THREADS)
    sgemm(const float *a, const float *b, float *c, int m, int n, int k) {
  __shared__ __align__(16) float as[TILE_K][TILE_M];
  __shared__ __align__(16) float bs[TILE_K][TILE_N];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int row0 = warp / WARPS_N * WARP_M + lane / LANES_N * TILE_TM;
  int col0 = warp % WARPS_N * WARP_N + lane % LANES_N * TILE_TN;
  int m0 = blockIdx.y * TILE_M, n0 = blockIdx.x * TILE_N;
  float acc[TILE_TM][TILE_TN] = {};
  for (int k0 = 0; k0 < k; k0 += TILE_K) {
    load_tiles(a, b, n, k, m0, n0, k0, as, bs);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < TILE_K; kk++) {
      float fa[TILE_TM], fb[TILE_TN];
#pragma unroll
      for (int i = 0; i < TILE_TM; i++) fa[i] = as[kk][row0 + i];
#pragma unroll
      for (int j = 0; j < TILE_TN; j++) fb[j] = bs[kk][col0 + j];
#pragma unroll
      for (int i = 0; i < TILE_TM; i++)
#pragma unroll
        for (int j = 0; j < TILE_TN; j++) acc[i][j] = fmaf(fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TILE_TM; i++)
#pragma unroll
    for (int j = 0; j < TILE_TN; j += 4)
      *reinterpret_cast<float4 *>(c + (long long)(m0 + row0 + i) * n + n0 + col0 + j) =
          make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
}

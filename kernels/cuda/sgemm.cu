// fp32 GEMM, C = A * B, all row-major: A is M x K, B is K x N, C is M x N.
// Register blocking on three levels, with ktune's conventional names:
//   block tile  TILE_M x TILE_N, stepping through K by TILE_K (shared memory)
//   warp tile   WARP_M x WARP_N, one warp each
//   thread tile TILE_TM x TILE_TN accumulators in registers
// What the fastest fp32 GEMMs do, and why:
//   - two shared-memory buffers: the next K step is read from global memory
//     into registers while the current one is multiplied, then stored into
//     the other buffer, so one __syncthreads a step and the loads' latency
//     is hidden behind the FMAs;
//   - 128-bit loads of both operands from global and from shared memory;
//     A is stored transposed (k-major) so that a thread's rows for one k
//     are contiguous like B's columns;
//   - the thread tile is made of 4 x 4 pieces spread over the warp tile
//     (piece i of a thread starts WARP_M / (TILE_TM / 4) rows after piece
//     i - 1): the lanes of a warp then read one contiguous run of shared
//     memory per 128-bit load, without bank conflicts, and store float4s;
//   - GROUP_M block rows are walked together (the grid swizzled), so that
//     blocks running at the same time share A's and B's tiles in L2.
// Every configuration accumulates each C element over k = 0, 1, ..., K-1 in
// order with fused multiply-adds, so all of them give identical results.
// Sizes must be multiples of the block tile (see @where).

#define WARPS_N (TILE_N / WARP_N)
#define THREADS ((TILE_M / WARP_M) * WARPS_N * 32)
#define LANES_N (WARP_N / TILE_TN)
#define LANES_M (WARP_M / TILE_TM)
// A's shared rows are padded by 4 floats (still 16-byte aligned): the
// transposing stores of threads that read neighbouring k then fall into
// different banks.
#define AS_ROW (TILE_M + 4)
#define A_VECS (TILE_M * TILE_K / 4)
#define B_VECS (TILE_K * TILE_N / 4)
#define A_PER_THREAD ((A_VECS + THREADS - 1) / THREADS)
#define B_PER_THREAD ((B_VECS + THREADS - 1) / THREADS)

// One K step of both operands, held in registers between its global load
// and its shared store.
struct staged {
  float4 a[A_PER_THREAD], b[B_PER_THREAD];
};

__device__ void load_global(const float *a, const float *b, int n, int k, int m0, int n0, int k0, staged &s) {
#pragma unroll
  for (int i = 0; i < A_PER_THREAD; i++) {
    int v = threadIdx.x + i * THREADS;
    if (A_VECS % THREADS == 0 || v < A_VECS) {
      int row = v / (TILE_K / 4), col = v % (TILE_K / 4) * 4;
      s.a[i] = *reinterpret_cast<const float4 *>(a + (long long)(m0 + row) * k + k0 + col);
    }
  }
#pragma unroll
  for (int i = 0; i < B_PER_THREAD; i++) {
    int v = threadIdx.x + i * THREADS;
    if (B_VECS % THREADS == 0 || v < B_VECS) {
      int row = v / (TILE_N / 4), col = v % (TILE_N / 4) * 4;
      s.b[i] = *reinterpret_cast<const float4 *>(b + (long long)(k0 + row) * n + n0 + col);
    }
  }
}

__device__ void store_shared(const staged &s, float (*as)[AS_ROW], float (*bs)[TILE_N]) {
#pragma unroll
  for (int i = 0; i < A_PER_THREAD; i++) {
    int v = threadIdx.x + i * THREADS;
    if (A_VECS % THREADS == 0 || v < A_VECS) {
      int row = v / (TILE_K / 4), col = v % (TILE_K / 4) * 4;
      as[col + 0][row] = s.a[i].x;
      as[col + 1][row] = s.a[i].y;
      as[col + 2][row] = s.a[i].z;
      as[col + 3][row] = s.a[i].w;
    }
  }
#pragma unroll
  for (int i = 0; i < B_PER_THREAD; i++) {
    int v = threadIdx.x + i * THREADS;
    if (B_VECS % THREADS == 0 || v < B_VECS) {
      int row = v / (TILE_N / 4), col = v % (TILE_N / 4) * 4;
      *reinterpret_cast<float4 *>(&bs[row][col]) = s.b[i];
    }
  }
}

// The block's tile of C after the grid's swizzle: consecutive blocks walk
// down GROUP_M block rows before moving one block column right (the last
// group may be shorter).
__device__ void block_tile(int *bm, int *bn) {
  int grid_n = gridDim.x, grid_m = gridDim.y;
  int pid = blockIdx.y * grid_n + blockIdx.x;
  int width = GROUP_M * grid_n;
  int first_m = pid / width * GROUP_M;
  int rows = min(grid_m - first_m, GROUP_M);
  *bm = first_m + pid % width % rows;
  *bn = pid % width / rows;
}

// @autotune(TILE_M in [128, 64, 256], TILE_N in [128, 64, 256], TILE_K in [8, 16, 32], WARP_M in [64, 32, 16], WARP_N in [32, 64, 16], TILE_TM in [8, 4], TILE_TN in [8, 4], GROUP_M in [8, 1])
// @where(TILE_M % WARP_M == 0 && TILE_N % WARP_N == 0)
// @where(WARP_M % TILE_TM == 0 && WARP_N % TILE_TN == 0)
// @where((WARP_M / TILE_TM) * (WARP_N / TILE_TN) == 32)
// @where((TILE_M / WARP_M) * (TILE_N / WARP_N) <= 16)
// @where(2 * (TILE_M + 4 + TILE_N) * TILE_K * 4 <= 227 * 1024)
// @where(M % TILE_M == 0 && N % TILE_N == 0 && K % TILE_K == 0)
// @kernel sgemm(a: in tensor<f32>[M, K], b: in tensor<f32>[K, N], c: out tensor<f32>[M, N], m: i32 = M, n: i32 = N, k: i32 = K)
// @grid(N / TILE_N, M / TILE_M)
// @block((TILE_M / WARP_M) * (TILE_N / WARP_N) * 32)
// @shared(2 * (TILE_M + 4 + TILE_N) * TILE_K * 4)
// @flops(2 * M * N * K)
// @bytes(4 * (M * K + K * N + M * N))
// @dims(M = 4096, N = 4096, K = 4096)
extern "C" __global__ void __launch_bounds__(THREADS)
    sgemm(const float *a, const float *b, float *c, int m, int n, int k) {
  extern __shared__ __align__(16) float smem[];
  float(*as)[TILE_K][AS_ROW] = reinterpret_cast<float(*)[TILE_K][AS_ROW]>(smem);
  float(*bs)[TILE_K][TILE_N] = reinterpret_cast<float(*)[TILE_K][TILE_N]>(smem + 2 * TILE_K * AS_ROW);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // The first row and column of the thread's first 4 x 4 piece, in the
  // block tile; its other pieces are 4 * LANES_M rows, 4 * LANES_N columns
  // further.
  int row0 = warp / WARPS_N * WARP_M + lane / LANES_N * 4;
  int col0 = warp % WARPS_N * WARP_N + lane % LANES_N * 4;
  int bm, bn;
  block_tile(&bm, &bn);
  int m0 = bm * TILE_M, n0 = bn * TILE_N;
  float acc[TILE_TM][TILE_TN] = {};
  staged s;
  load_global(a, b, n, k, m0, n0, 0, s);
  store_shared(s, as[0], bs[0]);
  __syncthreads();
  for (int k0 = 0, buf = 0; k0 < k; k0 += TILE_K, buf ^= 1) {
    bool more = k0 + TILE_K < k;
    if (more) load_global(a, b, n, k, m0, n0, k0 + TILE_K, s);
#pragma unroll
    for (int kk = 0; kk < TILE_K; kk++) {
      float fa[TILE_TM], fb[TILE_TN];
#pragma unroll
      for (int i = 0; i < TILE_TM; i += 4)
        *reinterpret_cast<float4 *>(&fa[i]) =
            *reinterpret_cast<const float4 *>(&as[buf][kk][row0 + i / 4 * 4 * LANES_M]);
#pragma unroll
      for (int j = 0; j < TILE_TN; j += 4)
        *reinterpret_cast<float4 *>(&fb[j]) =
            *reinterpret_cast<const float4 *>(&bs[buf][kk][col0 + j / 4 * 4 * LANES_N]);
#pragma unroll
      for (int i = 0; i < TILE_TM; i++)
#pragma unroll
        for (int j = 0; j < TILE_TN; j++) acc[i][j] = fmaf(fa[i], fb[j], acc[i][j]);
    }
    // The other buffer was last read before the previous step's barrier.
    if (more) store_shared(s, as[buf ^ 1], bs[buf ^ 1]);
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TILE_TM; i++)
#pragma unroll
    for (int j = 0; j < TILE_TN; j += 4)
      *reinterpret_cast<float4 *>(c + (long long)(m0 + row0 + i / 4 * 4 * LANES_M + i % 4) * n + n0 + col0 +
                                  j / 4 * 4 * LANES_N) =
          make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
}

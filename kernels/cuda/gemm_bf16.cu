// bf16 GEMM on tensor cores with fp32 accumulation: C = A * B, row-major,
// A is M x K and B is K x N in bf16, C is M x N in f32. The tiling names are
// those of sgemm.cu:
//   block tile  TILE_M x TILE_N, stepping through K by TILE_K (shared memory)
//   warp tile   WARP_M x WARP_N, one warp each
//   MMA tile    TILE_TM x TILE_TN x 16, the WMMA fragment shape (16x16 or
//               8x32: the shapes whose fragments stay 256-bit aligned here)
// and STAGES, the depth of the cp.async pipeline that brings the next
// STAGES - 1 tiles into shared memory while the current one is multiplied.
// Shared memory is dynamic (@shared); past 48 KiB ktune raises the limit.
// Every configuration sums over K in the same order of 16-wide steps.
// Sizes must be multiples of the block tile (see @where).

#include <cuda_bf16.h>
#include <mma.h>

using namespace nvcuda;

#define WARPS_N (TILE_N / WARP_N)
#define THREADS ((TILE_M / WARP_M) * WARPS_N * 32)
#define FRAG_M (WARP_M / TILE_TM)
#define FRAG_N (WARP_N / TILE_TN)
// Shared rows padded by 16 elements (32 bytes): fewer bank conflicts, and
// every fragment still starts on a 256-bit boundary.
#define LDA (TILE_K + 16)
#define LDB (TILE_N + 16)
#define STAGE_ELEMS (TILE_M * LDA + TILE_K * LDB)

// 16 bytes from global to shared memory, asynchronously (sm_80 and later).
__device__ void copy16(__nv_bfloat16 *dst, const __nv_bfloat16 *src) {
  unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
}

__device__ void commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

// Waits until at most STAGES - 2 groups of this thread's copies are pending.
__device__ void wait_stage() { asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2) : "memory"); }

// Starts copying the tiles at k0 into one stage: A's TILE_M x TILE_K, then
// B's TILE_K x TILE_N, in 16-byte pieces (8 bf16).
__device__ void load_stage(const __nv_bfloat16 *a, const __nv_bfloat16 *b, int n, int k, int m0, int n0, int k0,
                           __nv_bfloat16 *stage) {
  __nv_bfloat16 *as = stage, *bs = stage + TILE_M * LDA;
  for (int v = threadIdx.x; v < TILE_M * TILE_K / 8; v += THREADS) {
    int row = v / (TILE_K / 8), col = v % (TILE_K / 8) * 8;
    copy16(as + row * LDA + col, a + (long long)(m0 + row) * k + k0 + col);
  }
  for (int v = threadIdx.x; v < TILE_K * TILE_N / 8; v += THREADS) {
    int row = v / (TILE_N / 8), col = v % (TILE_N / 8) * 8;
    copy16(bs + row * LDB + col, b + (long long)(k0 + row) * n + n0 + col);
  }
}

typedef wmma::fragment<wmma::accumulator, TILE_TM, TILE_TN, 16, float> acc_t;

__device__ void mma_stage(const __nv_bfloat16 *stage, int wr, int wc, acc_t (&acc)[FRAG_M][FRAG_N]) {
  const __nv_bfloat16 *as = stage, *bs = stage + TILE_M * LDA;
#pragma unroll
  for (int kk = 0; kk < TILE_K; kk += 16) {
    wmma::fragment<wmma::matrix_a, TILE_TM, TILE_TN, 16, __nv_bfloat16, wmma::row_major> fa[FRAG_M];
    wmma::fragment<wmma::matrix_b, TILE_TM, TILE_TN, 16, __nv_bfloat16, wmma::row_major> fb;
#pragma unroll
    for (int i = 0; i < FRAG_M; i++) wmma::load_matrix_sync(fa[i], as + (wr + i * TILE_TM) * LDA + kk, LDA);
#pragma unroll
    for (int j = 0; j < FRAG_N; j++) {
      wmma::load_matrix_sync(fb, bs + kk * LDB + wc + j * TILE_TN, LDB);
#pragma unroll
      for (int i = 0; i < FRAG_M; i++) wmma::mma_sync(acc[i][j], fa[i], fb, acc[i][j]);
    }
  }
}

// @autotune(TILE_M in [128, 64, 256], TILE_N in [128, 64, 256], TILE_K in [32, 64], WARP_M in [64, 32], WARP_N in [64, 32], TILE_TM in [16, 8], TILE_TN in [16, 32], STAGES in [2, 3, 4])
// @where(TILE_TM * TILE_TN == 256)
// @where(TILE_M % WARP_M == 0 && TILE_N % WARP_N == 0)
// @where(WARP_M % TILE_TM == 0 && WARP_N % TILE_TN == 0)
// @where((TILE_M / WARP_M) * (TILE_N / WARP_N) <= 16)
// @where((WARP_M / TILE_TM) * (WARP_N / TILE_TN) <= 16)
// @where(STAGES * (TILE_M * (TILE_K + 16) + TILE_K * (TILE_N + 16)) * 2 <= 227 * 1024)
// @where(M % TILE_M == 0 && N % TILE_N == 0 && K % TILE_K == 0)
// @kernel gemm_bf16(a: in tensor<bf16>[M, K], b: in tensor<bf16>[K, N], c: out tensor<f32>[M, N], m: i32 = M, n: i32 = N, k: i32 = K)
// @grid(N / TILE_N, M / TILE_M)
// @block((TILE_M / WARP_M) * (TILE_N / WARP_N) * 32)
// @shared(STAGES * (TILE_M * (TILE_K + 16) + TILE_K * (TILE_N + 16)) * 2)
// @flops(2 * M * N * K)
// @bytes(2 * (M * K + K * N) + 4 * M * N)
// @dims(M = 4096, N = 4096, K = 4096)
// @verify(atol = 0.01, rtol = 0.001)
extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_bf16(const __nv_bfloat16 *a, const __nv_bfloat16 *b, float *c, int m, int n, int k) {
  extern __shared__ __align__(128) __nv_bfloat16 smem[];
  int warp = threadIdx.x / 32;
  int wr = warp / WARPS_N * WARP_M, wc = warp % WARPS_N * WARP_N;
  int m0 = blockIdx.y * TILE_M, n0 = blockIdx.x * TILE_N;
  int tiles = k / TILE_K;
  acc_t acc[FRAG_M][FRAG_N];
#pragma unroll
  for (int i = 0; i < FRAG_M; i++)
#pragma unroll
    for (int j = 0; j < FRAG_N; j++) wmma::fill_fragment(acc[i][j], 0.0f);
  // Prologue: the first STAGES - 1 tiles in flight. Every step commits one
  // group, empty or not, so that wait_stage counts tiles.
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < tiles) load_stage(a, b, n, k, m0, n0, s * TILE_K, smem + s * STAGE_ELEMS);
    commit();
  }
  for (int t = 0; t < tiles; t++) {
    wait_stage();    // tile t has landed (this thread's part)
    __syncthreads(); // ... everyone's part, and tile t - 1 is consumed
    int next = t + STAGES - 1;
    if (next < tiles) load_stage(a, b, n, k, m0, n0, next * TILE_K, smem + next % STAGES * STAGE_ELEMS);
    commit();
    mma_stage(smem + t % STAGES * STAGE_ELEMS, wr, wc, acc);
  }
#pragma unroll
  for (int i = 0; i < FRAG_M; i++)
#pragma unroll
    for (int j = 0; j < FRAG_N; j++)
      wmma::store_matrix_sync(c + (long long)(m0 + wr + i * TILE_TM) * n + n0 + wc + j * TILE_TN, acc[i][j], n,
                              wmma::mem_row_major);
}

// bf16 GEMM for Hopper (sm_90a), written the way the chip wants it:
//   C[M, N] = A[M, K] * B[N, K]^T   (A and B both K-major: B is laid out as
//   a Linear layer's weight; torch.mm(a, b.t()) computes the same), bf16 in,
//   fp32 accumulation in registers, bf16 out.
// One block computes a BM x BN tile of C. Warpgroup 0 is the producer: one
// of its threads issues the Tensor Memory Accelerator copies
// (cp.async.bulk.tensor, through the tensor maps AMAP and BMAP that ktune
// builds on the host) of A's BM x 64 and B's BN x 64 tiles into a ring of
// STAGES shared-memory stages, each completing on the stage's "full"
// mbarrier. Warpgroups 1..CONSUMERS are consumers: each owns WG_M rows of
// the tile and multiplies them with warpgroup MMAs (wgmma.mma_async, m64 x
// BN x k16, both operands read from shared memory through descriptors),
// keeping one k-tile of MMAs in flight, and frees a stage (its "empty"
// mbarrier) once the MMAs that read it are done. The producer gives most of
// its registers to the consumers (setmaxnreg).
// The 64-wide k-tile is one 128-byte row per tile row: TMA writes it with
// the 128-byte swizzle, which is the layout wgmma's descriptor reads.
// The grid is swizzled: GROUP_M row tiles share each column sweep, so the
// blocks running at once reuse the same B tiles from L2.
// With a thread-block cluster of CLUSTER_X blocks (the @cluster stage), the
// blocks of a cluster take CLUSTER_X consecutive row tiles of one column
// tile: they need the same B tile, so each block's producer brings one
// CLUSTER_X-th of it and the copy engine multicasts that slice into every
// block of the cluster (B is read from L2 once per cluster, not per block).
// A stage is then written by every producer of the cluster, so it is free
// only when the consumers of every block have released it: each consumer
// arrives on the "empty" barrier of every block in the cluster.
// A block (a cluster, with CLUSTER_X > 1) may take TILES_PER_BLOCK tiles in
// turn, a grid's width apart: its ring then runs on across tiles, so the
// producer fills the next tile's stages while the consumers store the last
// one, and the block's start (barriers, cluster sync, the first copies'
// latency) is paid once for them all.
// Tuned: BN, WG_M (rows per consumer: BM = CONSUMERS * WG_M), CONSUMERS,
// STAGES, GROUP_M, TILES_PER_BLOCK, then CLUSTER_X. Sizes must be multiples of the tile, and
// the row tiles a multiple of the cluster (the where-clauses below).

#include <cuda_bf16.h>

// CUtensorMap as cuda.h defines it (NVRTC has no cuda.h): 128 opaque bytes.
struct __align__(64) tma_map {
  unsigned long long opaque[16];
};

#define BK 64
#define BM (CONSUMERS * WG_M)
#define THREADS ((CONSUMERS + 1) * 128)
#define M_TILES (WG_M / 64)
#define ACC (BN / 2)
#define A_BYTES (BM * BK * 2)
#define B_BYTES (BN * BK * 2)
#define STAGE_BYTES (A_BYTES + B_BYTES)
#ifndef CLUSTER_X
#define CLUSTER_X 1
#endif
#define B_SLICE_ROWS (BN / CLUSTER_X) /* the rows of B one block's producer brings */
/* Each slice starts where the 128-byte swizzle pattern does (every 1024 bytes),
 * so the slices together are laid out as one box of BN rows. */
static_assert(B_SLICE_ROWS * BK * 2 % 1024 == 0, "a slice of B must be whole 1024-byte swizzle blocks");

__device__ __forceinline__ unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

// ---- mbarriers ----

__device__ __forceinline__ void bar_init(unsigned long long *bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}

// The producer's arrival: BYTES more are coming from the copy engine.
__device__ __forceinline__ void bar_expect(unsigned long long *bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}

__device__ __forceinline__ void bar_arrive(unsigned long long *bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

// An arrival on the barrier at BAR's place in block RANK of the cluster.
// Its default ordering (release at the block's scope) is what a consumer's
// release needs: the MMAs that read the stage have completed. With
// .release.cluster the arrival waited on every earlier memory operation at
// cluster scope, and CLUSTER_X=2 ran at 0.26-0.64 of CLUSTER_X=1 on the H200
// (0.89-1.00 without it; docs/BENCHMARKS.md, "The @cluster stage", says how
// to rerun it).
__device__ __forceinline__ void bar_arrive_in(unsigned long long *bar, unsigned rank) {
  asm volatile("{\n\t.reg .b32 remote;\n\tmapa.shared::cluster.u32 remote, %0, %1;\n\t"
               "mbarrier.arrive.shared::cluster.b64 _, [remote];\n\t}" ::"r"(smem_addr(bar)),
               "r"(rank)
               : "memory");
}

// Waits until the phase of parity PARITY has completed (a fresh barrier
// counts the phase before its first as completed: parity 1 passes at once).
__device__ __forceinline__ void bar_wait(unsigned long long *bar, unsigned parity) {
  unsigned done = 0;
  while (!done)
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done)
                 : "r"(smem_addr(bar)), "r"(parity)
                 : "memory");
}

// ---- the copy engine ----

// The box of MAP at (X innermost, Y) into DST, completing on BAR.
__device__ __forceinline__ void tma_load(void *dst, const tma_map *map, unsigned long long *bar, int x, int y) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], "
               "[%2];" ::"r"(smem_addr(dst)),
               "l"(map), "r"(smem_addr(bar)), "r"(x), "r"(y)
               : "memory");
}

// The box of MAP at (X, Y) into DST in every block of MASK (a bit per
// cluster rank), each completing on its own barrier at BAR's place.
__device__ __forceinline__ void tma_load_multicast(void *dst, const tma_map *map, unsigned long long *bar, int x, int y,
                                                   unsigned short mask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
               "[%0], [%1, {%3, %4}], [%2], %5;" ::"r"(smem_addr(dst)),
               "l"(map), "r"(smem_addr(bar)), "r"(x), "r"(y), "h"(mask)
               : "memory");
}

// ---- the cluster ----

__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// Every thread of every block of the cluster (a block's __syncthreads when
// the cluster is one block).
__device__ __forceinline__ void cluster_sync() {
#if CLUSTER_X > 1
  /* Not .aligned: the producer warpgroup's threads arrive from diverged paths. */
  asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
#else
  __syncthreads();
#endif
}

// ---- warpgroup MMA ----

// A shared-memory matrix descriptor for a K-major tile written with the
// 128-byte swizzle: start address (16-byte units), leading offset 1 (unused
// when swizzled), stride 1024 bytes between groups of 8 rows, swizzle mode 1.
__device__ __forceinline__ unsigned long long desc(const void *p) {
  return (unsigned long long)((smem_addr(p) & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// Keeps the compiler from moving accumulator reads or writes across the
// asynchronous MMAs (it cannot see that they use the registers later).
__device__ __forceinline__ void fence_acc(float (&d)[M_TILES][ACC]) {
#pragma unroll
  for (int i = 0; i < M_TILES; i++)
#pragma unroll
    for (int j = 0; j < ACC; j++) asm volatile("" : "+f"(d[i][j])::"memory");
}

// D (64 x 64, fp32, in registers) += A (64 x 16) * B (64 x 16)^T, both from shared memory.
__device__ __forceinline__ void wgmma_64(float (&d)[32], unsigned long long da, unsigned long long db) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %34, 0;\n\t"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, %32, %33, p, 1, 1, 0, 0;\n\t}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(da), "l"(db), "r"(1));
}

// D (64 x 128, fp32, in registers) += A (64 x 16) * B (128 x 16)^T, both from shared memory.
__device__ __forceinline__ void wgmma_128(float (&d)[64], unsigned long long da, unsigned long long db) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %66, 0;\n\t"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1, 0, 0;\n\t}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(da), "l"(db), "r"(1));
}

// D (64 x 256, fp32, in registers) += A (64 x 16) * B (256 x 16)^T, both from shared memory.
__device__ __forceinline__ void wgmma_256(float (&d)[128], unsigned long long da, unsigned long long db) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %130, 0;\n\t"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1, 0, 0;\n\t}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
        "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
        "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
        "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(da), "l"(db), "r"(1));
}

#if BN == 256
#define WGMMA wgmma_256
#elif BN == 128
#define WGMMA wgmma_128
#else
#define WGMMA wgmma_64
#endif

// ---- the two roles ----

// One thread of the producer warpgroup: every k-tile of A's and B's tiles
// into the ring, a stage once the consumers (of every block of the cluster)
// have freed it. The stage's barrier expects the whole stage: A's tile from
// this block's copy, B's slices from every block's multicast. FIRST counts
// the ring's k-tiles before this tile's (the block's earlier tiles).
__device__ void produce(const tma_map *amap, const tma_map *bmap, unsigned char *smem, unsigned long long *full,
                        unsigned long long *empty, int tm, int tn, unsigned rank, int ktiles, int first) {
  for (int kt = 0; kt < ktiles; kt++) {
    int s = (first + kt) % STAGES;
    bar_wait(&empty[s], (((first + kt) / STAGES) & 1) ^ 1);
    unsigned char *stage = smem + s * STAGE_BYTES;
    bar_expect(&full[s], STAGE_BYTES);
    tma_load(stage, amap, &full[s], kt * BK, tm * BM);
    unsigned char *slice = stage + A_BYTES + rank * B_SLICE_ROWS * BK * 2;
    int row = tn * BN + (int)rank * B_SLICE_ROWS;
#if CLUSTER_X > 1
    tma_load_multicast(slice, bmap, &full[s], kt * BK, row, (unsigned short)((1u << CLUSTER_X) - 1));
#else
    tma_load(slice, bmap, &full[s], kt * BK, row);
#endif
  }
}

// A consumer's release of stage S: in every block of the cluster, whose
// producers all write into it.
__device__ __forceinline__ void release(unsigned long long *empty, int s) {
#if CLUSTER_X > 1
#pragma unroll
  for (unsigned r = 0; r < CLUSTER_X; r++) bar_arrive_in(&empty[s], r);
#else
  bar_arrive(&empty[s]);
#endif
}

// One consumer warpgroup: WG_M rows of the tile times all BN columns, the
// ring's k-tiles FIRST to FIRST + KTILES - 1.
__device__ void consume(unsigned char *smem, unsigned long long *full, unsigned long long *empty, int cw, int ktiles,
                        int first, float (&acc)[M_TILES][ACC]) {
  int tid = threadIdx.x % 128;
  for (int kt = 0; kt < ktiles; kt++) {
    int s = (first + kt) % STAGES;
    bar_wait(&full[s], ((first + kt) / STAGES) & 1);
    const unsigned char *as = smem + s * STAGE_BYTES + cw * WG_M * BK * 2, *bs = smem + s * STAGE_BYTES + A_BYTES;
    fence_acc(acc);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 16; kk++) /* 16 bf16 = 32 bytes = 2 descriptor units along the row */
#pragma unroll
      for (int i = 0; i < M_TILES; i++) WGMMA(acc[i], desc(as + i * 64 * BK * 2) + 2 * kk, desc(bs) + 2 * kk);
    wgmma_commit();
    fence_acc(acc);
    wgmma_wait<1>(); /* the previous k-tile's MMAs are done: free its stage */
    fence_acc(acc);
    if (kt > 0 && tid == 0) release(empty, (first + kt - 1) % STAGES);
  }
  wgmma_wait<0>();
  fence_acc(acc);
  if (tid == 0) release(empty, (first + ktiles - 1) % STAGES); /* for the block's next tile */
}

// The accumulators of wgmma's m64 x BN layout, as bf16 pairs: thread T of
// the warpgroup holds rows 16 * (T / 32) + (T % 32) / 4 (+ 8) and, in each
// 8-column group, columns 2 * (T % 4) (+ 1).
__device__ void store(__nv_bfloat16 *c, int n, int row0, int col0, const float (&acc)[M_TILES][ACC]) {
  int tid = threadIdx.x % 128, lane = tid % 32;
#pragma unroll
  for (int i = 0; i < M_TILES; i++) {
    int row = row0 + i * 64 + (tid / 32) * 16 + lane / 4;
#pragma unroll
    for (int j = 0; j < BN / 8; j++) {
      int col = col0 + j * 8 + (lane % 4) * 2;
      *(__nv_bfloat162 *)&c[(long long)row * n + col] = __floats2bfloat162_rn(acc[i][4 * j], acc[i][4 * j + 1]);
      *(__nv_bfloat162 *)&c[(long long)(row + 8) * n + col] =
          __floats2bfloat162_rn(acc[i][4 * j + 2], acc[i][4 * j + 3]);
    }
  }
}

// Block PID's tile: GROUP_M row tiles at a time sweep the columns.
__device__ void tile_of(int pid, int tiles_m, int tiles_n, int *tm, int *tn) {
  int per_group = GROUP_M * tiles_n, first = pid / per_group * GROUP_M;
  int rows = min(tiles_m - first, GROUP_M);
  *tm = first + pid % per_group % rows;
  *tn = pid % per_group / rows;
}

// @arch(sm_90a)
// @autotune(BN in [256, 128, 64], WG_M in [64, 128], CONSUMERS in [2, 1], STAGES in [4, 3, 5, 6], GROUP_M in [8, 1, 16], TILES_PER_BLOCK in {1, 4})
// @cluster(CLUSTER_X in [1, 4])
// @where(M % (CONSUMERS * WG_M) == 0 && N % BN == 0 && K % 64 == 0)
// @where(M / (CONSUMERS * WG_M) % CLUSTER_X == 0)
// @where(WG_M / 64 * BN <= 256)
// @where(STAGES * (CONSUMERS * WG_M + BN) * 128 + 1024 <= 227 * 1024)
// @kernel gemm_wgmma(c: out tensor<bf16>[M, N], a: in tensor<bf16>[M, K], b: in tensor<bf16>[N, K], amap: tensormap(a, box = [CONSUMERS * WG_M, 64], swizzle = 128), bmap: tensormap(b, box = [BN / CLUSTER_X, 64], swizzle = 128), m: i32 = M, n: i32 = N, k: i32 = K)
// @grid((M / (CONSUMERS * WG_M) / CLUSTER_X * (N / BN) + TILES_PER_BLOCK - 1) / TILES_PER_BLOCK * CLUSTER_X)
// @block((CONSUMERS + 1) * 128)
// @shared(STAGES * (CONSUMERS * WG_M + BN) * 128 + 1024)
// @dims(M = 4096, N = 4096, K = 4096)
// @key(M, N, K)
// @verify(atol = 0.125, rtol = 0.01)
// @flops(2 * M * N * K)
// @bytes(2 * (M * K + N * K + M * N))
extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm_wgmma(__nv_bfloat16 *c, const __nv_bfloat16 *a, const __nv_bfloat16 *b, const __grid_constant__ tma_map amap,
               const __grid_constant__ tma_map bmap, int m, int n, int k) {
  extern __shared__ unsigned char raw[];
  __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
  /* The 128-byte swizzle repeats every 1024 bytes: stages start there. */
  unsigned char *smem = raw + ((1024 - (smem_addr(raw) & 1023)) & 1023);
  /* A cluster's blocks: consecutive row tiles of one column tile. The
   * cluster takes the cluster tiles CID, CID + CLUSTERS, ... (all its blocks
   * the same number, so their rings stay in step). */
  unsigned rank = CLUSTER_X > 1 ? cluster_rank() : 0;
  int tiles_cm = m / BM / CLUSTER_X, tiles_n = n / BN, cluster_tiles = tiles_cm * tiles_n;
  int cid = blockIdx.x / CLUSTER_X, clusters = gridDim.x / CLUSTER_X;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; s++) {
      bar_init(&full[s], 1);
      bar_init(&empty[s], CONSUMERS * CLUSTER_X);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  cluster_sync(); /* no block's copies or arrivals reach a barrier not yet set up */
  int wg = threadIdx.x / 128, ktiles = k / BK;
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if (threadIdx.x == 0)
      for (int ct = cid, first = 0; ct < cluster_tiles; ct += clusters, first += ktiles) {
        int tcm, tn;
        tile_of(ct, tiles_cm, tiles_n, &tcm, &tn);
        produce(&amap, &bmap, smem, full, empty, tcm * CLUSTER_X + (int)rank, tn, rank, ktiles, first);
      }
  } else {
#if CONSUMERS == 1
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;");
#else
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
#endif
    for (int ct = cid, first = 0; ct < cluster_tiles; ct += clusters, first += ktiles) {
      int tcm, tn;
      tile_of(ct, tiles_cm, tiles_n, &tcm, &tn);
      float acc[M_TILES][ACC];
#pragma unroll
      for (int i = 0; i < M_TILES; i++)
#pragma unroll
        for (int j = 0; j < ACC; j++) acc[i][j] = 0.f;
      consume(smem, full, empty, wg - 1, ktiles, first, acc);
      store(c, n, (tcm * CLUSTER_X + (int)rank) * BM + (wg - 1) * WG_M, tn * BN, acc);
    }
  }
  /* No block exits while the others may still arrive on its barriers. */
  if (CLUSTER_X > 1) cluster_sync();
}

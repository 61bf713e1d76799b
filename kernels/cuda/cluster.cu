// A sum of N floats into one double, cooperating across a thread-block
// cluster (Hopper's distributed shared memory): every block reduces its
// slice into its own shared memory, the cluster synchronises, and the
// cluster's first block reads the other blocks' partial sums straight from
// their shared memory, so a cluster of CLUSTER_X blocks costs one global
// atomic instead of CLUSTER_X. CLUSTER_X is tuned as a second stage.
// The grid is rounded up to a multiple of 8 blocks so that every cluster
// size divides it; the extra blocks find no elements and add zero.

// The cluster operations, in PTX (ISA 7.8, sm_90): lighter to compile than
// cooperative_groups, which pulls in libcu++.
__device__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

__device__ unsigned cluster_blocks() {
  unsigned n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  return n;
}

// All threads of all blocks of the cluster; orders shared-memory writes
// before the barrier with reads after it (release / acquire).
__device__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// Reads the double at P in the shared memory of block RANK of the cluster.
__device__ double load_remote(const double *p, unsigned rank) {
  unsigned local = (unsigned)__cvta_generic_to_shared(p), remote;
  double v;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  asm volatile("ld.shared::cluster.f64 %0, [%1];" : "=d"(v) : "r"(remote) : "memory");
  return v;
}

__device__ double warp_sum(double s) {
#pragma unroll
  for (int off = 16; off > 0; off /= 2) s += __shfl_down_sync(0xffffffffu, s, off);
  return s;
}

// Each thread: ITEMS float4 loads, strided by the block for coalescing.
__device__ double thread_sum(const float *x, int n) {
  long long base = (long long)blockIdx.x * BLOCK * ITEMS * 4;
  double s = 0.0;
#pragma unroll
  for (int it = 0; it < ITEMS; it++) {
    long long i = base + ((long long)it * BLOCK + threadIdx.x) * 4;
    if (i + 4 <= n) {
      float4 v = *reinterpret_cast<const float4 *>(x + i);
      s += (double)v.x + v.y + v.z + v.w;
    } else {
      for (long long j = i; j < n; j++) s += x[j];
    }
  }
  return s;
}

// @autotune(BLOCK in [256, 128, 512, 1024], ITEMS in [8, 2, 4, 16])
// @cluster(CLUSTER_X in [1, 8])
// @kernel cluster_sum(x: in tensor<f32>[N], total: out tensor<f64>[1] = zeros, n: i32 = N)
// @grid(cdiv(cdiv(N, BLOCK * ITEMS * 4), 8) * 8)
// @block(BLOCK)
// @flops(N)
// @bytes(4 * N)
// @dims(N = 1 << 26)
extern "C" __global__ void __launch_bounds__(BLOCK) cluster_sum(const float *x, double *total, int n) {
  __shared__ double warps[BLOCK / 32];
  __shared__ double partial; // read by the cluster's first block
  double s = warp_sum(thread_sum(x, n));
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = warp_sum(threadIdx.x < BLOCK / 32 ? warps[threadIdx.x] : 0.0);
    if (threadIdx.x == 0) partial = s;
  }
  cluster_sync(); // every block's partial is written
  if (cluster_rank() == 0 && threadIdx.x == 0) {
    double sum = 0.0;
    for (unsigned r = 0; r < cluster_blocks(); r++) sum += load_remote(&partial, r);
    atomicAdd(total, sum);
  }
  cluster_sync(); // no block exits while its shared memory may still be read
}

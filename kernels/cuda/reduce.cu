// Sum of N floats into one double. Each thread sums ITEMS vectors of VEC
// floats (strided by the block so that loads stay coalesced) in double, the
// block combines its threads' sums through warp shuffles and shared memory,
// and one atomic add per block accumulates the total. Summing in double
// keeps every configuration within rounding of the others.

struct __align__(sizeof(float) * VEC) vec_t {
  float v[VEC];
};

__device__ double warp_sum(double s) {
#pragma unroll
  for (int off = 16; off > 0; off /= 2) s += __shfl_down_sync(0xffffffffu, s, off);
  return s;
}

// The block's threads' sums, combined; valid in thread 0.
__device__ double block_sum(double s) {
  __shared__ double warps[BLOCK / 32];
  s = warp_sum(s);
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = s;
  __syncthreads();
  s = threadIdx.x < BLOCK / 32 ? warps[threadIdx.x] : 0.0;
  return threadIdx.x < 32 ? warp_sum(s) : 0.0;
}

// @autotune(BLOCK in [256, 128, 512, 1024], VEC in [4, 1, 2], ITEMS in [4, 1, 2, 8, 16])
// @where(BLOCK * VEC * ITEMS <= 65536)
// @kernel reduce_sum(x: in tensor<f32>[N], total: out tensor<f64>[1] = zeros, n: i32 = N)
// @grid(cdiv(N, BLOCK * VEC * ITEMS))
// @block(BLOCK)
// @flops(N)
// @bytes(4 * N)
// @dims(N = 1 << 26)
extern "C" __global__ void __launch_bounds__(BLOCK) reduce_sum(const float *x, double *total, int n) {
  long long base = (long long)blockIdx.x * BLOCK * VEC * ITEMS;
  double s = 0.0;
#pragma unroll
  for (int it = 0; it < ITEMS; it++) {
    long long i = base + ((long long)it * BLOCK + threadIdx.x) * VEC;
    if (i + VEC <= n) {
      vec_t a = *reinterpret_cast<const vec_t *>(x + i);
#pragma unroll
      for (int j = 0; j < VEC; j++) s += a.v[j];
    } else {
      for (long long j = i; j < n; j++) s += x[j];
    }
  }
  s = block_sum(s);
  if (threadIdx.x == 0) atomicAdd(total, s);
}

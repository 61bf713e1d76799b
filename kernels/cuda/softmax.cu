// Row softmax: y[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max)).
// One block per row. Each thread keeps a running (max, sum) over its
// elements (the online softmax recurrence), the block merges them, then
// every thread writes its elements. VEC elements move as one vector when
// the row length allows it; otherwise the row is walked element by element.

#define NEG_INF (-__int_as_float(0x7f800000))

struct __align__(sizeof(float) * VEC) vec_t {
  float v[VEC];
};

struct run_t {
  float m, s; // running maximum, and sum of exp(x - m)
};

__device__ run_t merge(run_t a, run_t b) {
  float m = fmaxf(a.m, b.m);
  if (m == NEG_INF) return a;
  return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
}

__device__ run_t push(run_t a, float x) { return merge(a, {x, 1.0f}); }

__device__ run_t warp_merge(run_t a) {
#pragma unroll
  for (int off = 16; off > 0; off /= 2) {
    run_t b = {__shfl_xor_sync(0xffffffffu, a.m, off), __shfl_xor_sync(0xffffffffu, a.s, off)};
    a = merge(a, b);
  }
  return a;
}

// The whole block's (max, sum), in every thread.
__device__ run_t block_merge(run_t a) {
  __shared__ run_t warps[BLOCK / 32 > 0 ? BLOCK / 32 : 1];
  __shared__ run_t all;
  a = warp_merge(a);
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = a;
  __syncthreads();
  if (threadIdx.x < 32) {
    run_t b = threadIdx.x < BLOCK / 32 ? warps[threadIdx.x] : run_t{NEG_INF, 0.0f};
    b = warp_merge(b);
    if (threadIdx.x == 0) all = b;
  }
  __syncthreads();
  return all;
}

// @autotune(BLOCK in [256, 32, 64, 128, 512, 1024], VEC in [4, 1, 2])
// @kernel softmax(x: in tensor<f32>[R, C], y: out tensor<f32>[R, C], rows: i32 = R, cols: i32 = C)
// @grid(R)
// @block(BLOCK)
// @flops(5 * R * C)
// @bytes(8 * R * C)
// @dims(R = 16384, C = 4096)
extern "C" __global__ void __launch_bounds__(BLOCK) softmax(const float *x, float *y, int rows, int cols) {
  const float *in = x + (long long)blockIdx.x * cols;
  float *out = y + (long long)blockIdx.x * cols;
  bool vec = cols % VEC == 0; // rows then start on a vector boundary
  run_t r = {NEG_INF, 0.0f};
  if (vec) {
    for (int i = threadIdx.x * VEC; i < cols; i += BLOCK * VEC) {
      vec_t a = *reinterpret_cast<const vec_t *>(in + i);
#pragma unroll
      for (int j = 0; j < VEC; j++) r = push(r, a.v[j]);
    }
  } else {
    for (int i = threadIdx.x; i < cols; i += BLOCK) r = push(r, in[i]);
  }
  r = block_merge(r);
  float inv = 1.0f / r.s;
  if (vec) {
    for (int i = threadIdx.x * VEC; i < cols; i += BLOCK * VEC) {
      vec_t a = *reinterpret_cast<const vec_t *>(in + i);
#pragma unroll
      for (int j = 0; j < VEC; j++) a.v[j] = expf(a.v[j] - r.m) * inv;
      *reinterpret_cast<vec_t *>(out + i) = a;
    }
  } else {
    for (int i = threadIdx.x; i < cols; i += BLOCK) out[i] = expf(in[i] - r.m) * inv;
  }
}

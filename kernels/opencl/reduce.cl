/* OpenCL 1.2 has no float atomic add: a compare-and-swap loop on the bits. */
static void atomic_add_f32(volatile __global float *p, float v) {
  volatile __global unsigned int *bits = (volatile __global unsigned int *)p;
  union { unsigned int u; float f; } seen, next;
  do {
    seen.u = *bits;
    next.f = seen.f + v;
  } while (atomic_cmpxchg(bits, seen.u, next.u) != seen.u);
}


// Sum of squares (the squared L2 norm) of x, into one f32 accumulator.
//
// Each work-item adds ITEMS elements, strided by the work-group size so that
// neighbouring work-items read neighbouring elements; the work-group then
// reduces its BLOCK partial sums in local memory, and one work-item adds the
// group's total to the accumulator with a compare-and-swap loop (OpenCL 1.2
// has no float atomic add). The accumulator starts at zero before every run.
// Fewer, larger groups mean fewer atomics; more items per work-item mean
// fewer groups but less parallelism: the space trades the two. The order of
// the float additions differs between configurations, hence @verify.
//
// @autotune(BLOCK in [64, 512], ITEMS in [1, 32])
// @kernel sumsq(x: in tensor<f32>[N], total: out tensor<f32>[1] = zeros, n: i32 = N)
// @grid(cdiv(N, BLOCK * ITEMS))
// @block(BLOCK)
// @dims(N = 4194304)
// @flops(2 * N)
// @bytes(4 * N)
// @verify(atol = 1e-2, rtol = 1e-3)
__kernel void sumsq(__global const float *x, __global float *total, int n) {
  __local float part[BLOCK];
  const int lid = (int)get_local_id(0);
  const int base = (int)get_group_id(0) * BLOCK * ITEMS + lid;
  float s = 0.0f;
  for (int i = 0; i < ITEMS; i++) {
    const int idx = base + i * BLOCK;
    if (idx < n) s += x[idx] * x[idx];
  }
  part[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int step = BLOCK / 2; step > 0; step /= 2) { /* BLOCK is a power of two */
    if (lid < step) part[lid] += part[lid + step];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) atomic_add_f32(total, part[0]);
}

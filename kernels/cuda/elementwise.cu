// A vectorised elementwise kernel, z = x * y + x: pure bandwidth (12 bytes
// moved per element). BLOCK threads per block, VEC elements per thread
// loaded as one aligned vector; the tail past the last whole vector is
// handled element by element, so any N works with any configuration.

// VEC floats moved as one access: 4, 8, 16 or 32 bytes, aligned to its size.
struct __align__(sizeof(float) * VEC) vec_t {
  float v[VEC];
};

// @autotune(BLOCK in [128, 1024], VEC in [1, 2, 4, 8])
// @where(BLOCK * VEC <= 8192)
// @kernel mul_add(x: in tensor<f32>[N], y: in tensor<f32>[N], z: out tensor<f32>[N], n: i32 = N)
// @grid(cdiv(N, BLOCK * VEC))
// @block(BLOCK)
// @flops(2 * N)
// @bytes(12 * N)
// @dims(N = 1 << 26)
extern "C" __global__ void __launch_bounds__(BLOCK) mul_add(const float *x, const float *y, float *z, int n) {
  long long i = ((long long)blockIdx.x * BLOCK + threadIdx.x) * VEC;
  if (i + VEC <= n) {
    vec_t a = *reinterpret_cast<const vec_t *>(x + i);
    vec_t b = *reinterpret_cast<const vec_t *>(y + i);
    vec_t c;
#pragma unroll
    for (int j = 0; j < VEC; j++) c.v[j] = a.v[j] * b.v[j] + a.v[j];
    *reinterpret_cast<vec_t *>(z + i) = c;
  } else {
    for (long long j = i; j < n; j++) z[j] = x[j] * y[j] + x[j];
  }
}

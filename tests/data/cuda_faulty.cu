// Fault injection for the CUDA backend (tests/gpu/run_h200.sh): a copy
// kernel in which the configuration BLOCK = 512 writes far outside its
// output, an illegal address that poisons the CUDA context. Tuning must
// survive it: that configuration is recorded as `runtime`, the worker is
// replaced, and the other configurations are still measured and verified.
//
// @autotune(BLOCK in [128, 256, 512, 1024])
// @kernel faulty_copy(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @grid(cdiv(N, BLOCK))
// @block(BLOCK)
// @bytes(8 * N)
// @dims(N = 1 << 22)

extern "C" __global__ void faulty_copy(const float *x, float *y, int n) {
  long long i = (long long)blockIdx.x * BLOCK + threadIdx.x;
  if (i >= n) return;
#if BLOCK == 512
  i += 1ll << 40; // 4 TiB past the buffer: never mapped
#endif
  y[i] = x[i];
}

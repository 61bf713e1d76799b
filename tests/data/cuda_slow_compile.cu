// A CUDA kernel that is slow to compile on purpose, to measure time budgets
// on a GPU (bench/time_budget_h200.sh): WORK fused multiply-adds in a chain,
// unrolled in full, so that NVRTC's time grows with WORK (pin it with
// --autotune "WORK=..."). BLOCK is a real tuning choice; SALT changes only
// the source, so that the space is large and every configuration compiles
// on its own. Every configuration computes y = x (the chain is kept, not
// folded: 0 * v is not 0 for every float, so the compiler must compute v).

// @autotune(WORK in [2000, 8000, 16000, 32000, 64000], BLOCK in [128, 256, 512, 1024, 64, 32, 96, 192], SALT in [0, 1, 2, 3, 4, 5, 6, 7])
// @kernel chain(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @grid(cdiv(N, BLOCK))
// @block(BLOCK)
// @dims(N = 1 << 20)
extern "C" __global__ void __launch_bounds__(BLOCK) chain(const float *x, float *y, int n) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i >= n) return;
  float v = x[i] + SALT * 0.0f;
#pragma unroll
  for (int k = 0; k < WORK; k++) v = fmaf(v, 0.99999f, 1e-5f * (float)(k % 7));
  y[i] = x[i] + 0.0f * v;
}

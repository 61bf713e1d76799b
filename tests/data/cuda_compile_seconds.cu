// A CUDA kernel whose configurations take seconds each to compile (40000
// sine steps of straight-line code), for the time-budget check of tests/gpu/faults_h200.sh:
// `--budget 10s` must end within 5 % of 10 s (64 configurations of about
// 5 s each on 16 cores take much longer). The default (V=0) compiles
// fast, since the reference always runs. Every configuration computes the
// same output.
//
// @autotune(V in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63])
// @kernel churn(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @grid(cdiv(N, 256))
// @block(256)
// @dims(N = 65536)
// Straight-line code, written out by the preprocessor: the compiler has to
// schedule and allocate registers over all of it.
#define STEP(a) a = __sinf(a * 1.0001f + 1e-7f * (float)(V + 1));
#define STEP10(a) STEP(a) STEP(a) STEP(a) STEP(a) STEP(a) STEP(a) STEP(a) STEP(a) STEP(a) STEP(a)
#define STEP100(a) STEP10(a) STEP10(a) STEP10(a) STEP10(a) STEP10(a) STEP10(a) STEP10(a) STEP10(a) STEP10(a) STEP10(a)
#define STEP1000(a) STEP100(a) STEP100(a) STEP100(a) STEP100(a) STEP100(a) STEP100(a) STEP100(a) STEP100(a) STEP100(a) STEP100(a)
#define STEP10000(a) STEP1000(a) STEP1000(a) STEP1000(a) STEP1000(a) STEP1000(a) STEP1000(a) STEP1000(a) STEP1000(a) STEP1000(a) STEP1000(a)

extern "C" __global__ void churn(const float *x, float *y, int n) {
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i >= n) return;
  float a = x[i], b = x[(i + 1) % n];
#if V > 0
  STEP10000(a) STEP10000(b) STEP10000(a) STEP10000(b)
#endif
  y[i] = 2.0f * x[i] + (a + b > 1e30f ? 1.0f : 0.0f);
}

// The CUDA version of tests/data/timed_runs.c, run by tests/gpu/faults_h200.sh:
// fast configurations right on the runs that start from poisoned outputs
// (the verified run) that cheat or do damage on the timed runs, whose
// outputs already hold results:
//   VARIANT 0  correct, slow (the default and reference)
//   VARIANT 1  works only where its output is NaN (poison): a fake time
//   VARIANT 2  the same, and zeroes its input x where it skips
//   VARIANT 3  the same, and writes past the end of y where it skips
//   VARIANT 4  correct and fast: the expected winner
//
// @autotune(VARIANT in [0, 1, 2, 3, 4])
// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @grid(cdiv(N, 256))
// @block(256)
// @dims(N = 1 << 22)

extern "C" __global__ void scale(float *x, float *y, int n) {
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i >= n) return;
  if (VARIANT >= 1 && VARIANT <= 3 && !isnan(y[i])) {
    if (VARIANT == 2) x[i] = 0.0f;
    if (VARIANT == 3 && i < 3) y[n + i] = 1.0f;
    return;
  }
  float v = x[i];
  int repeat = VARIANT == 0 ? 64 : 1;
  for (int r = 0; r < repeat; r++) ((volatile float *)y)[i] = 2.0f * v;
}

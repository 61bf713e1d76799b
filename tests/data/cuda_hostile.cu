// The CUDA versions of the buggy and hostile kernels of docs/FAULTS.md, run
// by tests/gpu/faults_h200.sh:
//   VARIANT 0  correct, slow (the default and reference)
//   VARIANT 1  correct and prints (CUDA printf): --json must stay JSON
//   VARIANT 2  writes its input
//   VARIANT 3  writes three elements past the end of y (no fault on a GPU)
//   VARIANT 4  correct and fast: the expected winner
//   VARIANT 5  writes one element before the start of y
//
// @autotune(VARIANT in [0, 1, 2, 3, 4, 5])
// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @grid(cdiv(N, 256))
// @block(256)
// @dims(N = 1 << 22)

extern "C" __global__ void scale(float *x, float *y, int n) {
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  int repeat = VARIANT == 0 ? 64 : 1;
  for (int r = 0; r < repeat; r++) ((volatile float *)y)[i] = 2.0f * v;
  if (VARIANT == 1 && i == 0) printf("cuda printf from VARIANT=%d\n", VARIANT);
  if (VARIANT == 2) x[i] = 0.0f;
  if (VARIANT == 3 && i < 3) y[n + i] = 1.0f;
  if (VARIANT == 5 && i == 0) y[-1] = 1.0f;
}

// The CUDA version of tests/data/far_writes.c, run by tests/gpu/faults_h200.sh:
// writes far before the start and past the end of y (no fault on a GPU
// within the allocation). y is 1 MiB: 256 rows of 1024 floats.
//   VARIANT 0  correct, slow (the default and reference)
//   VARIANT 1  writes 8 KiB before y (row -2)
//   VARIANT 2  writes 64 KiB before y
//   VARIANT 3  writes 1 MiB before y (row -1 of the matrix read as one row)
//   VARIANT 4  writes 64 KiB past the end of y
//   VARIANT 5  correct and fast: the expected winner
//
// @autotune(VARIANT in [0, 1, 2, 3, 4, 5])
// @kernel scale(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @grid(cdiv(N, 256))
// @block(256)
// @dims(N = 262144)

extern "C" __global__ void scale(float *x, float *y, int n) {
  int i = blockIdx.x * 256 + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  int repeat = VARIANT == 0 ? 64 : 1;
  for (int r = 0; r < repeat; r++) ((volatile float *)y)[i] = 2.0f * v;
  long at = VARIANT == 1 ? -2048 : VARIANT == 2 ? -16384 : VARIANT == 3 ? -262144 : VARIANT == 4 ? n + 16383L : 0;
  if (at && i == 0) ((volatile float *)y)[at] = 1.0f;
}

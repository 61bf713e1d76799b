// A CUDA default configuration (BLOCK=256) that leaves the last 7 elements
// of its output unwritten: it cannot be the reference (tests/gpu/faults_h200.sh).
//
// @autotune(BLOCK in [256, 128])
// @kernel inc(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @grid(cdiv(N, BLOCK))
// @block(BLOCK)
// @dims(N = 65536)
extern "C" __global__ void inc(const float *x, float *y, int n) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n - (BLOCK == 256 ? 7 : 0)) y[i] = x[i] + 1.0f;
}

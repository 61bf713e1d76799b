/* The CUDA twin of opencl_verify.cl: outputs that pass or fail the
 * comparison in every way it knows, for tests/gpu/verify_device_h200.sh to
 * check that the comparison on the device gives the same status and message
 * as the host's (KTUNE_VERIFY_ON=host). VARIANT as in opencl_verify.cl. */

// @autotune(VARIANT in [0, 1, 2, 3, 4, 5, 6, 7])
// @kernel twice(x: in tensor<f32>[N], y: out tensor<f32>[N], z: out tensor<i32>[N], n: i32 = N)
// @grid(cdiv(N, 256))
// @block(256)
// @dims(N = 3000000)
extern "C" __global__ void twice(const float *x, float *y, int *z, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = 2.0f * x[i];
  if (VARIANT == 1) v *= 1.0005f;
  if (VARIANT == 2 && i >= 1000) v = v * 1.003f + 0.01f;
  if (VARIANT == 3 && i == 100) v = __int_as_float(0x7fc00000);
  if (VARIANT == 6 && i == 70000) v = __int_as_float(0x7f800000);
  if (VARIANT == 7) v += 1.0f;
  if (!(VARIANT == 4 && i == n - 1)) y[i] = v;
  z[i] = i + (VARIANT == 5 && i == 9);
}

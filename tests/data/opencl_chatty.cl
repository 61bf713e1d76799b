/* An OpenCL kernel that prints (OpenCL C printf): the output must stay out
 * of ktune's stdout and be kept with each configuration's result. */

// @autotune(V in [1, 2])
// @kernel chatty(x: in tensor<f32>[N], y: out tensor<f32>[N], n: i32 = N)
// @grid(cdiv(N, 64))
// @block(64)
// @dims(N = 256)
__kernel void chatty(__global const float *x, __global float *y, int n) {
  const int i = (int)get_global_id(0);
  if (i == 0) printf("opencl printf from V=%d\n", V);
  if (i < n) y[i] = 2.0f * x[i];
}

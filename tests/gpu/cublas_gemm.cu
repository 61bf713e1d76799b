// Reference figures for the GPU check (tests/gpu/run_h200.sh), built with
// nvcc on the GPU machine only; ktune itself never links cuBLAS.
//   cublas_gemm [M N K]   (default 4096 4096 4096)
// Prints the TFLOP/s of cublasSgemm (fp32) and cublasGemmEx (bf16 inputs,
// fp32 accumulate and output) on row-major data as ktune's GEMMs use it, and
// the bandwidth of a device-to-device copy (bytes read + written), the
// ceiling of the memory-bound kernels. Each figure is the median of 20 timed
// runs after 3 warm-ups, timed with CUDA events.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CHECK(call)                                                                         \
  do {                                                                                      \
    auto rc_ = (call);                                                                      \
    if (rc_ != 0) {                                                                         \
      std::fprintf(stderr, "%s:%d: %s failed (%d)\n", __FILE__, __LINE__, #call, (int)rc_); \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

// Median seconds of one call of FN.
static double time_median(const std::function<void()> &fn) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; i++) fn();
  std::vector<double> t;
  for (int i = 0; i < 20; i++) {
    CHECK(cudaEventRecord(a));
    fn();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms * 1e-3);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

__global__ void fill(float *p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = (float)((i * 2654435761u + seed) % 2001u) / 1000.0f - 1.0f;
}

__global__ void to_bf16(const float *in, __nv_bfloat16 *out, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    out[i] = __float2bfloat16(in[i]);
}

int main(int argc, char **argv) {
  int m = argc > 3 ? std::atoi(argv[1]) : 4096, n = argc > 3 ? std::atoi(argv[2]) : 4096,
      k = argc > 3 ? std::atoi(argv[3]) : 4096;
  float *a, *b, *c;
  __nv_bfloat16 *ah, *bh;
  CHECK(cudaMalloc(&a, sizeof(float) * m * k));
  CHECK(cudaMalloc(&b, sizeof(float) * k * n));
  CHECK(cudaMalloc(&c, sizeof(float) * m * n));
  CHECK(cudaMalloc(&ah, sizeof(__nv_bfloat16) * m * k));
  CHECK(cudaMalloc(&bh, sizeof(__nv_bfloat16) * k * n));
  fill<<<1024, 256>>>(a, (size_t)m * k, 1);
  fill<<<1024, 256>>>(b, (size_t)k * n, 2);
  to_bf16<<<1024, 256>>>(a, ah, (size_t)m * k);
  to_bf16<<<1024, 256>>>(b, bh, (size_t)k * n);
  CHECK(cudaDeviceSynchronize());
  cublasHandle_t h;
  CHECK(cublasCreate(&h));
  const float one = 1.0f, zero = 0.0f;
  double flops = 2.0 * m * n * k;
  // Row-major C = A B is column-major C^T = B^T A^T: swap the operands.
  double s =
      time_median([&] { CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c, n)); });
  std::printf("cublasSgemm %dx%dx%d: %.2f TFLOP/s (%.3f ms)\n", m, n, k, flops / s * 1e-12, s * 1e3);
  s = time_median([&] {
    CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, bh, CUDA_R_16BF, n, ah, CUDA_R_16BF, k, &zero, c,
                       CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  });
  std::printf("cublasGemmEx bf16->f32 %dx%dx%d: %.2f TFLOP/s (%.3f ms)\n", m, n, k, flops / s * 1e-12, s * 1e3);
  size_t bytes = (size_t)1 << 30;
  void *x, *y;
  CHECK(cudaMalloc(&x, bytes));
  CHECK(cudaMalloc(&y, bytes));
  CHECK(cudaMemset(x, 1, bytes));
  s = time_median([&] { CHECK(cudaMemcpy(y, x, bytes, cudaMemcpyDeviceToDevice)); });
  std::printf("device-to-device copy of 1 GiB: %.0f GB/s (read + written)\n", 2.0 * bytes / s * 1e-9);
  cublasDestroy(h);
  return 0;
}

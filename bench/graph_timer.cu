// The independent side of bench/timing_rank_h200.sh: one configuration of
// kernels/cuda/elementwise.cu built by nvcc (-DBLOCK=.. -DVEC=..), timed
// apart from ktune as Triton's do_bench_cudagraph does: LAUNCHES launches
// captured in a CUDA graph, the L2 flushed before each replay, events
// around the replay, the median of REPEATS replays per launch.
//   graph_timer N  ->  prints "median_us_per_launch"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../kernels/cuda/elementwise.cu"

#define CHECK(x)                                                                          \
  do {                                                                                    \
    cudaError_t e_ = (x);                                                                 \
    if (e_ != cudaSuccess) {                                                              \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

int main(int argc, char **argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 1 << 14;
  const int launches = 200, repeats = 30;
  float *x, *y, *z, *flush;
  const size_t flush_bytes = 256u << 20; // over twice the H200's 60 MB L2
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  CHECK(cudaMalloc(&z, n * sizeof(float)));
  CHECK(cudaMalloc(&flush, flush_bytes));
  std::vector<float> h(n);
  for (int i = 0; i < n; i++) h[i] = (float)(i % 97) * 0.25f + 1.0f; // not zeros
  CHECK(cudaMemcpy(x, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(y, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int per_block = BLOCK * VEC, grid = (n + per_block - 1) / per_block;
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < launches; i++) mul_add<<<grid, BLOCK, 0, s>>>(x, y, z, n);
  CHECK(cudaStreamEndCapture(s, &g));
  CHECK(cudaGraphInstantiate(&ge, g, 0));
  CHECK(cudaGraphLaunch(ge, s)); // warm-up
  CHECK(cudaStreamSynchronize(s));
  // every element written right (z = x * y + x)
  std::vector<float> out(n);
  CHECK(cudaMemcpy(out.data(), z, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++)
    if (out[i] != h[i] * h[i] + h[i]) {
      fprintf(stderr, "wrong result at %d: %g\n", i, out[i]);
      return 1;
    }
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> us;
  for (int r = 0; r < repeats; r++) {
    CHECK(cudaMemsetAsync(flush, r & 0xff, flush_bytes, s));
    CHECK(cudaEventRecord(a, s));
    CHECK(cudaGraphLaunch(ge, s));
    CHECK(cudaEventRecord(b, s));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    us.push_back(ms * 1000.0f / launches);
  }
  std::sort(us.begin(), us.end());
  printf("%.4f\n", us[us.size() / 2]);
  return 0;
}

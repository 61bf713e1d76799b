// The independent side of bench/timing_rank_h200.sh: one configuration of
// kernels/cuda/elementwise.cu (default) or, with -DSOFTMAX, of
// kernels/cuda/softmax.cu, built by nvcc (-DBLOCK=.. -DVEC=..), timed apart
// from ktune as Triton's do_bench_cudagraph does: LAUNCHES launches captured
// in a CUDA graph, the L2 flushed before each replay, events around the
// replay, the median of REPEATS replays per launch. The output of the first
// replay is checked against a host reference first.
//   graph_timer N         (elementwise: N elements)
//   graph_timer R C       (softmax: R rows of C)
//   ->  prints "median_us_per_launch"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifdef SOFTMAX
#include "../kernels/cuda/softmax.cu"
#else
#include "../kernels/cuda/elementwise.cu"
#endif

#define CHECK(x)                                                                          \
  do {                                                                                    \
    cudaError_t e_ = (x);                                                                 \
    if (e_ != cudaSuccess) {                                                              \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

// The kernel under test: its inputs, one launch, and its reference.
struct problem {
  int rows, cols; // elementwise: 1 row of N
  std::vector<float> h;
  float *x, *y, *z;

  problem(int argc, char **argv) {
#ifdef SOFTMAX
    rows = argc > 1 ? atoi(argv[1]) : 64;
    cols = argc > 2 ? atoi(argv[2]) : 4096;
#else
    rows = 1;
    cols = argc > 1 ? atoi(argv[1]) : 1 << 14;
#endif
    size_t n = (size_t)rows * cols;
    h.resize(n);
    for (size_t i = 0; i < n; i++) h[i] = (float)(i % 97) * 0.25f + 1.0f; // not zeros
    CHECK(cudaMalloc(&x, n * sizeof(float)));
    CHECK(cudaMalloc(&y, n * sizeof(float)));
    CHECK(cudaMalloc(&z, n * sizeof(float)));
    CHECK(cudaMemcpy(x, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(y, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  }

  void launch(cudaStream_t s) const {
#ifdef SOFTMAX
    softmax<<<rows, BLOCK, 0, s>>>(x, z, rows, cols);
#else
    const int per_block = BLOCK * VEC, grid = (cols + per_block - 1) / per_block;
    mul_add<<<grid, BLOCK, 0, s>>>(x, y, z, cols);
#endif
  }

  // The first wrong element's index, or -1.
  long long first_wrong(const std::vector<float> &out) const {
#ifdef SOFTMAX
    for (int r = 0; r < rows; r++) {
      const float *in = &h[(size_t)r * cols];
      double m = *std::max_element(in, in + cols), sum = 0;
      for (int c = 0; c < cols; c++) sum += std::exp(in[c] - m);
      for (int c = 0; c < cols; c++) {
        double want = std::exp(in[c] - m) / sum, got = out[(size_t)r * cols + c];
        if (!(std::fabs(got - want) <= 1e-4 * want + 1e-7)) return (long long)r * cols + c;
      }
    }
#else
    for (size_t i = 0; i < h.size(); i++)
      if (out[i] != h[i] * h[i] + h[i]) return (long long)i; // z = x * y + x
#endif
    return -1;
  }
};

int main(int argc, char **argv) {
  const int launches = 200, repeats = 30;
  problem p(argc, argv);
  float *flush;
  const size_t flush_bytes = 256u << 20; // over twice the H200's 60 MB L2
  CHECK(cudaMalloc(&flush, flush_bytes));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < launches; i++) p.launch(s);
  CHECK(cudaStreamEndCapture(s, &g));
  CHECK(cudaGraphInstantiate(&ge, g, 0));
  CHECK(cudaGraphLaunch(ge, s)); // warm-up
  CHECK(cudaStreamSynchronize(s));
  std::vector<float> out(p.h.size());
  CHECK(cudaMemcpy(out.data(), p.z, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  long long bad = p.first_wrong(out);
  if (bad >= 0) {
    fprintf(stderr, "wrong result at %lld: %g\n", bad, out[bad]);
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

/* kt_launch on a real GPU (run by tests/gpu/launch_h200.sh on the H200):
 * an application that owns its CUDA context and buffers launches the stored
 * winner of kernels/cuda/elementwise.cu through kt_launch on its own stream,
 * checks the result, and times the host cost of a launch.
 *
 *   launch_cuda DB N        (the database must hold a tuning for this N)
 *
 * Prints the configuration used (KTUNE_PRINT_AUTOTUNING), "correct" or the
 * first wrong element, and the host time per kt_launch (asynchronous
 * launches in rounds shorter than the launch queue, so the GPU's time is not
 * included; cuLaunchKernel's own cost is).
 * Exit status 0 when the output is right and the hot path beats Triton's
 * 18 us per launch by a wide margin. */
#include <cuda.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cuda_app.h"
#include "ktune.h"

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s DB N\n", argv[0]);
    return 2;
  }
  int n = atoi(argv[2]);
  kt_options o = {0};
  o.db_path = argv[1];
  o.miss_policy = KT_MISS_NEAREST; /* the stored winner of the run before; tests/gpu/miss_cuda.c tunes */
  kt_context *ctx;
  kt_kernel *k;
  kt_context_create(&o, &ctx);
  if (kt_kernel_load_file(ctx, "kernels/cuda/elementwise.cu", NULL, &k) != KT_OK) {
    fprintf(stderr, "%s\n", kt_errmsg(ctx));
    return 1;
  }

  CU(cuInit(0));
  CUdevice dev;
  CUcontext cuctx;
  CU(cuDeviceGet(&dev, 0));
  CU(cuDevicePrimaryCtxRetain(&cuctx, dev));
  CU(cuCtxSetCurrent(cuctx));
  CUstream stream;
  CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  size_t bytes = sizeof(float) * (size_t)n;
  float *hx = malloc(bytes), *hy = malloc(bytes), *hz = malloc(bytes);
  for (int i = 0; i < n; i++) {
    hx[i] = (float)(i % 1000) / 1000.0f;
    hy[i] = (float)(i % 7) - 3.0f;
  }
  CUdeviceptr x, y, z;
  CU(cuMemAlloc(&x, bytes));
  CU(cuMemAlloc(&y, bytes));
  CU(cuMemAlloc(&z, bytes));
  CU(cuMemcpyHtoD(x, hx, bytes));
  CU(cuMemcpyHtoD(y, hy, bytes));
  CU(cuMemsetD8(z, 0xff, bytes));

  int64_t sizes[] = {n};
  void *args[] = {(void *)(uintptr_t)x, (void *)(uintptr_t)y, (void *)(uintptr_t)z, &n};
  double t0 = now();
  int rc = kt_launch(k, sizes, args, stream); /* first call: lookup, compile, load */
  double first = now() - t0;
  if (rc != KT_OK) {
    fprintf(stderr, "kt_launch: %s: %s\n", kt_err_name(rc), kt_errmsg(ctx));
    return 1;
  }
  CU(cuStreamSynchronize(stream));
  CU(cuMemcpyDtoH(hz, z, bytes));
  int bad = -1;
  for (int i = 0; i < n && bad < 0; i++)
    if (fabsf(hz[i] - (hx[i] * hy[i] + hx[i])) > 1e-5f) bad = i;
  if (bad >= 0) {
    printf("WRONG at %d: got %g\n", bad, hz[bad]);
    return 1;
  }
  printf("correct (%d elements); first kt_launch %.3f ms\n", n, first * 1e3);

  /* Rounds shorter than the launch queue (about a thousand entries), with the
   * stream drained between them: the host time of a launch, not the GPU's. */
  enum { CALLS = 256, ROUNDS = 20 };
  double best = 1e9;
  for (int round = 0; round < ROUNDS; round++) {
    CU(cuStreamSynchronize(stream));
    t0 = now();
    for (int i = 0; i < CALLS; i++)
      if (kt_launch(k, sizes, args, stream) != KT_OK) return 1;
    double per = (now() - t0) / CALLS;
    if (per < best) best = per;
  }
  CU(cuStreamSynchronize(stream));
  printf("kt_launch host time per call, asynchronous on the caller's stream: %.2f us (best of %d rounds of %d)\n",
         best * 1e6, ROUNDS, CALLS);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  return best < 10e-6 ? 0 : 1;
}

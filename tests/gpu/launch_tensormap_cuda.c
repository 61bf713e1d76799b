/* kt_launch of a kernel with tensor-map parameters on a real GPU (run by
 * tests/gpu/launch_tensormap_h200.sh on the H200): an application that owns
 * its CUDA context and buffers launches the stored winners of
 * kernels/cuda/gemm_wgmma.cu (C = A B^T, bf16) through kt_launch at two
 * shapes, passing NULL for the two tensor maps: kt_launch builds them for
 * the caller's A and B. Each result is checked against a host product; the
 * shapes are launched in turn and again (maps cached per shape), then on a
 * second set of buffers at the first shape (a map is of one buffer, so it
 * must be built anew), and the host time of a launch at a known shape is
 * timed.
 *
 *   launch_tensormap_cuda DB M1 N1 K1 M2 N2 K2  (DB holds tunings of both)
 *
 * A and B are small integers, so every product is an exact integer in fp32
 * and the bf16 output is the exact value rounded once: the check allows
 * that rounding alone. C is poisoned (NaN) before each launch. Exit status
 * 0 when every launch is right. */
#include <cuda.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_app.h"
#include "ktune.h"

typedef struct problem {
  int m, n, k;
  uint16_t *ha, *hb, *hc; /* bf16 bits */
  float *ref;
  CUdeviceptr a, b, c;
} problem;

static uint16_t bf16_of_small_int(int v) {
  float f = (float)v; /* exact in bf16: |v| <= 4 */
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)(u >> 16);
}

static float float_of_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static void problem_make(problem *p, int m, int n, int k, unsigned seed) {
  *p = (problem){.m = m, .n = n, .k = k};
  p->ha = malloc(sizeof *p->ha * (size_t)m * k);
  p->hb = malloc(sizeof *p->hb * (size_t)n * k);
  p->hc = malloc(sizeof *p->hc * (size_t)m * n);
  p->ref = malloc(sizeof *p->ref * (size_t)m * n);
  int *ia = malloc(sizeof *ia * (size_t)m * k), *ib = malloc(sizeof *ib * (size_t)n * k);
  srand(seed);
  for (size_t i = 0; i < (size_t)m * k; i++) p->ha[i] = bf16_of_small_int(ia[i] = rand() % 9 - 4);
  for (size_t i = 0; i < (size_t)n * k; i++) p->hb[i] = bf16_of_small_int(ib[i] = rand() % 9 - 4);
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      long s = 0;
      for (int x = 0; x < k; x++) s += (long)ia[(size_t)i * k + x] * ib[(size_t)j * k + x];
      p->ref[(size_t)i * n + j] = (float)s;
    }
  free(ia);
  free(ib);
  CU(cuMemAlloc(&p->a, sizeof *p->ha * (size_t)m * k));
  CU(cuMemAlloc(&p->b, sizeof *p->hb * (size_t)n * k));
  CU(cuMemAlloc(&p->c, sizeof *p->hc * (size_t)m * n));
  CU(cuMemcpyHtoD(p->a, p->ha, sizeof *p->ha * (size_t)m * k));
  CU(cuMemcpyHtoD(p->b, p->hb, sizeof *p->hb * (size_t)n * k));
}

/* One kt_launch of P on STREAM, checked; 0 when right. */
static int launch_and_check(kt_kernel *kern, kt_context *ctx, problem *p, CUstream stream, const char *what) {
  CU(cuMemsetD16(p->c, 0x7fc1, (size_t)p->m * p->n)); /* a NaN: an element never written fails */
  int64_t sizes[3];
  for (int i = 0; i < 3; i++) {
    const char *name = kt_kernel_size_name(kern, i);
    sizes[i] = !strcmp(name, "M") ? p->m : !strcmp(name, "N") ? p->n : p->k;
  }
  void *args[] = {
      (void *)(uintptr_t)p->c, (void *)(uintptr_t)p->a, (void *)(uintptr_t)p->b, NULL, NULL, &p->m, &p->n, &p->k};
  double t0 = now();
  int rc = kt_launch(kern, sizes, args, stream);
  double host = now() - t0;
  if (rc != KT_OK) {
    fprintf(stderr, "FAIL %s: kt_launch: %s: %s\n", what, kt_err_name(rc), kt_errmsg(ctx));
    return 1;
  }
  CU(cuStreamSynchronize(stream));
  CU(cuMemcpyDtoH(p->hc, p->c, sizeof *p->hc * (size_t)p->m * p->n));
  for (size_t i = 0; i < (size_t)p->m * p->n; i++) {
    float got = float_of_bf16(p->hc[i]), want = p->ref[i];
    if (!(fabsf(got - want) <= fabsf(want) * (1.0f / 256))) { /* one bf16 rounding of an exact value */
      printf("FAIL %s: M=%d N=%d K=%d: C[%zu][%zu] is %g, not %g\n", what, p->m, p->n, p->k, i / p->n, i % p->n, got,
             want);
      return 1;
    }
  }
  printf("PASS %s: M=%d N=%d K=%d, %d elements right (kt_launch %.3f ms on the host)\n", what, p->m, p->n, p->k,
         p->m * p->n, host * 1e3);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 8) {
    fprintf(stderr, "usage: %s DB M1 N1 K1 M2 N2 K2\n", argv[0]);
    return 2;
  }
  kt_options o = {0};
  o.db_path = argv[1];
  o.miss_policy = KT_MISS_NEAREST; /* both shapes were tuned by the script */
  kt_context *ctx;
  kt_kernel *kern;
  kt_context_create(&o, &ctx);
  if (kt_kernel_load_file(ctx, "kernels/cuda/gemm_wgmma.cu", NULL, &kern) != KT_OK) {
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
  problem one, two, other;
  problem_make(&one, atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), 1);
  problem_make(&two, atoi(argv[5]), atoi(argv[6]), atoi(argv[7]), 2);
  problem_make(&other, one.m, one.n, one.k, 3);
  int bad = 0;
  bad += launch_and_check(kern, ctx, &one, stream, "first shape, first call");
  bad += launch_and_check(kern, ctx, &two, stream, "second shape, first call");
  bad += launch_and_check(kern, ctx, &one, stream, "first shape again");
  bad += launch_and_check(kern, ctx, &two, stream, "second shape again");
  bad += launch_and_check(kern, ctx, &other, stream, "first shape on other buffers");
  bad += launch_and_check(kern, ctx, &one, stream, "first shape, first buffers again");

  /* A known shape on known buffers: the maps come from the cache. Rounds
   * shorter than the launch queue, the stream drained between them. */
  enum { CALLS = 128, ROUNDS = 10 };
  int64_t sizes[3];
  for (int i = 0; i < 3; i++) {
    const char *name = kt_kernel_size_name(kern, i);
    sizes[i] = !strcmp(name, "M") ? one.m : !strcmp(name, "N") ? one.n : one.k;
  }
  void *args[] = {
      (void *)(uintptr_t)one.c, (void *)(uintptr_t)one.a, (void *)(uintptr_t)one.b, NULL, NULL, &one.m, &one.n, &one.k};
  double best = 1e9;
  for (int round = 0; round < ROUNDS && !bad; round++) {
    CU(cuStreamSynchronize(stream));
    double t0 = now();
    for (int i = 0; i < CALLS; i++)
      if (kt_launch(kern, sizes, args, stream) != KT_OK) return 1;
    double per = (now() - t0) / CALLS;
    if (per < best) best = per;
  }
  CU(cuStreamSynchronize(stream));
  if (!bad)
    printf("kt_launch host time per call with two tensor maps, a known shape: %.2f us (best of %d rounds of %d)\n",
           best * 1e6, ROUNDS, CALLS);
  kt_kernel_destroy(kern);
  kt_context_destroy(ctx);
  return bad ? 1 : 0;
}

/* KT_MISS_ONLINE in an application that owns its GPU (run by
 * tests/gpu/miss_online_h200.sh on the H200): cuInit, the primary context,
 * its own non-blocking stream and cuMemAlloc'ed buffers, then
 * kernels/cuda/elementwise.cu (z = x * y + x) through kt_launch on that
 * stream. Every call is timed by the application's own events around
 * kt_launch, and its output is checked against a host reference (z is
 * poisoned before each call), until the database holds the key's winner
 * (stored by the call that adopts it); then CALLS_AFTER more calls run the
 * winner, whose mean event time is the yardstick.
 *
 *   miss_online_cuda DB N
 *
 * Prints "result NAME VALUE" lines: calls_until_winner (the calls before
 * the first one that launches the winner: the fallback's while the helper
 * verifies, then one a candidate sample), first_call_s (host time),
 * winner_stored_after_s, tuning_calls_gpu_s (the event time of those calls),
 * winner_call_gpu_s (the mean of the later ones), extra_gpu_s (what the
 * tuning calls cost beyond as many calls of the winner: the only GPU time
 * online tuning adds on the application's side, the helper's verifying runs
 * on its copies). "correct" or the first wrong element of a call. Exit
 * status 0 when every output was right and the winner was stored. */
#include <cuda.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_app.h"
#include "ktune.h"

enum { CALLS_AFTER = 20 };

typedef struct app {
  kt_context *ctx;
  kt_kernel *k;
  CUstream stream;
  CUevent start, stop;
  CUdeviceptr x, y, z;
  float *hx, *hy, *hz;
  int n;
} app;

/* One kt_launch into a poisoned z, its output checked; its device time by
 * the application's events around it (*GPU) and its host time (returned). */
static double call(app *a, double *gpu, int *bad) {
  int64_t sizes[] = {a->n};
  void *args[] = {(void *)(uintptr_t)a->x, (void *)(uintptr_t)a->y, (void *)(uintptr_t)a->z, &a->n};
  size_t bytes = sizeof(float) * (size_t)a->n;
  CU(cuMemsetD8Async(a->z, 0xff, bytes, a->stream));
  CU(cuEventRecord(a->start, a->stream));
  double t0 = now();
  int rc = kt_launch(a->k, sizes, args, a->stream);
  double host = now() - t0;
  if (rc != KT_OK) {
    fprintf(stderr, "kt_launch: %s: %s\n", kt_err_name(rc), kt_errmsg(a->ctx));
    exit(1);
  }
  CU(cuEventRecord(a->stop, a->stream));
  CU(cuEventSynchronize(a->stop));
  float ms = 0;
  CU(cuEventElapsedTime(&ms, a->start, a->stop));
  *gpu = ms * 1e-3;
  CU(cuMemcpyDtoHAsync(a->hz, a->z, bytes, a->stream));
  CU(cuStreamSynchronize(a->stream));
  for (int i = 0; i < a->n && !*bad; i++)
    if (fabsf(a->hz[i] - (a->hx[i] * a->hy[i] + a->hx[i])) > 1e-5f) {
      printf("WRONG at %d: got %g\n", i, a->hz[i]);
      *bad = 1;
    }
  return host;
}

/* Whether the database holds a winner for the key. */
static bool stored(app *a) {
  char sizes[64];
  snprintf(sizes, sizeof sizes, "N=%d", a->n);
  kt_cache_filter f = {.kernel = "mul_add", .device = "cuda", .sizes = sizes};
  FILE *sink = fopen("/dev/null", "w");
  int rc = kt_cache_show(a->ctx, &f, "dflags", sink);
  fclose(sink);
  return rc == KT_OK;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s DB N\n", argv[0]);
    return 2;
  }
  app a = {0};
  a.n = atoi(argv[2]);
  if (a.n <= 0) {
    fprintf(stderr, "%s: N must be a positive element count, not \"%s\"\n", argv[0], argv[2]);
    return 2;
  }
  CU(cuInit(0));
  CUdevice dev;
  CUcontext cuctx;
  CU(cuDeviceGet(&dev, 0));
  CU(cuDevicePrimaryCtxRetain(&cuctx, dev));
  CU(cuCtxSetCurrent(cuctx));
  CU(cuStreamCreate(&a.stream, CU_STREAM_NON_BLOCKING));
  CU(cuEventCreate(&a.start, CU_EVENT_DEFAULT));
  CU(cuEventCreate(&a.stop, CU_EVENT_BLOCKING_SYNC));
  size_t bytes = sizeof(float) * (size_t)a.n;
  a.hx = malloc(bytes), a.hy = malloc(bytes), a.hz = malloc(bytes);
  for (int i = 0; i < a.n; i++) {
    a.hx[i] = (float)(i % 1000) / 1000.0f;
    a.hy[i] = (float)(i % 7) - 3.0f;
  }
  CU(cuMemAlloc(&a.x, bytes));
  CU(cuMemAlloc(&a.y, bytes));
  CU(cuMemAlloc(&a.z, bytes));
  CU(cuMemcpyHtoD(a.x, a.hx, bytes));
  CU(cuMemcpyHtoD(a.y, a.hy, bytes));

  kt_options o = {0};
  o.db_path = argv[1];
  o.quiet = 1;
  o.miss_policy = KT_MISS_ONLINE;
  kt_context_create(&o, &a.ctx);
  if (kt_kernel_load_file(a.ctx, "kernels/cuda/elementwise.cu", NULL, &a.k) != KT_OK) {
    fprintf(stderr, "%s\n", kt_errmsg(a.ctx));
    return 1;
  }
  int bad = 0, calls = 0;
  double gpu = 0, tuning_gpu = 0, t0 = now();
  printf("result first_call_s %.6f\n", call(&a, &gpu, &bad));
  tuning_gpu += gpu, calls++;
  bool won = false;
  while (!bad && !(won = stored(&a)) && now() - t0 < 120) {
    call(&a, &gpu, &bad);
    tuning_gpu += gpu, calls++;
  }
  printf("result winner_stored_after_s %.3f\n", now() - t0);
  printf("result calls_until_winner %d\n", calls);
  double winner_gpu = 0;
  for (int i = 0; i < CALLS_AFTER && !bad; i++) {
    call(&a, &gpu, &bad);
    winner_gpu += gpu / CALLS_AFTER;
  }
  printf("result tuning_calls_gpu_s %.6f\n", tuning_gpu);
  printf("result winner_call_gpu_s %.9f\n", winner_gpu);
  printf("result extra_gpu_s %.6f\n", tuning_gpu - calls * winner_gpu);
  if (!bad) printf("correct (%d calls, %d elements)\n", calls + CALLS_AFTER, a.n);
  if (!won) printf("no winner stored within 120 s\n");
  kt_kernel_destroy(a.k);
  kt_context_destroy(a.ctx);
  return bad || !won;
}

/* Tuning on a miss at production sizes, in an application that owns its GPU
 * and keeps it busy (run by bench/miss_sizes_h200.sh on the H200): the
 * program calls cuInit, makes the primary context current, creates its own
 * non-blocking stream, allocates an R x R f32 matrix and its transpose with
 * cuMemAlloc, and launches kernels/cuda/transpose.cu through kt_launch on
 * that stream.
 *
 *   miss_sizes DB tune|prepared|background|online R PERIOD_MS
 *
 * tune: KT_MISS_TUNE; the first call for key R x R, then for key
 * (R - 32) x R (a second key of the same kernel and nearly the same bytes,
 * tuned by the helper kept warm by the first).
 * prepared: the same after kt_kernel_prepare and a second of the
 * application's own start (the warm helper opens its device meanwhile), so
 * that the first key, too, goes to a warm helper.
 * background (KT_MISS_BACKGROUND) and online (KT_MISS_ONLINE, compiled in
 * only with -DKT_HAVE_MISS_ONLINE): the first call returns on the fallback,
 * then the application calls kt_launch every PERIOD_MS milliseconds (50: a
 * quiet application, 2: a busy one) until the call that runs the winner,
 * found as the first call after the database holds it (looked up every
 * 50 ms, so the figure is at most 50 ms late).
 * Then, for every mode, the winner's kernel time: the median of 51 launches
 * timed one by one with events, nothing else on the device.
 *
 * Every output checked is poisoned before (0xff bytes: NaN), and compared
 * element by element with the input's exact values: the first call's, the
 * call that adopted the winner's, and the last timed launch's.
 * Prints "result NAME VALUE" lines; exit status 0 when every output was
 * right. */
#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_app.h"
#include "ktune.h"

typedef struct app {
  kt_context *ctx;
  kt_kernel *k;
  CUstream stream;
  CUdeviceptr src, dst;
  int rows, cols; /* the key launched now */
  float *host;    /* one output's room */
} app;

/* The input's element (r, c): exact in f32, different for neighbours. */
static float value(long long r, long long c) { return (float)((r * 131 + c * 7) % 8191); }

static double launch(app *a) {
  const char *names[] = {"R", "C"};
  int64_t values[] = {a->rows, a->cols}, sizes[2];
  if (kt_kernel_sizes_by_name(a->k, 2, names, values, sizes) != KT_OK) {
    fprintf(stderr, "sizes: %s\n", kt_errmsg(a->ctx));
    exit(1);
  }
  void *args[] = {(void *)(uintptr_t)a->src, (void *)(uintptr_t)a->dst, &a->rows, &a->cols};
  double t0 = now();
  int rc = kt_launch(a->k, sizes, args, a->stream);
  double t = now() - t0;
  if (rc != KT_OK) {
    fprintf(stderr, "kt_launch: %s: %s\n", kt_err_name(rc), kt_errmsg(a->ctx));
    exit(1);
  }
  return t;
}

static void poison(app *a) {
  CU(cuMemsetD8Async(a->dst, 0xff, sizeof(float) * (size_t)a->rows * (size_t)a->cols, a->stream));
}

/* dst (cols x rows) against the input's values, then poisoned again. */
static int check(app *a, const char *what) {
  size_t n = (size_t)a->rows * (size_t)a->cols;
  CU(cuStreamSynchronize(a->stream));
  CU(cuMemcpyDtoH(a->host, a->dst, sizeof(float) * n));
  for (long long c = 0; c < a->cols; c++)
    for (long long r = 0; r < a->rows; r++)
      if (a->host[c * a->rows + r] != value(r, c)) {
        printf("WRONG (%s) at dst[%lld][%lld]: got %g, expected %g\n", what, c, r, a->host[c * a->rows + r],
               value(r, c));
        return 1;
      }
  printf("correct (%s, %d x %d)\n", what, a->rows, a->cols);
  poison(a);
  return 0;
}

/* Whether the database holds a winner for the key launched now. */
static bool stored(app *a) {
  char sizes[64];
  snprintf(sizes, sizeof sizes, "R=%d C=%d", a->rows, a->cols);
  kt_cache_filter f = {.kernel = "transpose", .device = "cuda", .sizes = sizes};
  FILE *sink = fopen("/dev/null", "w");
  int rc = kt_cache_show(a->ctx, &f, "dflags", sink);
  fclose(sink);
  return rc == KT_OK;
}

static void print_winner(app *a, const char *label) {
  char sizes[64];
  snprintf(sizes, sizeof sizes, "R=%d C=%d", a->rows, a->cols);
  kt_cache_filter f = {.kernel = "transpose", .device = "cuda", .sizes = sizes};
  printf("result %s_winner ", label);
  fflush(stdout);
  if (kt_cache_show(a->ctx, &f, "dflags", stdout) != KT_OK) printf("none\n");
  fflush(stdout);
}

/* Calls every PERIOD_S until the database holds the winner, then the call
 * that adopts it: seconds from T_FIRST (the first call) to its return. */
static double until_winner_runs(app *a, double period_s, double t_first, int *calls) {
  double next_look = now();
  *calls = 0;
  while (now() - t_first < 30) { /* a run that takes longer says -1 */
    double t = now();
    bool found = t >= next_look && stored(a);
    if (t >= next_look) next_look = t + 0.05;
    launch(a);
    ++*calls;
    if (found) return now() - t_first;
    double wait = period_s - (now() - t);
    if (wait > 0) usleep((useconds_t)(wait * 1e6));
  }
  return -1;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* The median kernel time of 51 launches, each between two events. */
static double winner_kernel_s(app *a) {
  enum { N = 51 };
  double t[N];
  CUevent e0, e1;
  CU(cuEventCreate(&e0, CU_EVENT_DEFAULT));
  CU(cuEventCreate(&e1, CU_EVENT_DEFAULT));
  for (int i = 0; i < N; i++) {
    CU(cuEventRecord(e0, a->stream));
    launch(a);
    CU(cuEventRecord(e1, a->stream));
    CU(cuEventSynchronize(e1));
    float ms = 0;
    CU(cuEventElapsedTime(&ms, e0, e1));
    t[i] = ms * 1e-3;
  }
  CU(cuEventDestroy(e0));
  CU(cuEventDestroy(e1));
  qsort(t, N, sizeof t[0], cmp_double);
  return t[N / 2];
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s DB tune|prepared|background|online R PERIOD_MS\n", argv[0]);
    return 2;
  }
  const char *mode = argv[2];
  kt_miss_policy policy = KT_MISS_TUNE;
  bool prepared = strcmp(mode, "prepared") == 0;
  if (strcmp(mode, "background") == 0) policy = KT_MISS_BACKGROUND;
#ifdef KT_HAVE_MISS_ONLINE
  else if (strcmp(mode, "online") == 0) policy = KT_MISS_ONLINE;
#endif
  else if (strcmp(mode, "tune") != 0 && !prepared) {
    fprintf(stderr, "miss_sizes: no mode %s in this build\n", mode);
    return 2;
  }
  int r = atoi(argv[3]);
  double period_s = atof(argv[4]) * 1e-3;
  app a = {0};
  a.rows = a.cols = r;

  /* The application owns the GPU before ktune sees it. */
  CU(cuInit(0));
  CUdevice dev;
  CUcontext cuctx;
  CU(cuDeviceGet(&dev, 0));
  CU(cuDevicePrimaryCtxRetain(&cuctx, dev));
  CU(cuCtxSetCurrent(cuctx));
  CU(cuStreamCreate(&a.stream, CU_STREAM_NON_BLOCKING));
  size_t n = (size_t)r * (size_t)r, bytes = sizeof(float) * n;
  a.host = malloc(bytes);
  if (!a.host) return 1;
  for (long long i = 0; i < r; i++)
    for (long long j = 0; j < r; j++) a.host[i * r + j] = value(i, j);
  CU(cuMemAlloc(&a.src, bytes));
  CU(cuMemAlloc(&a.dst, bytes));
  CU(cuMemcpyHtoD(a.src, a.host, bytes));
  poison(&a);
  printf("result tensor_mb %.0f\n", (double)bytes / 1048576.0);

  kt_options o = {0};
  o.db_path = argv[1];
  o.quiet = 1;
  o.miss_policy = policy;
  if (kt_context_create(&o, &a.ctx) != KT_OK ||
      kt_kernel_load_file(a.ctx, "kernels/cuda/transpose.cu", NULL, &a.k) != KT_OK) {
    fprintf(stderr, "%s\n", a.ctx ? kt_errmsg(a.ctx) : "no context");
    return 1;
  }
  int bad = 0;
  if ((policy != KT_MISS_TUNE || prepared) && kt_kernel_prepare(a.k) != KT_OK) {
    fprintf(stderr, "kt_kernel_prepare: %s\n", kt_errmsg(a.ctx));
    return 1;
  }
  if (prepared) usleep(1000 * 1000); /* the application's own start */
  double t_first = now();
  printf("result first_call_first_key_s %.6f\n", launch(&a));
  bad |= check(&a, "first call");
  if (policy == KT_MISS_TUNE) {
    a.rows = r - 32; /* the second key */
    printf("result first_call_second_key_s %.6f\n", launch(&a));
    bad |= check(&a, "second key");
    print_winner(&a, "second_key");
    a.rows = r;
  } else {
    int calls = 0;
    double after = until_winner_runs(&a, period_s, t_first, &calls);
    printf("result winner_runs_after_s %.3f\n", after);
    printf("result calls_until_winner %d\n", calls);
    bad |= check(&a, "winner adopted");
  }
  print_winner(&a, "first_key");
  printf("result winner_kernel_us %.2f\n", winner_kernel_s(&a) * 1e6);
  bad |= check(&a, "last timed launch");
  kt_kernel_destroy(a.k);
  kt_context_destroy(a.ctx);
  free(a.host);
  return bad;
}

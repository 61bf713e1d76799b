/* Tuning on a miss in an application that owns its GPU (run by
 * tests/gpu/miss_h200.sh and bench/miss_cost_h200.sh on the H200): the program
 * calls cuInit, makes the primary context current, creates its own
 * non-blocking stream, allocates with cuMemAlloc and fills its buffers, and
 * only then launches kernels/cuda/elementwise.cu through kt_launch on its
 * stream. The miss tunes in the helper process (ktune-tuner) on a copy of
 * this program's x and y; the output is checked against a host reference.
 *
 *   miss_cuda DB tune|background N1 N2
 *
 * tune: KT_MISS_TUNE; the first call for key N1 and then for key N2.
 * prepared: the same after kt_kernel_prepare, which also starts the warm
 * helper (it opens its device while this program goes on); the first call
 * comes right after prepare returns, so the helper's start may still
 * overlap it (the worst case for an application that prepares at start).
 * background: KT_MISS_BACKGROUND; the first call for N1 returns at once on
 * the fallback (the caller's x and y are snapshotted on its stream, not
 * copied before return), and the program overwrites x on its stream right
 * after it (then restores it): the outputs stay right, and the tuning ran
 * on x as it was at the call. Then calls until the winner is stored and
 * adopted, then the first call for key N2. In background mode the handle
 * is prepared (kt_kernel_prepare: the device, the database, the default
 * loaded) before the first call, and the time that takes is printed beside
 * the handle's creation.
 * Then for both: the host time of a later kt_launch beside a bare
 * cuLaunchKernel (an empty kernel of the same four arguments, from PTX), and
 * the cost of copying 1 GiB from the device into a memfd mapping, pageable
 * (before) and page-locked for the copy with cuMemHostRegister, registration
 * included (what a miss pays now per GiB of the caller's in/inout tensors).
 *
 * Prints "result NAME VALUE" lines for bench/miss_cost_h200.sh, and "correct" or
 * the first wrong element. Exit status 0 when every output was right. */
#include <cuda.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cuda_app.h"
#include "ktune.h"

typedef struct app {
  kt_context *ctx;
  kt_kernel *k;
  CUstream stream;
  CUdeviceptr x, y, z;
  float *hx, *hy, *hz;
} app;

/* One kt_launch for N elements; its host time (until it returned). */
static double launch(app *a, int n) {
  int64_t sizes[] = {n};
  void *args[] = {(void *)(uintptr_t)a->x, (void *)(uintptr_t)a->y, (void *)(uintptr_t)a->z, &n};
  double t0 = now();
  int rc = kt_launch(a->k, sizes, args, a->stream);
  double t = now() - t0;
  if (rc != KT_OK) {
    fprintf(stderr, "kt_launch: %s: %s\n", kt_err_name(rc), kt_errmsg(a->ctx));
    exit(1);
  }
  return t;
}

/* z = x * y + x for the first N elements, after poisoning z. */
static int check(app *a, int n, const char *what) {
  CU(cuStreamSynchronize(a->stream));
  CU(cuMemcpyDtoH(a->hz, a->z, sizeof(float) * (size_t)n));
  for (int i = 0; i < n; i++)
    if (fabsf(a->hz[i] - (a->hx[i] * a->hy[i] + a->hx[i])) > 1e-5f) {
      printf("WRONG (%s) at %d: got %g\n", what, i, a->hz[i]);
      return 1;
    }
  printf("correct (%s, %d elements)\n", what, n);
  CU(cuMemsetD8Async(a->z, 0xff, sizeof(float) * (size_t)n, a->stream));
  return 0;
}

/* Whether the database holds a winner for N (the background tuning ended). */
static int stored(app *a, int n) {
  char sizes[64];
  snprintf(sizes, sizeof sizes, "N=%d", n);
  kt_cache_filter f = {.kernel = "mul_add", .device = "cuda", .sizes = sizes};
  FILE *sink = fopen("/dev/null", "w");
  int rc = kt_cache_show(a->ctx, &f, "dflags", sink);
  fclose(sink);
  return rc == KT_OK;
}

/* Best host time per call over rounds shorter than the launch queue, of
 * kt_launch (*KT) and of a bare cuLaunchKernel of BARE (*BARE), their rounds
 * alternated: measured one loop after the other, the two drifted apart by
 * up to 0.9 us between runs on the H200. */
static void host_times(app *a, int n, CUfunction bare, unsigned grid, double *kt, double *bare_s) {
  enum { CALLS = 256, ROUNDS = 20 };
  int64_t sizes[] = {n};
  void *args[] = {(void *)(uintptr_t)a->x, (void *)(uintptr_t)a->y, (void *)(uintptr_t)a->z, &n};
  void *params[] = {&a->x, &a->y, &a->z, &n};
  *kt = *bare_s = 1e9;
  for (int round = 0; round < 2 * ROUNDS; round++) {
    bool is_bare = round % 2;
    CU(cuStreamSynchronize(a->stream));
    double t0 = now();
    for (int i = 0; i < CALLS; i++) {
      if (is_bare) CU(cuLaunchKernel(bare, grid, 1, 1, 128, 1, 1, 0, a->stream, params, NULL));
      else if (kt_launch(a->k, sizes, args, a->stream) != KT_OK) exit(1);
    }
    double per = (now() - t0) / CALLS, *best = is_bare ? bare_s : kt;
    if (per < *best) *best = per;
  }
  CU(cuStreamSynchronize(a->stream));
}

static const char noop_ptx[] = ".version 7.0\n.target sm_50\n.address_size 64\n"
                               ".visible .entry noop(.param .u64 a, .param .u64 b, .param .u64 c, .param .u32 n)\n"
                               "{\n  ret;\n}\n";

/* Seconds to copy 1 GiB from the device into a memfd mapping, as a miss
 * copies the caller's tensors for the helper: pageable memory, or (LOCKED)
 * registered for the copy as the CUDA backend's snapshot_read does. */
static double copy_gib(bool locked) {
  size_t bytes = (size_t)1 << 30;
  CUdeviceptr d;
  CU(cuMemAlloc(&d, bytes));
  CU(cuMemsetD8(d, 1, bytes));
  int fd = memfd_create("copy", 0);
  if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) return -1;
  void *h = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  double t0 = now();
  bool registered = locked && cuMemHostRegister(h, bytes, 0) == CUDA_SUCCESS;
  if (locked && !registered) printf("cuMemHostRegister refused the memfd mapping: pageable copy\n");
  CU(cuMemcpyDtoH(h, d, bytes));
  if (registered) CU(cuMemHostUnregister(h));
  double t = now() - t0;
  munmap(h, bytes);
  close(fd);
  CU(cuMemFree(d));
  return t;
}

int main(int argc, char **argv) {
  if (argc < 5 ||
      (strcmp(argv[2], "tune") != 0 && strcmp(argv[2], "prepared") != 0 && strcmp(argv[2], "background") != 0)) {
    fprintf(stderr, "usage: %s DB tune|prepared|background N1 N2\n", argv[0]);
    return 2;
  }
  bool background = strcmp(argv[2], "background") == 0, prepared = strcmp(argv[2], "prepared") == 0;
  int n1 = atoi(argv[3]), n2 = atoi(argv[4]), nmax = n1 > n2 ? n1 : n2;
  app a = {0};

  /* The application owns the GPU before ktune sees it. */
  CU(cuInit(0));
  CUdevice dev;
  CUcontext cuctx;
  CU(cuDeviceGet(&dev, 0));
  CU(cuDevicePrimaryCtxRetain(&cuctx, dev));
  CU(cuCtxSetCurrent(cuctx));
  CU(cuStreamCreate(&a.stream, CU_STREAM_NON_BLOCKING));
  size_t bytes = sizeof(float) * (size_t)nmax;
  a.hx = malloc(bytes), a.hy = malloc(bytes), a.hz = malloc(bytes);
  for (int i = 0; i < nmax; i++) {
    a.hx[i] = (float)(i % 1000) / 1000.0f;
    a.hy[i] = (float)(i % 7) - 3.0f;
  }
  CU(cuMemAlloc(&a.x, bytes));
  CU(cuMemAlloc(&a.y, bytes));
  CU(cuMemAlloc(&a.z, bytes));
  CU(cuMemcpyHtoDAsync(a.x, a.hx, bytes, a.stream));
  CU(cuMemcpyHtoDAsync(a.y, a.hy, bytes, a.stream)); /* still in flight at the miss: it must wait */
  CU(cuMemsetD8Async(a.z, 0xff, bytes, a.stream));

  kt_options o = {0};
  o.db_path = argv[1];
  o.quiet = 1;
  o.miss_policy = background ? KT_MISS_BACKGROUND : KT_MISS_TUNE;
  double t_ctx = now();
  kt_context_create(&o, &a.ctx);
  if (kt_kernel_load_file(a.ctx, "kernels/cuda/elementwise.cu", NULL, &a.k) != KT_OK) {
    fprintf(stderr, "%s\n", kt_errmsg(a.ctx));
    return 1;
  }
  printf("result %s_handle_creation_s %.6f\n", argv[2], now() - t_ctx);
  if (background || prepared) { /* the key-independent work of a miss, before the first call */
    double t0 = now();
    if (kt_kernel_prepare(a.k) != KT_OK) {
      fprintf(stderr, "kt_kernel_prepare: %s\n", kt_errmsg(a.ctx));
      return 1;
    }
    printf("result %s_prepare_s %.6f\n", argv[2], now() - t0);
  }
  int bad = 0;
  double first = launch(&a, n1);
  printf("result %s_first_call_first_key_s %.6f\n", argv[2], first);
  if (background) { /* the next input, on the stream behind the call: the tuning must not see it */
    CU(cuMemsetD32Async(a.x, 0x7fc00000u /* NaN */, (size_t)nmax, a.stream));
    CU(cuMemcpyHtoDAsync(a.x, a.hx, bytes, a.stream));
  }
  bad |= check(&a, n1, "first call");
  if (background) {
    double t0 = now();
    while (!stored(&a, n1) && now() - t0 < 120) {
      launch(&a, n1);
      usleep(10000);
    }
    printf("result background_winner_stored_after_s %.3f\n", now() - t0);
    double adopt = launch(&a, n1); /* loads the winner */
    printf("result background_adopting_call_s %.6f\n", adopt);
    bad |= check(&a, n1, "winner adopted");
    double second = launch(&a, n2); /* the handle open, the fallback loaded */
    printf("result background_first_call_second_key_s %.6f\n", second);
    bad |= check(&a, n2, "second key");
    t0 = now(); /* its tuning ends before the later calls are timed */
    while (!stored(&a, n2) && now() - t0 < 120) usleep(10000);
  } else {
    double second = launch(&a, n2);
    printf("result %s_first_call_second_key_s %.6f\n", argv[2], second);
    bad |= check(&a, n2, "second key");
  }
  CUmodule mod;
  CUfunction noop;
  CU(cuModuleLoadData(&mod, noop_ptx));
  CU(cuModuleGetFunction(&noop, mod, "noop"));
  double kt, bare;
  host_times(&a, n1, noop, (unsigned)((n1 + 1023) / 1024), &kt, &bare);
  printf("result %s_later_call_host_us %.3f\n", argv[2], kt * 1e6);
  printf("result bare_cuLaunchKernel_host_us %.3f\n", bare * 1e6);
  printf("result %s_later_call_over_bare_us %.3f\n", argv[2], (kt - bare) * 1e6);
  bad |= check(&a, n1, "later calls");
  printf("result copy_device_to_memfd_s_per_gib %.4f\n", copy_gib(false));
  printf("result copy_device_to_memfd_locked_s_per_gib %.4f\n", copy_gib(true));
  kt_kernel_destroy(a.k);
  kt_context_destroy(a.ctx);
  return bad;
}

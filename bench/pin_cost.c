/* What page-locking the worker's scratch costs (src/device/worker.c,
 * pin_scratch: every check downloads through it, and a warm helper's first
 * key waited 0.11 s for 256 MB on the H100 before the reference's download),
 * and how much of that is the pages' first touch: MB megabytes (default 256)
 * from posix_memalign, page-locked by cuMemHostRegister
 *   fresh      as they come (the driver faults every page in, on one thread);
 *   touched    after a write of every page on THREADS threads (default: every core);
 *   populated  after one MADV_POPULATE_WRITE call;
 *   huge       after MADV_HUGEPAGE, then as "touched";
 * and, for comparison, cuMemHostAlloc. Each line: how, seconds to prepare
 * the pages, seconds to lock them, their sum; the median of 3 runs each.
 *
 *   cc -O2 -pthread -I$CUDA/include -o /tmp/pin_cost bench/pin_cost.c -L$CUDA/lib64/stubs -lcuda
 *   /tmp/pin_cost [MB] [THREADS]
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum { RUNS = 3 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct part {
  char *base;
  size_t begin, end;
} part;

static void *touch_part(void *arg) {
  part *p = arg;
  for (size_t i = p->begin; i < p->end; i += 4096) p->base[i] = 0;
  return NULL;
}

static void touch(char *buf, size_t bytes, int threads) {
  pthread_t t[256];
  part p[256];
  size_t per = (bytes / (size_t)threads + 4095) & ~(size_t)4095;
  int n = 0;
  for (size_t b = 0; b < bytes && n < threads; b += per, n++) {
    p[n] = (part){buf, b, b + per < bytes ? b + per : bytes};
    pthread_create(&t[n], NULL, touch_part, &p[n]);
  }
  for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

enum how { FRESH, TOUCHED, POPULATED, HUGE, HOSTALLOC };
static const char *const names[] = {"fresh", "touched", "populated", "huge", "cuMemHostAlloc"};

/* One run of HOW: *PREP_S and *LOCK_S. */
static int one(enum how how, size_t bytes, int threads, double *prep_s, double *lock_s) {
  void *buf = NULL;
  double t0 = now();
  if (how == HOSTALLOC) {
    *prep_s = 0;
    if (cuMemHostAlloc(&buf, bytes, 0) != CUDA_SUCCESS) return 1;
    *lock_s = now() - t0;
    cuMemFreeHost(buf);
    return 0;
  }
  if (posix_memalign(&buf, 4096, bytes) != 0) return 1;
  if (how == HUGE) madvise(buf, bytes, MADV_HUGEPAGE);
  if (how == TOUCHED || how == HUGE) touch(buf, bytes, threads);
  if (how == POPULATED && madvise(buf, bytes, MADV_POPULATE_WRITE) != 0) perror("MADV_POPULATE_WRITE");
  double t1 = now();
  CUresult r = cuMemHostRegister(buf, bytes, 0);
  *prep_s = t1 - t0;
  *lock_s = now() - t1;
  if (r == CUDA_SUCCESS) cuMemHostUnregister(buf);
  free(buf);
  return r != CUDA_SUCCESS;
}

int main(int argc, char **argv) {
  size_t mb = argc > 1 ? (size_t)atol(argv[1]) : 256;
  int threads = argc > 2 ? atoi(argv[2]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (threads < 1) threads = 1;
  if (threads > 256) threads = 256;
  CUdevice dev;
  CUcontext ctx;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
      cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
    fprintf(stderr, "pin_cost: no CUDA device\n");
    return 1;
  }
  printf("pin_cost: %zu MB, %d threads\n", mb, threads);
  for (int h = FRESH; h <= HOSTALLOC; h++) {
    double prep[RUNS], lock[RUNS], sum[RUNS];
    for (int i = 0; i < RUNS; i++) {
      if (one((enum how)h, mb << 20, threads, &prep[i], &lock[i])) {
        printf("%-15s failed\n", names[h]);
        goto next;
      }
      sum[i] = prep[i] + lock[i];
    }
    qsort(prep, RUNS, sizeof *prep, cmp);
    qsort(lock, RUNS, sizeof *lock, cmp);
    qsort(sum, RUNS, sizeof *sum, cmp);
    printf("%-15s prepare %.4f s  lock %.4f s  sum %.4f s\n", names[h], prep[RUNS / 2], lock[RUNS / 2], sum[RUNS / 2]);
  next:;
  }
  return 0;
}

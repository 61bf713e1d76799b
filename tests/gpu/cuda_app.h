/* What the H200 test programs that play a CUDA application share
 * (launch_cuda.c, miss_cuda.c, tune_in_cuda.c): a driver call that must
 * succeed, and a monotonic clock. Header-only: each program is compiled
 * alone by its script. */
#ifndef KTUNE_TESTS_GPU_CUDA_APP_H
#define KTUNE_TESTS_GPU_CUDA_APP_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* CALL, or the program exits 1 naming it, its line and the driver's error. */
#define CU(call)                                                                \
  do {                                                                          \
    CUresult r_ = (call);                                                       \
    if (r_ != CUDA_SUCCESS) {                                                   \
      const char *s_ = "?";                                                     \
      cuGetErrorName(r_, &s_);                                                  \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, s_); \
      exit(1);                                                                  \
    }                                                                           \
  } while (0)

static inline double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif

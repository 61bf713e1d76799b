/* Host time of one kt_launch on a stored shape against a direct call of the
 * same function, on the CPU backend.
 *
 *   build/launch_overhead [CALLS]     (calls per round; default 10000)
 *
 * The kernel does one addition, so what is measured is the launch path:
 * the table lookup, the argument array, the backend's run() and the call
 * into the loaded shared object. The baseline calls an identical function
 * compiled into this program through a pointer it cannot inline. Short
 * rounds, many of them: the best round is the one least disturbed by other
 * work on the machine, the median says what a loaded machine gives. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ktune.h"

static const char *source = "// @autotune(U in [1, 2])\n"
                            "// @kernel bump(x: inout tensor<i32>[1], n: i32 = N)\n"
                            "// @dims(N = 1)\n"
                            "void bump(int *x, int n) { x[0] += n * U; }\n";

static void bump(int *x, int n) { x[0] += n; }

enum { ROUNDS = 201 };

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fail(kt_context *ctx, const char *what, int rc) {
  fprintf(stderr, "launch_overhead: %s: %s: %s\n", what, kt_strerror(rc), kt_errmsg(ctx));
  return 1;
}

int main(int argc, char **argv) {
  long calls = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
  if (calls <= 0 || calls > 1000000) {
    fprintf(stderr, "usage: launch_overhead [CALLS]   (1 to 1000000)\n");
    return 2;
  }
  kt_options o = {0};
  o.no_db = 1;
  o.quiet = 1;
  o.miss_policy = KT_MISS_DEFAULT;
  kt_context *ctx = NULL;
  kt_kernel *k = NULL;
  kt_context_create(&o, &ctx);
  int rc = kt_kernel_load_string(ctx, "bump.c", source, "c", NULL, &k);
  if (rc != KT_OK) return fail(ctx, "load", rc);
  int x = 0, n = 1;
  int64_t sizes[] = {1};
  void *args[] = {&x, &n};
  double t0 = now();
  rc = kt_launch(k, sizes, args, NULL); /* the miss: compile and load */
  if (rc != KT_OK) return fail(ctx, "first launch", rc);
  double first = now() - t0;
  void (*volatile direct)(int *, int) = bump;
  double *launch = calloc(ROUNDS, sizeof *launch), *plain = calloc(ROUNDS, sizeof *plain);
  for (int round = 0; round < ROUNDS; round++) {
    double a = now();
    for (long i = 0; i < calls; i++) kt_launch(k, sizes, args, NULL);
    double b = now();
    for (long i = 0; i < calls; i++) direct(&x, n);
    double c = now();
    launch[round] = (b - a) / (double)calls;
    plain[round] = (c - b) / (double)calls;
  }
  qsort(launch, ROUNDS, sizeof *launch, by_value);
  qsort(plain, ROUNDS, sizeof *plain, by_value);
  long long expected = 1 + 2LL * ROUNDS * calls; /* every call really ran */
  printf("first launch (compile and load): %.1f ms\n", first * 1e3);
  printf("%d rounds of %ld calls; per call, best and median round:\n", ROUNDS, calls);
  printf("  kt_launch, stored shape: %6.1f ns  %6.1f ns\n", launch[0] * 1e9, launch[ROUNDS / 2] * 1e9);
  printf("  direct call:             %6.1f ns  %6.1f ns\n", plain[0] * 1e9, plain[ROUNDS / 2] * 1e9);
  printf("  overhead of kt_launch:   %6.1f ns  %6.1f ns\n", (launch[0] - plain[0]) * 1e9,
         (launch[ROUNDS / 2] - plain[ROUNDS / 2]) * 1e9);
  free(launch);
  free(plain);
  kt_kernel_destroy(k);
  kt_context_destroy(ctx);
  if (x != expected) {
    fprintf(stderr, "launch_overhead: counter is %d, expected %lld\n", x, expected);
    return 1;
  }
  return 0;
}

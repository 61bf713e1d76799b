/* Using ktune from C: launch the shipped matrix multiply (kernels/c/matmul.c)
 * through kt_launch, on the CPU backend.
 *
 *   build/launch_matmul [KERNEL_FILE]      (default: kernels/c/matmul.c)
 *
 * The results database is $KTUNE_DB when set (run it twice with the same
 * KTUNE_DB: the second run tunes nothing), else a temporary one removed at
 * the end. Set KTUNE_PRINT_AUTOTUNING=1 to see each decision on stderr.
 *
 * What it does:
 *   1. shape A (first call): no stored winner, so the context's miss policy
 *      KT_MISS_TUNE tunes now, in the helper process ktune-tuner, on this
 *      program's own matrices (a small budget keeps it short), stores the
 *      winner and launches it;
 *   2. shape A again: the in-memory table, no lookup anywhere else;
 *   3. shape A through a second kernel handle: the stored winner from the
 *      database, instantly;
 *   4. shape B through a context with KT_MISS_NEAREST: the winner of the
 *      nearest stored size, without tuning.
 * Every result is checked against a naive reference. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ktune.h"

typedef struct matrices {
  int m, n, k;
  float *a, *b, *c, *ref;
} matrices;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fill(float *x, size_t count, unsigned seed) {
  for (size_t i = 0; i < count; i++) {
    seed = seed * 1103515245u + 12345u;
    x[i] = (float)((seed >> 16) % 2001) / 1000.0f - 1.0f;
  }
}

static void reference(matrices *x) {
  for (int i = 0; i < x->m; i++)
    for (int j = 0; j < x->n; j++) {
      double s = 0;
      for (int p = 0; p < x->k; p++) s += (double)x->a[(size_t)i * x->k + p] * x->b[(size_t)p * x->n + j];
      x->ref[(size_t)i * x->n + j] = (float)s;
    }
}

static matrices make(int m, int n, int k) {
  matrices x = {m, n, k, NULL, NULL, NULL, NULL};
  x.a = malloc(sizeof(float) * (size_t)m * (size_t)k);
  x.b = malloc(sizeof(float) * (size_t)k * (size_t)n);
  x.c = malloc(sizeof(float) * (size_t)m * (size_t)n);
  x.ref = malloc(sizeof(float) * (size_t)m * (size_t)n);
  if (!x.a || !x.b || !x.c || !x.ref) {
    fprintf(stderr, "launch_matmul: out of memory\n");
    exit(1);
  }
  fill(x.a, (size_t)m * k, 1);
  fill(x.b, (size_t)k * n, 2);
  reference(&x);
  return x;
}

static void release(matrices *x) {
  free(x->a);
  free(x->b);
  free(x->c);
  free(x->ref);
}

/* The largest difference from the reference, relative to the sum's scale. */
static double max_error(const matrices *x) {
  double worst = 0;
  for (size_t i = 0; i < (size_t)x->m * x->n; i++) {
    double e = fabs((double)x->c[i] - x->ref[i]) / (1.0 + fabs(x->ref[i]));
    if (e > worst) worst = e;
  }
  return worst;
}

/* One kt_launch of matmul(a, b, c, m, n, k); the sizes by name, which
 * kt_kernel_sizes_by_name puts in the kernel's order (M, K, N). */
static int launch(kt_kernel *kern, matrices *x, double *seconds) {
  int64_t sizes[3];
  const char *names[] = {"M", "N", "K"};
  const int64_t values[] = {x->m, x->n, x->k};
  if (kt_kernel_sizes_by_name(kern, 3, names, values, sizes) != KT_OK) return KT_INVALID;
  void *args[] = {x->a, x->b, x->c, &x->m, &x->n, &x->k};
  memset(x->c, 0xff, sizeof(float) * (size_t)x->m * x->n); /* NaNs: an unwritten element shows */
  double t0 = now();
  int rc = kt_launch(kern, sizes, args, NULL);
  *seconds = now() - t0;
  return rc;
}

static int step(const char *what, kt_context *ctx, kt_kernel *kern, matrices *x) {
  double secs;
  int rc = launch(kern, x, &secs);
  if (rc != KT_OK) {
    fprintf(stderr, "launch_matmul: %s: %s: %s\n", what, kt_strerror(rc), kt_errmsg(ctx));
    return 1;
  }
  double err = max_error(x);
  printf("%-44s %dx%dx%d  %10.3f ms  max error %.1e %s\n", what, x->m, x->n, x->k, secs * 1e3, err,
         err < 1e-4 ? "ok" : "WRONG");
  return err < 1e-4 ? 0 : 1;
}

static kt_context *open_context(const char *db, kt_miss_policy policy, const kt_tune_options *tune) {
  kt_options o = {0};
  o.db_path = db; /* NULL: $KTUNE_DB */
  o.quiet = 1;
  o.miss_policy = policy;
  o.miss_tune = tune;
  kt_context *ctx = NULL;
  kt_context_create(&o, &ctx);
  return ctx;
}

static kt_kernel *load(kt_context *ctx, const char *path) {
  kt_kernel *k = NULL;
  if (kt_kernel_load_file(ctx, path, "matmul", &k) != KT_OK) fprintf(stderr, "launch_matmul: %s\n", kt_errmsg(ctx));
  return k;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "kernels/c/matmul.c"; /* from the repository root */
  /* A database of our own unless the caller chose one. */
  char tmpdir[] = "/tmp/launch_matmul-XXXXXX", dbfile[64] = "";
  const char *db = getenv("KTUNE_DB");
  if (!db || !*db) {
    if (!mkdtemp(tmpdir)) return perror("mkdtemp"), 1;
    snprintf(dbfile, sizeof dbfile, "%s/results.db", tmpdir);
    db = dbfile;
  }
  printf("results database: %s\n", db);
  /* A tuning on a miss measures at most 12 configurations besides the
   * default here, to keep the example quick. */
  kt_tune_options tune = {.budget_configs = 12};
  kt_context *ctx = open_context(db, KT_MISS_TUNE, &tune);
  kt_context *near = open_context(db, KT_MISS_NEAREST, NULL);
  kt_kernel *first = load(ctx, path), *second = load(ctx, path), *other = load(near, path);
  int fails = !first || !second || !other;
  matrices a = make(96, 128, 64), b = make(80, 160, 64);
  if (!fails) {
    fails += step("shape A, first call (tunes on a miss):", ctx, first, &a);
    fails += step("shape A again (in-memory table):", ctx, first, &a);
    fails += step("shape A, second handle (stored winner):", ctx, second, &a);
    fails += step("shape B, nearest-size policy:", near, other, &b);
  }
  release(&a);
  release(&b);
  kt_kernel_destroy(first);
  kt_kernel_destroy(second);
  kt_kernel_destroy(other);
  kt_context_destroy(ctx);
  kt_context_destroy(near);
  if (dbfile[0]) {
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (int i = 0; i < 4; i++) {
      char p[96];
      snprintf(p, sizeof p, "%s%s", dbfile, suffixes[i]);
      unlink(p);
    }
    rmdir(tmpdir);
  }
  printf("%s\n", fails ? "FAILED" : "all results match the reference");
  return fails ? 1 : 0;
}

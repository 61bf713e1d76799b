/* Model-based search with a random-forest surrogate (in the manner of
 * SMAC): after a few random configurations, every proposal refits a forest
 * of regression trees on the log-times measured so far (choice indices as
 * ordinal features, bootstrap samples, random feature subsets), and picks,
 * among fresh candidates (random ones and the one-choice neighbours of the
 * best few), the one with the largest expected improvement; the spread of
 * the trees' predictions stands for the model's uncertainty. Failures are
 * taught as a log-time worse than anything measured, so the model learns
 * where not to go. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "rforest.h"
#include "strategies.h"

enum {
  RF_TREES = 24,
  RF_MIN_LEAF = 2,
  RF_MAX_DEPTH = 20,
  RF_INIT = 10,          /* random configurations before the model */
  RF_RANDOM_CAND = 300,  /* random candidates per proposal */
  RF_TOP = 5,            /* best configurations whose neighbours are candidates */
  RF_MAX_CAND = 4096,
};
#define RF_FAIL_MARGIN 1.0 /* failures: worst log-time + this */

typedef struct forest {
  kt__search_base b;
  int nfeat;
  int levels[KT__SEARCH_MAX_DIMS];
  /* observations */
  unsigned char *x; /* n rows of nfeat levels */
  double *y;        /* cost, INFINITY for failures */
  uint64_t *idx;    /* the configuration of each row */
  int n, cap;
  kt__rforest rf;
  double *yfit; /* y with failures replaced */
  uint64_t cand[RF_MAX_CAND];
} forest;

static void *forest_create(const kt__space *space, uint64_t seed, long budget) {
  forest *f = calloc(1, sizeof *f);
  if (!f || !kt__base_init(&f->b, space, seed, budget)) {
    free(f);
    return NULL;
  }
  f->nfeat = f->b.nfree;
  for (int i = 0; i < f->nfeat; i++) {
    int n = kt__space_nchoices(space, f->b.free_dims[i]);
    f->levels[i] = n < KT__RF_LEVELS ? n : KT__RF_LEVELS;
  }
  kt__rf_init(&f->rf, f->nfeat, f->levels, RF_TREES, RF_MIN_LEAF, RF_MAX_DEPTH);
  return f;
}

static void features(const forest *f, uint64_t index, unsigned char *x) {
  int ch[KT__SEARCH_MAX_DIMS];
  kt__space_decode(f->b.space, index, ch);
  for (int i = 0; i < f->nfeat; i++) {
    int d = f->b.free_dims[i], n = kt__space_nchoices(f->b.space, d);
    x[i] = (unsigned char)(n <= KT__RF_LEVELS ? ch[d] : (int)((int64_t)ch[d] * KT__RF_LEVELS / n));
  }
}

static void fit(forest *f) {
  double worst = -INFINITY;
  for (int i = 0; i < f->n; i++)
    if (isfinite(f->y[i]) && f->y[i] > worst) worst = f->y[i];
  for (int i = 0; i < f->n; i++) f->yfit[i] = isfinite(f->y[i]) ? f->y[i] : worst + RF_FAIL_MARGIN;
  kt__rf_fit(&f->rf, f->x, f->yfit, f->n, &f->b.rng);
}

/* ---- proposing ---- */

/* Indices of the RF_TOP best finite observations, best first. */
static int top_rows(const forest *f, int *top) {
  int k = 0;
  for (int i = 0; i < f->n; i++) {
    if (!isfinite(f->y[i])) continue;
    int j = k < RF_TOP ? k++ : RF_TOP;
    if (j == RF_TOP && f->y[i] >= f->y[top[RF_TOP - 1]]) continue;
    if (j == RF_TOP) j = RF_TOP - 1;
    while (j > 0 && f->y[top[j - 1]] > f->y[i]) {
      top[j] = top[j - 1];
      j--;
    }
    top[j] = i;
  }
  return k;
}

static int candidates(forest *f) {
  int nc = 0, top[RF_TOP];
  int ntop = top_rows(f, top);
  for (int t = 0; t < ntop && nc < RF_MAX_CAND; t++)
    nc += kt__base_hamming1(&f->b, f->idx[top[t]], f->cand + nc, RF_MAX_CAND - nc);
  for (int r = 0; r < RF_RANDOM_CAND && nc < RF_MAX_CAND; r++)
    if (kt__base_random(&f->b, &f->cand[nc])) nc++;
  return nc;
}

static bool forest_one(forest *f, uint64_t *out) {
  if (f->b.proposed < RF_INIT || f->n < 2 || f->b.best == UINT64_MAX) return kt__base_random(&f->b, out);
  fit(f);
  int nc = candidates(f);
  if (nc == 0) return kt__base_random(&f->b, out);
  double best_ei = -INFINITY;
  unsigned char x[KT__SEARCH_MAX_DIMS];
  for (int c = 0; c < nc; c++) {
    double mean, sd;
    features(f, f->cand[c], x);
    kt__rf_predict(&f->rf, x, &mean, &sd);
    double ei = kt__expected_improvement(f->b.best_cost, mean, sd);
    if (ei > best_ei) {
      best_ei = ei;
      *out = f->cand[c];
    }
  }
  return true;
}

static int forest_ask(void *state, uint64_t *out, int max) {
  forest *f = state;
  int n = 0;
  while (n < max && forest_one(f, &out[n])) {
    kt__base_take(&f->b, out[n]);
    n++;
  }
  return n;
}

static void grow(forest *f) {
  f->cap = f->cap ? 2 * f->cap : 64;
  f->x = kt__xreallocarray(f->x, (size_t)f->cap, (size_t)(f->nfeat ? f->nfeat : 1));
  f->y = kt__xreallocarray(f->y, (size_t)f->cap, sizeof *f->y);
  f->idx = kt__xreallocarray(f->idx, (size_t)f->cap, sizeof *f->idx);
  f->yfit = kt__xreallocarray(f->yfit, (size_t)f->cap, sizeof *f->yfit);
}

static void forest_tell(void *state, uint64_t index, kt__status status, double seconds) {
  forest *f = state;
  double c = kt__base_tell(&f->b, index, status, seconds);
  if (f->n == f->cap) grow(f);
  features(f, index, f->x + (size_t)f->n * (size_t)f->nfeat);
  f->y[f->n] = c;
  f->idx[f->n] = index;
  f->n++;
}

static void forest_destroy(void *state) {
  forest *f = state;
  kt__base_free(&f->b);
  free(f->x);
  free(f->y);
  free(f->yfit);
  free(f->idx);
  kt__rf_free(&f->rf);
  free(f);
}

const kt__strategy_ops kt__strategy_forest = {
    .name = "forest",
    .summary = "model-based: a random-forest surrogate of log-time, expected improvement over nearby and random candidates",
    .create = forest_create,
    .ask = forest_ask,
    .tell = forest_tell,
    .destroy = forest_destroy,
};

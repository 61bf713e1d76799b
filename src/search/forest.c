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
#include "strategies.h"

enum {
  RF_TREES = 24,
  RF_MIN_LEAF = 2,
  RF_MAX_DEPTH = 20,
  RF_LEVELS = 64,        /* a dim with more choices is bucketed */
  RF_INIT = 10,          /* random configurations before the model */
  RF_RANDOM_CAND = 300,  /* random candidates per proposal */
  RF_TOP = 5,            /* best configurations whose neighbours are candidates */
  RF_MAX_CAND = 4096,
};
#define RF_FAIL_MARGIN 1.0 /* failures: worst log-time + this */

typedef struct rf_node {
  int feat;  /* -1: leaf */
  int thr;   /* level <= thr goes left */
  int left, right;
  double value;
} rf_node;

typedef struct forest {
  kt__search_base b;
  int nfeat;
  int levels[KT__SEARCH_MAX_DIMS];
  /* observations */
  unsigned char *x; /* n rows of nfeat levels */
  double *y;        /* cost, INFINITY for failures */
  uint64_t *idx;    /* the configuration of each row */
  int n, cap;
  /* the fitted model */
  rf_node *nodes;
  int nnodes, nodecap;
  int root[RF_TREES];
  double *yfit; /* y with failures replaced */
  int *rows;
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
    f->levels[i] = n < RF_LEVELS ? n : RF_LEVELS;
  }
  return f;
}

static void features(const forest *f, uint64_t index, unsigned char *x) {
  int ch[KT__SEARCH_MAX_DIMS];
  kt__space_decode(f->b.space, index, ch);
  for (int i = 0; i < f->nfeat; i++) {
    int d = f->b.free_dims[i], n = kt__space_nchoices(f->b.space, d);
    x[i] = (unsigned char)(n <= RF_LEVELS ? ch[d] : (int)((int64_t)ch[d] * RF_LEVELS / n));
  }
}

/* ---- fitting ---- */

static int new_node(forest *f) {
  if (f->nnodes == f->nodecap) {
    f->nodecap = f->nodecap ? 2 * f->nodecap : 1024;
    f->nodes = kt__xreallocarray(f->nodes, (size_t)f->nodecap, sizeof *f->nodes);
  }
  f->nodes[f->nnodes] = (rf_node){.feat = -1};
  return f->nnodes++;
}

typedef struct split {
  int feat, thr;
  double gain;
} split;

/* The best "level <= thr" split of ROWS on feature FEAT (sum of squares). */
static void try_feature(const forest *f, const int *rows, int n, int feat, double total, split *best) {
  double sum[RF_LEVELS] = {0};
  int cnt[RF_LEVELS] = {0};
  for (int i = 0; i < n; i++) {
    int lv = f->x[(size_t)rows[i] * (size_t)f->nfeat + (size_t)feat];
    sum[lv] += f->yfit[rows[i]];
    cnt[lv]++;
  }
  double sl = 0;
  int nl = 0;
  for (int t = 0; t < f->levels[feat] - 1; t++) {
    sl += sum[t];
    nl += cnt[t];
    int nr = n - nl;
    if (cnt[t] == 0 || nl < RF_MIN_LEAF || nr < RF_MIN_LEAF) continue;
    double sr = total - sl;
    double gain = sl * sl / nl + sr * sr / nr;
    if (gain > best->gain) *best = (split){feat, t, gain};
  }
}

static int partition(const forest *f, int *rows, int n, const split *s) {
  int l = 0;
  for (int i = 0; i < n; i++)
    if (f->x[(size_t)rows[i] * (size_t)f->nfeat + (size_t)s->feat] <= s->thr) {
      int t = rows[l];
      rows[l++] = rows[i];
      rows[i] = t;
    }
  return l;
}

static int build(forest *f, int *rows, int n, int depth) {
  int node = new_node(f);
  double total = 0;
  for (int i = 0; i < n; i++) total += f->yfit[rows[i]];
  f->nodes[node].value = total / n;
  if (n < 2 * RF_MIN_LEAF || depth >= RF_MAX_DEPTH) return node;
  /* The parent's own score: a split must beat it. */
  split best = {-1, 0, total * total / n + 1e-12};
  int mtry = (f->nfeat * 2 + 2) / 3;
  for (int k = 0; k < f->nfeat; k++)
    if ((int)kt__rng_below(&f->b.rng, (uint64_t)(f->nfeat - k)) < mtry) {
      mtry--;
      try_feature(f, rows, n, k, total, &best);
    }
  if (best.feat < 0) return node;
  int nl = partition(f, rows, n, &best);
  int left = build(f, rows, nl, depth + 1);
  int right = build(f, rows + nl, n - nl, depth + 1);
  f->nodes[node].feat = best.feat;
  f->nodes[node].thr = best.thr;
  f->nodes[node].left = left;
  f->nodes[node].right = right;
  return node;
}

static void fit(forest *f) {
  double worst = -INFINITY;
  for (int i = 0; i < f->n; i++)
    if (isfinite(f->y[i]) && f->y[i] > worst) worst = f->y[i];
  for (int i = 0; i < f->n; i++) f->yfit[i] = isfinite(f->y[i]) ? f->y[i] : worst + RF_FAIL_MARGIN;
  f->nnodes = 0;
  for (int t = 0; t < RF_TREES; t++) {
    for (int i = 0; i < f->n; i++) f->rows[i] = (int)kt__rng_below(&f->b.rng, (uint64_t)f->n);
    f->root[t] = build(f, f->rows, f->n, 0);
  }
}

static void predict(const forest *f, const unsigned char *x, double *mean, double *sd) {
  double s = 0, sq = 0;
  for (int t = 0; t < RF_TREES; t++) {
    const rf_node *nd = &f->nodes[f->root[t]];
    while (nd->feat >= 0) nd = &f->nodes[x[nd->feat] <= nd->thr ? nd->left : nd->right];
    s += nd->value;
    sq += nd->value * nd->value;
  }
  *mean = s / RF_TREES;
  *sd = sqrt(fmax(sq / RF_TREES - *mean * *mean, 0.0));
}

/* ---- proposing ---- */

static double expected_improvement(double best, double mean, double sd) {
  if (sd < 1e-9) return fmax(best - mean, 0.0);
  double z = (best - mean) / sd;
  double cdf = 0.5 * erfc(-z / sqrt(2.0));
  double pdf = exp(-0.5 * z * z) / sqrt(2.0 * 3.141592653589793);
  return sd * (z * cdf + pdf);
}

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
    predict(f, x, &mean, &sd);
    double ei = expected_improvement(f->b.best_cost, mean, sd);
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
  f->rows = kt__xreallocarray(f->rows, (size_t)f->cap, sizeof *f->rows);
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
  free(f->rows);
  free(f->nodes);
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

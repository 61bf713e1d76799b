#include "rforest.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../common.h"

void kt__rf_init(kt__rforest *f, int nfeat, const int *levels, int ntrees, int min_leaf, int max_depth) {
  memset(f, 0, sizeof *f);
  f->nfeat = nfeat;
  f->levels = levels;
  f->ntrees = ntrees < KT__RF_MAX_TREES ? ntrees : KT__RF_MAX_TREES;
  f->min_leaf = min_leaf;
  f->max_depth = max_depth;
}

void kt__rf_free(kt__rforest *f) {
  free(f->nodes);
  free(f->rows);
  free(f->pool);
  f->nodes = NULL;
  f->rows = NULL;
  f->pool = NULL;
}

void kt__rf_subspace(kt__rforest *f, const uint64_t *names, double keep) {
  f->names = names;
  f->keep = keep;
  f->all_names = 0;
  for (int k = 0; names && k < f->nfeat; k++) f->all_names |= names[k];
}

static bool subspace_on(const kt__rforest *f) { return f->names && f->keep < 1; }

/* The pool: every feature whose names are all in KEPT. */
static void fill_pool(kt__rforest *f, uint64_t kept) {
  f->npool = 0;
  for (int k = 0; k < f->nfeat; k++)
    if (!f->names || !(f->names[k] & ~kept)) f->pool[f->npool++] = k;
}

/* The features of the next tree. With a subspace, a name that wins the
 * first splits of every tree no longer hides the others from all of them,
 * and trees that lack a name disagree where it matters, so their spread
 * says more than the bootstrap's alone (forest.c measures what it gains). */
static void draw_pool(kt__rforest *f, kt__rng *rng) {
  uint64_t kept = 0;
  for (uint64_t rest = subspace_on(f) ? f->all_names : 0; rest; rest &= rest - 1)
    if (kt__rng_unit(rng) < f->keep) kept |= rest & (~rest + 1); /* the lowest name left */
  fill_pool(f, kept ? kept : f->all_names);
  if (f->npool == 0) fill_pool(f, f->all_names); /* no feature of only the kept names */
}

static int new_node(kt__rforest *f) {
  if (f->nnodes == f->nodecap) {
    f->nodecap = f->nodecap ? 2 * f->nodecap : 1024;
    f->nodes = kt__xreallocarray(f->nodes, (size_t)f->nodecap, sizeof *f->nodes);
  }
  f->nodes[f->nnodes] = (kt__rf_node){.feat = -1};
  return f->nnodes++;
}

typedef struct split {
  int feat, thr;
  double gain;
} split;

static unsigned char level_of(const kt__rforest *f, int row, int feat) {
  return f->x[(size_t)row * (size_t)f->nfeat + (size_t)feat];
}

/* The best "level <= thr" split of ROWS on feature FEAT (sum of squares). */
static void try_feature(const kt__rforest *f, const int *rows, int n, int feat, double total, split *best) {
  double sum[KT__RF_LEVELS] = {0};
  int cnt[KT__RF_LEVELS] = {0};
  for (int i = 0; i < n; i++) {
    int lv = level_of(f, rows[i], feat);
    sum[lv] += f->y[rows[i]];
    cnt[lv]++;
  }
  double sl = 0;
  int nl = 0;
  for (int t = 0; t < f->levels[feat] - 1; t++) {
    sl += sum[t];
    nl += cnt[t];
    int nr = n - nl;
    if (cnt[t] == 0 || nl < f->min_leaf || nr < f->min_leaf) continue;
    double sr = total - sl;
    double gain = sl * sl / nl + sr * sr / nr;
    if (gain > best->gain) *best = (split){feat, t, gain};
  }
}

static int partition(const kt__rforest *f, int *rows, int n, const split *s) {
  int l = 0;
  for (int i = 0; i < n; i++)
    if (level_of(f, rows[i], s->feat) <= s->thr) {
      int t = rows[l];
      rows[l++] = rows[i];
      rows[i] = t;
    }
  return l;
}

static int build(kt__rforest *f, int *rows, int n, int depth, kt__rng *rng) {
  int node = new_node(f);
  double total = 0;
  for (int i = 0; i < n; i++) total += f->y[rows[i]];
  f->nodes[node].value = total / n;
  if (n < 2 * f->min_leaf || depth >= f->max_depth) return node;
  /* The parent's own score: a split must beat it. */
  split best = {-1, 0, total * total / n + 1e-12};
  int mtry = (f->npool * 2 + 2) / 3;
  for (int k = 0; k < f->npool; k++) /* selection sampling: MTRY of the pool */
    if ((int)kt__rng_below(rng, (uint64_t)(f->npool - k)) < mtry) {
      mtry--;
      try_feature(f, rows, n, f->pool[k], total, &best);
    }
  if (best.feat < 0) return node;
  int nl = partition(f, rows, n, &best);
  int left = build(f, rows, nl, depth + 1, rng);
  int right = build(f, rows + nl, n - nl, depth + 1, rng);
  f->nodes[node].feat = best.feat;
  f->nodes[node].thr = best.thr;
  f->nodes[node].left = left;
  f->nodes[node].right = right;
  return node;
}

void kt__rf_fit(kt__rforest *f, const unsigned char *x, const double *y, int n, kt__rng *rng) {
  f->x = x;
  f->y = y;
  f->nnodes = 0;
  if (n > f->rowcap) {
    f->rowcap = n;
    f->rows = kt__xreallocarray(f->rows, (size_t)n, sizeof *f->rows);
  }
  if (!f->pool) f->pool = kt__xreallocarray(NULL, (size_t)(f->nfeat ? f->nfeat : 1), sizeof *f->pool);
  for (int t = 0; t < f->ntrees; t++) {
    for (int i = 0; i < n; i++) f->rows[i] = (int)kt__rng_below(rng, (uint64_t)n);
    draw_pool(f, rng);
    f->root[t] = build(f, f->rows, n, 0, rng);
  }
}

void kt__rf_predict(const kt__rforest *f, const unsigned char *x, double *mean, double *sd) {
  double s = 0, sq = 0;
  for (int t = 0; t < f->ntrees; t++) {
    const kt__rf_node *nd = &f->nodes[f->root[t]];
    while (nd->feat >= 0) nd = &f->nodes[x[nd->feat] <= nd->thr ? nd->left : nd->right];
    s += nd->value;
    sq += nd->value * nd->value;
  }
  *mean = s / f->ntrees;
  *sd = sqrt(fmax(sq / f->ntrees - *mean * *mean, 0.0));
}

double kt__expected_improvement(double best, double mean, double sd) {
  if (sd < 1e-9) return fmax(best - mean, 0.0);
  double z = (best - mean) / sd;
  double cdf = 0.5 * erfc(-z / sqrt(2.0));
  double pdf = exp(-0.5 * z * z) / sqrt(2.0 * 3.141592653589793);
  return sd * (z * cdf + pdf);
}

/* A random forest of regression trees over small ordinal features (one byte
 * per feature, levels 0..KT__RF_LEVELS-1): bootstrap samples, a random 2/3
 * of the features tried per split (optionally of a random subspace of names
 * per tree, kt__rf_subspace), sum-of-squares splits "level <= t". The
 * spread of the trees' predictions stands for the model's uncertainty. Used
 * by the model-based strategies (forest.c: forest and forest_align). */
#ifndef KT_SEARCH_RFOREST_H
#define KT_SEARCH_RFOREST_H

#include "rng.h"

enum { KT__RF_LEVELS = 64, KT__RF_MAX_TREES = 64 };

typedef struct kt__rf_node {
  int feat; /* -1: leaf */
  int thr;  /* level <= thr goes left */
  int left, right;
  double value;
} kt__rf_node;

typedef struct kt__rforest {
  int ntrees, min_leaf, max_depth;
  int nfeat;
  const int *levels; /* per feature, at most KT__RF_LEVELS; not owned */
  kt__rf_node *nodes;
  int nnodes, nodecap;
  int root[KT__RF_MAX_TREES];
  /* per-tree subspace (kt__rf_subspace): NAMES NULL or KEEP >= 1 is off */
  const uint64_t *names; /* per feature, a bit per name it derives from; not owned */
  uint64_t all_names;    /* the union of NAMES */
  double keep;
  /* fitting scratch */
  const unsigned char *x;
  const double *y;
  int *rows, rowcap;
  int *pool, npool; /* the features the tree being built may split on */
} kt__rforest;

/* NTREES at most KT__RF_MAX_TREES; LEVELS must outlive the forest. */
void kt__rf_init(kt__rforest *f, int nfeat, const int *levels, int ntrees, int min_leaf, int max_depth);
void kt__rf_free(kt__rforest *f);
/* From the next fit on, each tree draws, after its bootstrap, which names it
 * may split on: each name kept with probability KEEP (every name when none
 * is), and a feature only when all its names (NAMES[feature], a bit per
 * name) are kept. NAMES NULL or KEEP >= 1: every feature, and nothing is
 * drawn (the fits are those of a forest without a subspace). NAMES must
 * outlive the forest. */
void kt__rf_subspace(kt__rforest *f, const uint64_t *names, double keep);
/* Fits on N rows: X holds n * nfeat levels, Y finite targets. */
void kt__rf_fit(kt__rforest *f, const unsigned char *x, const double *y, int n, kt__rng *rng);
void kt__rf_predict(const kt__rforest *f, const unsigned char *x, double *mean, double *sd);

/* Expected improvement below BEST of a normal (MEAN, SD) prediction. */
double kt__expected_improvement(double best, double mean, double sd);

#endif

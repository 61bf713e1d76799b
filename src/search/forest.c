/* Model-based search with a random-forest surrogate (in the manner of
 * SMAC): after a few random configurations, every proposal refits a forest
 * of regression trees on the log-times measured so far (bootstrap samples,
 * random feature subsets), and picks, among fresh candidates (random ones
 * and the one-choice neighbours of the best few), the one with the largest
 * expected improvement; the spread of the trees' predictions stands for the
 * model's uncertainty. Failures are learnt apart: a second forest predicts
 * the probability that a configuration fails, and expected improvement is
 * weighted by the probability of success (as in constrained Bayesian
 * optimisation). Teaching a failure as a very slow time instead, as this
 * strategy first did, made the trees disagree most next to failures, and the
 * disagreement drew expected improvement there (convolution_A100: 0.88 of
 * the optimum at 100 evaluations, 0.92 with failures learnt apart).
 *
 * Two strategies share the loop and differ in what the trees see:
 *   forest        each name's choice index (an ordinal feature);
 *   forest_align  also how many times 2 divides each value and each pairwise
 *                 product of values: GPU kernels are often much slower when
 *                 a block or tile size breaks a power-of-two alignment (on
 *                 one recorded space, a block width of 48 instead of 32 or 64
 *                 is a hundred times slower), and choice indices alone make a
 *                 tree spend many splits to isolate {32, 64, 128, 256} among
 *                 multiples of 16. Monotone transforms (log2 of a value) are
 *                 left out: a tree is invariant to them. And the joint
 *                 choice of each pair of short names (FA_JOINT_MAX). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "rforest.h"
#include "strategies.h"

enum {
  FA_MAX_FEAT = 256,
  FA_PAIR_TABLE = 4096, /* pairs with more choice combinations are skipped */
  FA_JOINT_MAX = 16,    /* pairs with at most this many joint choices get them as one feature */
  FA_MIN_LEAF = 2,
  FA_MAX_DEPTH = 20,
  FA_INIT = 10,         /* random configurations before the model */
  FA_INIT_TIMED = 5,    /* the same under a time budget (see random_start) */
  FA_RANDOM_CAND = 300, /* random candidates per proposal */
  FA_TOP = 5,           /* best configurations whose neighbours are candidates */
  FA_MAX_CAND = 4096,
  FA_FAILURE_TREES = 24,
  FA_REFIT_ALWAYS = 200, /* results up to which the forests are refitted at every proposal */
  FA_REFIT_SHARE = 32,   /* beyond, once the results grew by 1/32 since the last fit */
  FA_COST_TREES = 16,
};

/* One feature: a level per choice of free dim A, or per pair of choices of
 * free dims A and B (index ca * nchoices(B) + cb). */
typedef struct feature {
  int a, b; /* b < 0: one dim */
  unsigned char *table;
} feature;

/* What distinguishes the two strategies. */
typedef struct variant {
  int trees;
  bool alignment;  /* add the power-of-two alignment features */
  double subspace; /* under a count budget, the chance that a tree of the time forest keeps a name (1: all) */
} variant;

_Static_assert((int)FA_JOINT_MAX <= (int)KT__RF_LEVELS, "a joint feature's choices are its levels");

static const variant plain = {24, false, 1}, aligned = {48, true, 0.6};

/* Observations as a forest sees them. */
typedef struct rows {
  unsigned char *x; /* n rows of nfeat levels */
  double *y;        /* the target of each row */
  uint64_t *idx;    /* the configuration of each row */
  int n, cap;
} rows;

typedef struct model {
  kt__search_base b;
  int nfeat;
  feature feat[FA_MAX_FEAT];
  int levels[FA_MAX_FEAT];
  /* The free dims each feature derives from, a bit each (kt__rf_subspace). */
  uint64_t names[FA_MAX_FEAT];
  kt__rforest time;    /* log-time of the configurations that ran */
  kt__rforest failure; /* probability of failing */
  rows ok;             /* configurations that ran: y = cost */
  rows all;            /* every result: y = 1 for a failure, 0 otherwise */
  kt__rforest cost;    /* log-seconds an evaluation takes of the tuning's time */
  rows spent;          /* evaluations whose cost was told: y = log(seconds) */
  double left;         /* seconds left of a time budget (INFINITY: none or not told) */
  bool cost_fitted;
  double subspace;     /* the variant's */
  int fitted_n;        /* results the forests were last fitted on (0: never) */
  bool failure_fitted; /* the failure forest has been fitted (a failure was seen by then) */
  uint64_t cand[FA_MAX_CAND];
} model;

/* ---- features ---- */

/* 0 for a value <= 0 (no alignment to speak of), else 1 + trailing zeros. */
static int twos(int64_t v) {
  if (v <= 0) return 0;
  int z = 1;
  while (!(v & 1) && z < 62) {
    v >>= 1;
    z++;
  }
  return z;
}

static int nch(const model *f, int fd) { return kt__space_nchoices(f->b.space, f->b.free_dims[fd]); }
static int64_t value(const model *f, int fd, int c) { return kt__space_choice(f->b.space, f->b.free_dims[fd], c); }

static int cmp_int(const void *p, const void *q) {
  int x = *(const int *)p, y = *(const int *)q;
  return (x > y) - (x < y);
}

/* Free dim FD's bit in a feature's names (kt__rf_subspace); past 64 dims,
 * names share bits and are kept or left out together. */
static uint64_t name_bit(int fd) { return UINT64_C(1) << (fd & 63); }

/* Adds a feature whose raw values (N integers) become levels by rank; a
 * constant one is dropped. */
static void add_feature(model *f, int a, int b, const int *raw, int n) {
  if (f->nfeat == FA_MAX_FEAT) return;
  int *sorted = kt__xmalloc((size_t)n * sizeof *sorted), nd = 0;
  memcpy(sorted, raw, (size_t)n * sizeof *raw);
  qsort(sorted, (size_t)n, sizeof *sorted, cmp_int);
  for (int i = 0; i < n; i++)
    if (i == 0 || sorted[i] != sorted[nd - 1]) sorted[nd++] = sorted[i];
  unsigned char *table = NULL;
  if (nd >= 2 && nd <= KT__RF_LEVELS) { /* raw values are levels already bucketed */
    table = kt__xmalloc((size_t)n);
    for (int i = 0; i < n; i++) {
      int lv = 0;
      while (sorted[lv] != raw[i]) lv++;
      table[i] = (unsigned char)lv;
    }
  }
  free(sorted);
  if (!table) return;
  f->feat[f->nfeat] = (feature){a, b, table};
  f->names[f->nfeat] = name_bit(a) | (b >= 0 ? name_bit(b) : 0);
  f->levels[f->nfeat++] = nd;
}

static void build_features(model *f, const variant *var) {
  int nf = f->b.nfree, most = FA_PAIR_TABLE;
  for (int a = 0; a < nf; a++)
    if (nch(f, a) > most) most = nch(f, a);
  int *raw = kt__xmalloc((size_t)most * sizeof *raw);
  for (int a = 0; a < nf; a++) { /* the choice index, bucketed when long */
    int n = nch(f, a);
    for (int c = 0; c < n; c++) raw[c] = n <= KT__RF_LEVELS ? c : (int)((int64_t)c * KT__RF_LEVELS / n);
    add_feature(f, a, -1, raw, n);
  }
  if (!var->alignment) {
    free(raw);
    return;
  }
  for (int a = 0; a < nf; a++) { /* alignment of each value (binary dims say nothing new) */
    int n = nch(f, a);
    if (n <= 2 || n > FA_PAIR_TABLE) continue;
    for (int c = 0; c < n; c++) raw[c] = twos(value(f, a, c));
    add_feature(f, a, -1, raw, n);
  }
  /* The joint choice of two short names as one feature: a tree splits on
   * one feature at a time, so a part of the space defined by a conjunction
   * (convolution_A100's best needs read_only=1 and use_padding=0, though
   * each alone looks worse on average) is reached through several splits
   * that must each pay. With these features, repeats under 0.80 of the
   * optimum at 100 evaluations fell from 144 to 104 of 2700 on the three
   * convolution development files, and from 76 to 59 of 2100 on seven
   * convolution and pnpoly files (docs/SEARCH.md). */
  for (int a = 0; a < nf; a++)
    for (int b = a + 1; b < nf; b++) {
      int n = nch(f, a), m = nch(f, b);
      if ((int64_t)n * m > FA_JOINT_MAX) continue;
      for (int c = 0; c < n * m; c++) raw[c] = c;
      add_feature(f, a, b, raw, n * m);
    }
  for (int a = 0; a < nf; a++) /* alignment of each product of two values */
    for (int b = a + 1; b < nf; b++) {
      int n = nch(f, a), m = nch(f, b);
      if ((int64_t)n * m > FA_PAIR_TABLE) continue;
      for (int c = 0; c < n; c++)
        for (int d = 0; d < m; d++) {
          int u = twos(value(f, a, c)), v = twos(value(f, b, d));
          raw[c * m + d] = u && v ? u + v - 1 : 0;
        }
      add_feature(f, a, b, raw, n * m);
    }
  free(raw);
}

static void features(const model *f, uint64_t index, unsigned char *x) {
  int ch[KT__MAX_NAMES];
  kt__space_decode(f->b.space, index, ch);
  for (int i = 0; i < f->nfeat; i++) {
    const feature *ft = &f->feat[i];
    int ca = ch[f->b.free_dims[ft->a]];
    x[i] = ft->b < 0 ? ft->table[ca] : ft->table[ca * nch(f, ft->b) + ch[f->b.free_dims[ft->b]]];
  }
}

/* ---- proposing ---- */

static void *model_create(const variant *v, const kt__space *space, uint64_t seed, long budget) {
  model *f = calloc(1, sizeof *f);
  if (!f || !kt__base_init(&f->b, space, seed, budget)) {
    free(f);
    return NULL;
  }
  build_features(f, v);
  kt__rf_init(&f->time, f->nfeat, f->levels, v->trees, FA_MIN_LEAF, FA_MAX_DEPTH);
  kt__rf_init(&f->failure, f->nfeat, f->levels, FA_FAILURE_TREES, FA_MIN_LEAF, FA_MAX_DEPTH);
  kt__rf_init(&f->cost, f->nfeat, f->levels, FA_COST_TREES, FA_MIN_LEAF, FA_MAX_DEPTH);
  f->left = INFINITY;
  f->subspace = v->subspace;
  return f;
}

static void *forest_create(const kt__space *space, uint64_t seed, long budget) {
  return model_create(&plain, space, seed, budget);
}

static void *forest_align_create(const kt__space *space, uint64_t seed, long budget) {
  return model_create(&aligned, space, seed, budget);
}

/* Rows of the FA_TOP fastest configurations that ran, best first. */
static int top_rows(const model *f, int *top) {
  const double *y = f->ok.y;
  int k = 0;
  for (int i = 0; i < f->ok.n; i++) {
    int j = k < FA_TOP ? k++ : FA_TOP;
    if (j == FA_TOP && y[i] >= y[top[FA_TOP - 1]]) continue;
    if (j == FA_TOP) j = FA_TOP - 1;
    while (j > 0 && y[top[j - 1]] > y[i]) {
      top[j] = top[j - 1];
      j--;
    }
    top[j] = i;
  }
  return k;
}

/* Fills f->cand; the first *NEAR_BEST are the best configuration's
 * one-choice neighbours. */
static int candidates(model *f, int *near_best) {
  int nc = 0, top[FA_TOP];
  int ntop = top_rows(f, top);
  *near_best = 0;
  for (int t = 0; t < ntop && nc < FA_MAX_CAND; t++) {
    nc += kt__base_hamming1(&f->b, f->ok.idx[top[t]], f->cand + nc, FA_MAX_CAND - nc);
    if (t == 0) *near_best = nc;
  }
  for (int r = 0; r < FA_RANDOM_CAND && nc < FA_MAX_CAND; r++)
    if (kt__base_random(&f->b, &f->cand[nc])) nc++;
  return nc;
}

static bool any_failed(const model *f) { return f->all.n > f->ok.n; }

/* The chance that a tree of the time forest keeps a name (kt__rf_subspace).
 * Under a count budget forest_align's trees each see a random subspace of
 * the names (each kept with probability 0.6): at 100 evaluations the mean
 * over the six development files rose on each of seeds 1-6 (0.950 -> 0.956
 * on average, 50 repeats; docs/SEARCH.md), mostly on convolution_A100 and
 * A4000, though dedispersion_W6600 lost about 0.01 and no worst repeat rose
 * above 0.80. Under a time budget every tree sees every name: with the
 * subspace, the autotuning_methodology score of dedispersion_A100 fell from
 * 0.786 to 0.287. */
static double time_subspace(const model *f) { return isfinite(f->left) ? 1 : f->subspace; }

/* Refits at every proposal up to FA_REFIT_ALWAYS results, then once the
 * results grew by a 1/FA_REFIT_SHARE share since the last fit (every 7th at
 * 200, every 65th at 2048): a fit costs in proportion to the results, so
 * refitting at every proposal made the model's total cost grow with the
 * square of the evaluations (a 3000-evaluation replay took minutes per
 * repeat). Below 200 a staler model costs more than it saves: refitting
 * every 4th result at 100 evaluations lost about 0.02 of the optimum on
 * convolution_A100 and convolution_A4000 (50 and 30 repeats). */
static void fit_if_stale(model *f) {
  int grown = f->all.n - f->fitted_n;
  bool first_failure = any_failed(f) && !f->failure_fitted;
  bool fresh_enough = f->all.n > FA_REFIT_ALWAYS && grown < 1 + f->all.n / FA_REFIT_SHARE;
  if (f->fitted_n > 0 && fresh_enough && !first_failure) return;
  kt__rf_subspace(&f->time, f->names, time_subspace(f));
  kt__rf_fit(&f->time, f->ok.x, f->ok.y, f->ok.n, &f->b.rng);
  if (any_failed(f)) kt__rf_fit(&f->failure, f->all.x, f->all.y, f->all.n, &f->b.rng);
  f->failure_fitted = any_failed(f);
  if (f->spent.n >= FA_INIT_TIMED) kt__rf_fit(&f->cost, f->spent.x, f->spent.y, f->spent.n, &f->b.rng);
  f->cost_fitted = f->spent.n >= FA_INIT_TIMED;
  f->fitted_n = f->all.n;
}

/* How a candidate ranks. First, whether it may run: the failure model
 * gives it at least an even chance, or it is one choice away from the best
 * configuration. The time model has seen only what ran, so next to a
 * failing region it extrapolates the times of the last configurations that
 * ran, often the fastest (an optimum at a resource limit); expected
 * improvement, even weighted by the chance to run, kept proposing the
 * failing side (on the bowl of test_search, measured with a scratch build,
 * about as often as random search).
 * Without the exemption, an optimum right at the border stayed shut out
 * while the failure model was unsure of it. Then by expected improvement
 * weighted by the chance to run. */
typedef struct score {
  bool may_run;
  double ei;
  double secs; /* predicted cost under a time budget (1 otherwise): breaks ties, as when every ei is 0 */
} score;

/* Under a time budget, with costs told: what a configuration costs matters
 * as much as what it may gain (a slow compile spends the time of several
 * fast ones), so expected improvement is taken per predicted second, and a
 * configuration predicted to take longer than the time left cannot finish,
 * so it is taken only when nothing that fits is left. Under a count budget
 * every evaluation costs one, and nothing changes. */
static bool timed(const model *f) { return f->cost_fitted && isfinite(f->left); }

static score per_second(const model *f, const unsigned char *x, score sc) {
  double log_s, spread;
  kt__rf_predict(&f->cost, x, &log_s, &spread);
  double secs = exp(log_s);
  return (score){sc.may_run && secs <= f->left, sc.ei / secs, secs};
}

static score acquisition(const model *f, const unsigned char *x, bool near_best) {
  double mean, sd, p_fail = 0, spread;
  kt__rf_predict(&f->time, x, &mean, &sd);
  if (f->failure_fitted) kt__rf_predict(&f->failure, x, &p_fail, &spread);
  double p_run = 1 - p_fail;
  score sc = {p_run >= 0.5 || near_best, kt__expected_improvement(f->b.best_cost, mean, sd) * p_run, 1};
  return timed(f) ? per_second(f, x, sc) : sc;
}

static bool better(score a, score b) {
  if (a.may_run != b.may_run) return a.may_run;
  return a.ei != b.ei ? a.ei > b.ei : a.secs < b.secs;
}

/* Random configurations before the model. Under a time budget the first
 * seconds count as much as the last (the autotuning_methodology score
 * averages over a window that, on convolution_W6600, is the first 8
 * evaluations): starting the model after 5 random points instead of 10 gave
 * 0.582 instead of 0.454 on five development files (20 repeats). Under a
 * count budget 10 stays: 5 gave less at 100 evaluations (0.864 and 0.937 on
 * convolution_A100 and A4000 against 0.896 and 0.951, 30 repeats, with a
 * stall rule not kept), and count replays stay as they were. */
static int random_start(const model *f) { return isfinite(f->left) ? FA_INIT_TIMED : FA_INIT; }

static bool model_one(void *state, uint64_t *out) {
  model *f = state;
  if (f->b.proposed < random_start(f) || f->all.n < 2 || f->b.best == UINT64_MAX) return kt__base_random(&f->b, out);
  fit_if_stale(f);
  int near_best, nc = candidates(f, &near_best);
  if (nc == 0) return kt__base_random(&f->b, out);
  score best = {false, -INFINITY, INFINITY};
  unsigned char x[FA_MAX_FEAT];
  for (int c = 0; c < nc; c++) {
    features(f, f->cand[c], x);
    score sc = acquisition(f, x, c < near_best);
    if (better(sc, best)) {
      best = sc;
      *out = f->cand[c];
    }
  }
  return true;
}

static int model_ask(void *state, uint64_t *out, int max) {
  model *f = state;
  return kt__base_ask(&f->b, model_one, f, out, max);
}

static void add_row(rows *r, int nfeat, const unsigned char *x, double y, uint64_t index) {
  if (r->n == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 64;
    r->x = kt__xreallocarray(r->x, (size_t)r->cap, (size_t)(nfeat ? nfeat : 1));
    r->y = kt__xreallocarray(r->y, (size_t)r->cap, sizeof *r->y);
    r->idx = kt__xreallocarray(r->idx, (size_t)r->cap, sizeof *r->idx);
  }
  memcpy(r->x + (size_t)r->n * (size_t)nfeat, x, (size_t)nfeat);
  r->y[r->n] = y;
  r->idx[r->n] = index;
  r->n++;
}

static void free_rows(rows *r) {
  free(r->x);
  free(r->y);
  free(r->idx);
}

static void model_tell(void *state, uint64_t index, kt__status status, double seconds) {
  model *f = state;
  double c = kt__base_tell(&f->b, index, status, seconds);
  unsigned char x[FA_MAX_FEAT];
  features(f, index, x);
  bool ran = isfinite(c);
  if (ran) add_row(&f->ok, f->nfeat, x, c, index);
  add_row(&f->all, f->nfeat, x, ran ? 0.0 : 1.0, index);
}

static void model_spent(void *state, uint64_t index, double seconds, double left) {
  model *f = state;
  unsigned char x[FA_MAX_FEAT];
  features(f, index, x);
  add_row(&f->spent, f->nfeat, x, log(seconds > 1e-6 ? seconds : 1e-6), index);
  f->left = left;
}

static void model_destroy(void *state) {
  model *f = state;
  kt__base_free(&f->b);
  kt__rf_free(&f->time);
  kt__rf_free(&f->failure);
  kt__rf_free(&f->cost);
  free_rows(&f->spent);
  for (int i = 0; i < f->nfeat; i++) free(f->feat[i].table);
  free_rows(&f->ok);
  free_rows(&f->all);
  free(f);
}

const kt__strategy_ops kt__strategy_forest = {
    .name = "forest",
    .summary =
        "model-based: a random-forest surrogate of log-time and one of failure, expected improvement (weighted by "
        "the chance to run) over nearby and random candidates",
    .create = forest_create,
    .ask = model_ask,
    .tell = model_tell,
    .spent = model_spent,
    .destroy = model_destroy,
};

const kt__strategy_ops kt__strategy_forest_align = {
    .name = "forest_align",
    .summary =
        "model-based: a random forest of log-time over choices, their power-of-two alignment (values and pairwise "
        "products) and the joint choices of short names' pairs, expected improvement weighted by the chance to run",
    .create = forest_align_create,
    .ask = model_ask,
    .tell = model_tell,
    .spent = model_spent,
    .destroy = model_destroy,
};

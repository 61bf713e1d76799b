/* Search strategies on synthetic spaces with a known optimum, and replay of
 * recorded spaces (T4 results files). */
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "search/policy.h"
#include "search/replay.h"
#include "search/rforest.h"
#include "search/rng.h"
#include "search/strategies.h"
#include "search/u64map.h"

/* ---- a synthetic space: X, Y in 0..9, Z in 0..3, @where(X + Y != 9) ---- */

static int64_t xy_vals[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
static int64_t z_vals[4] = {0, 1, 2, 3};
static kt__tunedim xyz[3] = {
    {.name = "X", .values = xy_vals, .count = 10},
    {.name = "Y", .values = xy_vals, .count = 10},
    {.name = "Z", .values = z_vals, .count = 4},
};

typedef struct synth {
  kt__space *space;
  kt__expr *where;
} synth;

/* The space keeps a pointer to the constraint array: it lives in *S. */
static void init_synth(synth *sp) {
  synth s = {0};
  kt__source src;
  kt__source_from_string("test", "X + Y != 9", &src);
  kt__diag d;
  kt__diag_init(&d, &src);
  s.where = kt__expr_parse_text(src.text, (kt__loc){1, 1}, &d);
  ASSERT_TRUE(s.where != NULL);
  kt__diag_free(&d);
  kt__source_free(&src);
  kt__errbuf eb = {{0}};
  *sp = s;
  ASSERT_EQ(kt__space_create(xyz, 3, &sp->where, 1, NULL, &sp->space, &eb), KT_OK);
}

static void free_synth(synth *s) {
  kt__space_free(s->space);
  kt__expr_free(s->where);
}

/* A bowl with its bottom (1 s) at X=6 Y=2 Z=1; every X >= 7 fails, right
 * beside the optimum, where a strategy that took failures for fast
 * configurations would be drawn. */
static kt__status measure(const kt__space *s, uint64_t index, double *t) {
  int64_t v[3];
  kt__space_values(s, index, v);
  *t = INFINITY;
  if (v[0] >= 7) return KT__ST_RUNTIME;
  *t = 1.0 + (double)((v[0] - 6) * (v[0] - 6) + (v[1] - 2) * (v[1] - 2)) + 3.0 * fabs((double)v[2] - 1);
  return KT__ST_OK;
}

typedef struct outcome {
  int evals, failed, repeats, invalid;
  double best;
  uint64_t order[400];
} outcome;

/* Drives a strategy like the tuner does, asking BATCH at a time. */
static outcome drive(const kt__strategy_ops *ops, const kt__space *s, uint64_t seed, long budget, int batch) {
  outcome o = {.best = INFINITY};
  kt__strategy *st = kt__strategy_create(ops, s, seed, budget);
  ASSERT_TRUE(st != NULL);
  kt__u64map seen = {0};
  uint64_t buf[16];
  int n;
  while ((budget == 0 || o.evals < budget) && (n = kt__strategy_ask(st, buf, batch)) > 0) {
    for (int k = 0; k < n && (budget == 0 || o.evals < budget); k++) {
      o.repeats += !kt__u64map_put(&seen, buf[k], 0);
      o.invalid += !kt__space_valid_index(s, buf[k]);
      double t;
      kt__status status = measure(s, buf[k], &t);
      o.failed += status != KT__ST_OK;
      if (t < o.best) o.best = t;
      if (o.evals < 400) o.order[o.evals] = buf[k];
      o.evals++;
      kt__strategy_tell(st, buf[k], status, t);
    }
  }
  kt__u64map_free(&seen);
  kt__strategy_free(st);
  return o;
}

TEST(every_strategy_visits_each_valid_point_once) {
  synth sy;
  init_synth(&sy);
  uint64_t valid = kt__space_count_valid(sy.space, 1000);
  ASSERT_EQ(valid, 360); /* 100 (X, Y) pairs minus the 10 with X + Y == 9, times 4 */
  for (const char *const *name = kt__strategy_names(); *name; name++) {
    for (int batch = 1; batch <= 7; batch += 6) {
      outcome o = drive(kt__strategy_find(*name), sy.space, 5, 0, batch);
      if (o.evals != (int)valid || o.repeats || o.invalid)
        kt_test_fail(__FILE__, __LINE__, "%s (batch %d): %d evaluated, %d repeats, %d invalid", *name, batch, o.evals,
                     o.repeats, o.invalid);
    }
  }
  free_synth(&sy);
}

TEST(strategies_find_known_optimum_within_budget) {
  synth sy;
  init_synth(&sy);
  static const char *const guided[] = {"annealing", "genetic", "ils", "forest", "forest_align"};
  for (size_t i = 0; i < sizeof guided / sizeof guided[0]; i++)
    for (uint64_t seed = 1; seed <= 3; seed++) {
      outcome o = drive(kt__strategy_find(guided[i]), sy.space, seed, 120, 1);
      ASSERT_EQ(o.evals, 120);
      if (o.best != 1.0)
        kt_test_fail(__FILE__, __LINE__, "%s seed %d: best %g after 120 of 360", guided[i], (int)seed, o.best);
      ASSERT_EQ(o.repeats, 0);
      ASSERT_EQ(o.invalid, 0);
    }
  free_synth(&sy);
}

/* Failures told as what they are (time INFINITY) must teach a strategy to
 * stay away: compared with the Kernel Tuner bug (issue 314) of scoring a
 * failure as a fast result, a guided strategy meets far fewer of them. */
static int failures_met(const kt__strategy_ops *ops, const kt__space *s, uint64_t seed, bool as_fast) {
  kt__strategy *st = kt__strategy_create(ops, s, seed, 120);
  int failed = 0;
  uint64_t index;
  for (int e = 0; e < 120 && kt__strategy_ask(st, &index, 1) == 1; e++) {
    double t;
    kt__status status = measure(s, index, &t);
    failed += status != KT__ST_OK;
    if (status != KT__ST_OK && as_fast) kt__strategy_tell(st, index, KT__ST_OK, 1e-3);
    else kt__strategy_tell(st, index, status, t);
  }
  kt__strategy_free(st);
  return failed;
}

TEST(failures_are_avoided_not_sought) {
  synth sy;
  init_synth(&sy);
  static const char *const guided[] = {"annealing", "genetic", "ils", "forest", "forest_align"};
  for (size_t i = 0; i < sizeof guided / sizeof guided[0]; i++) {
    int told_failed = 0, told_fast = 0;
    for (uint64_t seed = 1; seed <= 5; seed++) {
      told_failed += failures_met(kt__strategy_find(guided[i]), sy.space, seed, false);
      told_fast += failures_met(kt__strategy_find(guided[i]), sy.space, seed, true);
    }
    if (told_failed * 2 > told_fast)
      kt_test_fail(__FILE__, __LINE__, "%s met %d failures (%d when they look fast)", guided[i], told_failed,
                   told_fast);
  }
  free_synth(&sy);
}

/* The model-based strategies learn where failures are (a second forest
 * predicts the chance to fail) and propose what it expects to run: on the
 * bowl, where X >= 7 fails beside the optimum, they meet far fewer failures
 * than random search. Teaching failures as slow times instead met 0.6 of
 * random's count: once the optimum was found, the time model extrapolated
 * fast times into the failing half. */
TEST(model_based_strategies_learn_where_failures_are) {
  synth sy;
  init_synth(&sy);
  int random_failed = 0;
  for (uint64_t seed = 1; seed <= 5; seed++) random_failed += failures_met(&kt__strategy_random, sy.space, seed, false);
  ASSERT_TRUE(random_failed > 100); /* a third of the space fails */
  static const char *const model[] = {"forest", "forest_align"};
  for (size_t i = 0; i < 2; i++) {
    int failed = 0;
    for (uint64_t seed = 1; seed <= 5; seed++)
      failed += failures_met(kt__strategy_find(model[i]), sy.space, seed, false);
    if (failed * 3 > random_failed)
      kt_test_fail(__FILE__, __LINE__, "%s met %d failures in 5 x 120 evaluations, random %d", model[i], failed,
                   random_failed);
  }
  free_synth(&sy);
}

/* What an evaluation of the bowl costs of the tuning's time: Z >= 2 compiles
 * twenty times longer (a large kernel beside small ones). */
static double bowl_cost(const kt__space *s, uint64_t index) {
  int64_t v[3];
  kt__space_values(s, index, v);
  return v[2] >= 2 ? 20.0 : 1.0;
}

/* Seconds of the tuning's time until the optimum (1 s, at Z=1: cheap) is
 * found; TIMED tells the strategy each cost and a time budget of 2000 s. */
static double seconds_to_optimum(const kt__strategy_ops *ops, const kt__space *s, uint64_t seed, bool timed) {
  kt__strategy *st = kt__strategy_create(ops, s, seed, 360);
  uint64_t index;
  double spent = 0;
  while (kt__strategy_ask(st, &index, 1) == 1) {
    double t, cost = bowl_cost(s, index);
    kt__status status = measure(s, index, &t);
    spent += cost;
    if (t == 1.0) break;
    kt__strategy_tell(st, index, status, t);
    if (timed) kt__strategy_spent(st, index, cost, spent < 2000 ? 2000 - spent : 0);
  }
  kt__strategy_free(st);
  return spent;
}

/* Under a time budget the model-based strategies weigh expected improvement
 * by predicted cost: told what evaluations cost, they reach the bowl's
 * optimum in at most 3/4 of the seconds they need when every evaluation
 * counts one (the same seeds give the same proposals when costs are
 * ignored, so a strategy that drops them fails). */
TEST(model_based_strategies_spend_seconds_where_cheap) {
  synth sy;
  init_synth(&sy);
  static const char *const model[] = {"forest", "forest_align"};
  for (size_t i = 0; i < 2; i++) {
    double counted = 0, timed = 0;
    for (uint64_t seed = 1; seed <= 8; seed++) {
      counted += seconds_to_optimum(kt__strategy_find(model[i]), sy.space, seed, false);
      timed += seconds_to_optimum(kt__strategy_find(model[i]), sy.space, seed, true);
    }
    if (timed * 4 > counted * 3)
      kt_test_fail(__FILE__, __LINE__, "%s reached the optimum in %g s timed, %g s counted", model[i], timed, counted);
  }
  free_synth(&sy);
}

/* ---- a space where power-of-two alignment decides: W in 16..256 step 16,
 * H in {1, 2, 4, 8, 16}, U in 1..4; a W that is not a power of two, or a
 * W * U that is not, is 20 times slower each; the optimum is W=128 H=4 U=2. */

static int64_t w_vals[16] = {16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256};
static int64_t h_vals[5] = {1, 2, 4, 8, 16};
static int64_t u_vals[4] = {1, 2, 3, 4};
static kt__tunedim whu[3] = {
    {.name = "W", .values = w_vals, .count = 16},
    {.name = "H", .values = h_vals, .count = 5},
    {.name = "U", .values = u_vals, .count = 4},
};

static bool pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

static double aligned_time(const kt__space *s, uint64_t index) {
  int64_t v[3];
  kt__space_values(s, index, v);
  double t =
      1.0 + 0.05 * fabs(log2((double)v[1]) - 2) + 0.05 * fabs((double)v[2] - 2) + 0.02 * fabs(log2((double)v[0]) - 7);
  if (!pow2(v[0])) t *= 20;
  if (!pow2(v[0] * v[2])) t *= 20;
  return t;
}

/* Evaluations until the optimum (1.0) is found, at most 320. */
static int evals_to_optimum(const kt__strategy_ops *ops, const kt__space *s, uint64_t seed) {
  kt__strategy *st = kt__strategy_create(ops, s, seed, 320);
  uint64_t index;
  int e = 0;
  while (kt__strategy_ask(st, &index, 1) == 1) {
    double t = aligned_time(s, index);
    e++;
    if (t == 1.0) break;
    kt__strategy_tell(st, index, KT__ST_OK, t);
  }
  kt__strategy_free(st);
  return e;
}

/* forest_align sees how many times 2 divides each value (and each product):
 * it must find the aligned optimum sooner than the plain forest, which only
 * sees choice indices. */
TEST(forest_align_learns_alignment) {
  kt__space *s = NULL;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__space_create(whu, 3, NULL, 0, NULL, &s, &eb), KT_OK);
  int plain = 0, aligned = 0;
  for (uint64_t seed = 1; seed <= 8; seed++) {
    plain += evals_to_optimum(&kt__strategy_forest, s, seed);
    aligned += evals_to_optimum(&kt__strategy_forest_align, s, seed);
  }
  if (aligned >= plain) kt_test_fail(__FILE__, __LINE__, "forest_align %d evaluations, forest %d", aligned, plain);
  kt__space_free(s);
}

TEST(same_seed_same_run_other_seed_other_run) {
  synth sy;
  init_synth(&sy);
  for (const char *const *name = kt__strategy_names(); *name; name++) {
    const kt__strategy_ops *ops = kt__strategy_find(*name);
    outcome a = drive(ops, sy.space, 11, 60, 1), b = drive(ops, sy.space, 11, 60, 1);
    outcome c = drive(ops, sy.space, 12, 60, 1);
    ASSERT_EQ(memcmp(a.order, b.order, 60 * sizeof a.order[0]), 0);
    if (strcmp(*name, "exhaustive") != 0 && memcmp(a.order, c.order, 60 * sizeof a.order[0]) == 0)
      kt_test_fail(__FILE__, __LINE__, "%s ignores its seed", *name);
  }
  free_synth(&sy);
}

/* The tuner asks for several configurations before it tells any result. */
TEST(batched_asks_before_tells_never_repeat) {
  synth sy;
  init_synth(&sy);
  for (const char *const *name = kt__strategy_names(); *name; name++) {
    outcome o = drive(kt__strategy_find(*name), sy.space, 3, 37, 16);
    ASSERT_EQ(o.evals, 37);
    ASSERT_EQ(o.repeats, 0);
    ASSERT_EQ(o.invalid, 0);
  }
  free_synth(&sy);
}

/* A warm start tells results of configurations the strategy never proposed
 * (stored winners of other sizes); none of them may be proposed again. */
TEST(told_unasked_configurations_are_not_proposed) {
  synth sy;
  init_synth(&sy);
  uint64_t warm[3] = {0, 200, kt__space_size(sy.space) - 1};
  for (const char *const *name = kt__strategy_names(); *name; name++) {
    kt__strategy *st = kt__strategy_create(kt__strategy_find(*name), sy.space, 9, 0);
    for (int i = 0; i < 3; i++) {
      double t;
      kt__status status = measure(sy.space, warm[i], &t);
      kt__strategy_tell(st, warm[i], status, t);
    }
    uint64_t index;
    int n = 0;
    while (kt__strategy_ask(st, &index, 1) == 1) {
      for (int i = 0; i < 3; i++)
        if (index == warm[i]) kt_test_fail(__FILE__, __LINE__, "%s proposed told %d", *name, (int)index);
      double t;
      kt__status status = measure(sy.space, index, &t);
      kt__strategy_tell(st, index, status, t);
      n++;
    }
    ASSERT_EQ(n, 360 - 3);
    kt__strategy_free(st);
  }
  free_synth(&sy);
}

TEST(default_strategy_is_exhaustive_when_it_fits) {
  ASSERT_STREQ(kt_default_strategy(100, 100), "exhaustive");
  ASSERT_STREQ(kt_default_strategy(100, 0), "exhaustive");
  ASSERT_STREQ(kt_default_strategy(1000, 100), "forest_align"); /* per docs/SEARCH.md */
  ASSERT_STREQ(kt_default_strategy(1000, 400), "forest_align");
  ASSERT_STREQ(kt_default_strategy(100000, 50000), "ils"); /* no replay showed the model ahead there */
  const char *big = kt_default_strategy(UINT64_MAX, 100);
  ASSERT_TRUE(strcmp(big, "exhaustive") != 0);
  ASSERT_TRUE(kt__strategy_find(big) != NULL);
  ASSERT_TRUE(kt_strategy_summary(big) != NULL);
  ASSERT_TRUE(kt_strategy_summary("nonesuch") == NULL);
}

/* With only a time budget, the strategy that weighs predicted costs against
 * the time left (forest_align's spent op), however large the space. */
TEST(time_only_budget_uses_the_cost_aware_model) {
  kt__strategy_choice c = kt__strategy_choose(NULL, 100000, 0, 60, 0);
  ASSERT_STREQ(c.ops->name, "forest_align");
  ASSERT_TRUE(c.ops->spent != NULL);
  c = kt__strategy_choose(NULL, UINT64_MAX, 0, 60, 0);
  ASSERT_TRUE(c.ops->spent != NULL);
}

TEST(rng_is_reproducible) {
  kt__rng a, b;
  kt__rng_seed(&a, 0);
  kt__rng_seed(&b, 0);
  for (int i = 0; i < 100; i++) ASSERT_TRUE(kt__rng_next(&a) == kt__rng_next(&b));
  kt__rng_seed(&a, 42); /* the same stream on every platform: computed once */
  ASSERT_TRUE(kt__rng_next(&a) == UINT64_C(0x15780b2e0c2ec716));
  int hist[6] = {0};
  for (int i = 0; i < 60000; i++) hist[kt__rng_below(&a, 6)]++;
  for (int k = 0; k < 6; k++) ASSERT_NEAR(hist[k], 10000, 500);
  for (int i = 0; i < 1000; i++) {
    double u = kt__rng_unit(&a);
    ASSERT_TRUE(u >= 0.0 && u < 1.0);
  }
}

/* ---- replay ---- */

/* A small T4 file: P in {1, 2, 4}, Q in {8, 16}; (4, 16) is absent, (2, 16)
 * failed to compile, (1, 16) broke a constraint. */
static const char *const small_t4 =
    "{\"schema_version\": \"1.0.0\", \"results\": ["
    "{\"configuration\": {\"P\": 1, \"Q\": 8}, \"invalidity\": \"correct\", \"objectives\": [\"time\"],"
    " \"measurements\": [{\"name\": \"time\", \"value\": 4.0, \"unit\": \"ms\"}]},"
    "{\"configuration\": {\"P\": 2, \"Q\": 8}, \"invalidity\": \"correct\", \"objectives\": [\"time\"],"
    " \"measurements\": [{\"name\": \"time\", \"value\": 2.0, \"unit\": \"ms\"}]},"
    "{\"configuration\": {\"P\": 4, \"Q\": 8}, \"invalidity\": \"correct\", \"objectives\": [\"time\"],"
    " \"measurements\": [{\"name\": \"time\", \"value\": 1.0, \"unit\": \"ms\"}]},"
    "{\"configuration\": {\"P\": 2, \"Q\": 16}, \"invalidity\": \"compile\", \"objectives\": [\"time\"],"
    " \"measurements\": [{\"name\": \"time\", \"value\": \"CompilationFailedConfig\", \"unit\": \"\"}]},"
    "{\"configuration\": {\"P\": 1, \"Q\": 16}, \"invalidity\": \"constraints\", \"objectives\": [\"time\"],"
    " \"measurements\": []}"
    "]}";

static char *write_temp(const char *text) {
  static char path[64];
  strcpy(path, "/tmp/kt_test_t4_XXXXXX");
  int fd = mkstemp(path);
  ASSERT_TRUE(fd >= 0);
  ASSERT_EQ(write(fd, text, strlen(text)), (long long)strlen(text));
  close(fd);
  return path;
}

TEST(replay_rebuilds_space_from_plain_json) {
  char *path = write_temp(small_t4);
  kt__recorded *r = NULL;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__recorded_load(path, &r, &eb), KT_OK);
  const kt__space *s = kt__recorded_space(r);
  ASSERT_EQ(kt__space_size(s), 6);
  ASSERT_STREQ(kt__space_name(s, 0), "P");
  ASSERT_EQ(kt__space_choice(s, 1, 1), 16);
  ASSERT_EQ(kt__recorded_count(r), 4); /* the constraint breaker is not a configuration */
  ASSERT_EQ(kt__recorded_ok(r), 3);
  ASSERT_EQ(kt__space_count_valid(s, 100), 4);
  ASSERT_NEAR(kt__recorded_optimum(r), 1.0, 0);
  int64_t v[2] = {2, 16};
  double t;
  ASSERT_EQ(kt__recorded_lookup(r, kt__space_index_of(s, v), &t), KT__ST_COMPILE);
  ASSERT_TRUE(isinf(t));
  v[0] = 4;
  ASSERT_EQ(kt__recorded_lookup(r, kt__space_index_of(s, v), &t), KT__ST_CONSTRAINT);
  ASSERT_FALSE(kt__space_valid_index(s, kt__space_index_of(s, v)));
  /* Unlimited exhaustive search finds the optimum; one evaluation of random
   * search scores t_opt / t. */
  kt__replay_stats st;
  ASSERT_EQ(kt__replay_run(r, &kt__strategy_exhaustive, 0, 3, 1, NULL, 0, &st, &eb), KT_OK);
  ASSERT_NEAR(st.mean, 1.0, 1e-12);
  ASSERT_NEAR(st.evals_mean, 4, 1e-12);
  ASSERT_NEAR(st.failed_mean, 1, 1e-12);
  ASSERT_EQ(kt__replay_run(r, &kt__strategy_exhaustive, 1, 1, 1, NULL, 0, &st, &eb), KT_OK);
  ASSERT_NEAR(st.mean, 0.25, 1e-12); /* index 0 is P=1 Q=8: 4 ms */
  ASSERT_NEAR(st.evals_mean, 1, 0);  /* the budget holds */
  kt__recorded_free(r);
  unlink(path);
}

TEST(replay_rejects_bad_files) {
  kt__recorded *r = NULL;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__recorded_load("/nonexistent/x.json.gz", &r, &eb), KT_IO);
  char *path = write_temp("{\"results\": 3}");
  ASSERT_EQ(kt__recorded_load(path, &r, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "T4");
  unlink(path);
  path = write_temp("{\"results\": [");
  ASSERT_EQ(kt__recorded_load(path, &r, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "not JSON");
  unlink(path);
  kt_context *ctx;
  ASSERT_EQ(kt_context_create(NULL, &ctx), KT_OK);
  path = write_temp(small_t4);
  ASSERT_EQ(kt_replay(ctx, path, "nonesuch", 10, 1, 1, NULL, 0, 0, stdout), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "unknown strategy nonesuch");
  kt_context_destroy(ctx);
  unlink(path);
}

static const char *dataset(const char *name) {
  static char path[1024];
  const char *dir = getenv("KTUNE_DATASETS");
  snprintf(path, sizeof path, "%s/%s", dir ? dir : KTUNE_SOURCE_DIR "/tests/data/t4", name);
  if (access(path, R_OK) != 0) kt_test_fail(__FILE__, __LINE__, "dataset %s missing (set KTUNE_DATASETS)", path);
  return path;
}

/* Fixed seed, fixed result: replay is deterministic across runs (the figures
 * were computed once with this code and are asserted exactly). */
TEST(replay_shipped_dataset_is_deterministic) {
  const char *path = dataset("convolution_A4000.json.gz");
  kt__recorded *r = NULL;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__recorded_load(path, &r, &eb), KT_OK);
  ASSERT_EQ(kt__space_size(kt__recorded_space(r)), 10240);
  ASSERT_EQ(kt__recorded_count(r), 4362);
  ASSERT_EQ(kt__recorded_ok(r), 4201);
  kt__replay_stats a, b;
  ASSERT_EQ(kt__replay_run(r, &kt__strategy_ils, 50, 20, 7, NULL, 0, &a, &eb), KT_OK);
  ASSERT_EQ(kt__replay_run(r, &kt__strategy_ils, 50, 20, 7, NULL, 0, &b, &eb), KT_OK);
  ASSERT_TRUE(a.mean == b.mean && a.std == b.std);
  ASSERT_NEAR(a.evals_mean, 50, 0);
  ASSERT_NEAR(a.mean, 0.862973967, 1e-9);
  ASSERT_EQ(kt__replay_run(r, &kt__strategy_random, 50, 20, 7, NULL, 0, &a, &eb), KT_OK);
  ASSERT_NEAR(a.mean, 0.792965928, 1e-9);
  /* Repeats under 0.80 of the optimum: as many as the sorted fractions say. */
  ASSERT_TRUE(a.min < 0.80 && a.below_080 >= 1 && a.below_080 < 20);
  ASSERT_TRUE(a.below_080 <= 10 || a.median < 0.80);
  ASSERT_TRUE(a.below_080 >= 10 || a.median >= 0.80);
  ASSERT_EQ(kt__replay_run(r, &kt__strategy_random, 50, 20, 7, NULL, 0, &b, &eb), KT_OK);
  ASSERT_EQ(a.below_080, b.below_080);
  ASSERT_EQ(kt__replay_run(r, &kt__strategy_forest_align, 50, 5, 7, NULL, 0, &a, &eb), KT_OK);
  ASSERT_NEAR(a.mean, 0.947339, 1e-6); /* printed with 6 digits by ktune replay --json */
  kt__recorded_free(r);
}

TEST(kt_replay_prints_json) {
  const char *path = dataset("dedispersion_W6600.json.gz");
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  kt_context *ctx;
  ASSERT_EQ(kt_context_create(NULL, &ctx), KT_OK);
  ASSERT_EQ(kt_replay(ctx, path, NULL, 25, 3, 1, NULL, 0, 1, out), KT_OK);
  kt_context_destroy(ctx);
  fclose(out);
  ASSERT_CONTAINS(buf, "\"fraction_of_optimum\": ");
  ASSERT_CONTAINS(buf, "\"budget\": 25");
  ASSERT_CONTAINS(buf, "\"space_size\": 22272");
  char want[64];
  snprintf(want, sizeof want, "\"strategy\": \"%s\"", kt_default_strategy(11130, 25));
  ASSERT_CONTAINS(buf, want);
  free(buf);
}

/* Seconds of a time budget that a replay of random search spends with seed
 * SEED: its proposals' recorded costs, up to the first that would end past
 * SECONDS. Random search ignores what it is told, so this walks the same
 * proposals as the replay. */
static double random_spend(const kt__recorded *r, double seconds, uint64_t seed, long *evals) {
  long planned = (long)ceil(seconds / kt__recorded_mean_cost(r));
  kt__strategy *st = kt__strategy_create(&kt__strategy_random, kt__recorded_space(r), seed, planned);
  double spent = 0, t;
  uint64_t index;
  *evals = 0;
  while (kt__strategy_ask(st, &index, 1) == 1) {
    double c = kt__recorded_cost(r, index);
    if (spent + c > seconds) break;
    spent += c;
    ++*evals;
    kt__strategy_tell(st, index, kt__recorded_lookup(r, index, &t), t);
  }
  kt__strategy_free(st);
  return spent;
}

/* `ktune replay --budget 60s`: each evaluation spends its recorded compile
 * and benchmark time, and a repeat stops before the evaluation that would
 * end past the budget. */
TEST(replay_in_seconds_spends_recorded_times) {
  const char *path = dataset("convolution_A4000.json.gz");
  kt__recorded *r = NULL;
  kt__errbuf eb = {{0}};
  ASSERT_EQ(kt__recorded_load(path, &r, &eb), KT_OK);
  ASSERT_TRUE(kt__recorded_mean_cost(r) > 0.5 && kt__recorded_mean_cost(r) < 10); /* about 2.6 s a configuration */
  kt__replay_stats st;
  ASSERT_EQ(kt__replay_run_timed(r, &kt__strategy_random, 60, 1, 7, NULL, 0, &st, &eb), KT_OK);
  long evals;
  double spent = random_spend(r, 60, kt__replay_seed(7, 0), &evals);
  ASSERT_NEAR(st.evals_mean, (double)evals, 0);
  ASSERT_NEAR(st.seconds_mean, spent, 1e-9);
  ASSERT_TRUE(spent <= 60 && spent > 40 && evals > 5); /* the next one would not have fitted */
  kt__replay_stats more;
  ASSERT_EQ(kt__replay_run_timed(r, &kt__strategy_random, 600, 1, 7, NULL, 0, &more, &eb), KT_OK);
  ASSERT_TRUE(more.evals_mean > 5 * st.evals_mean && more.mean >= st.mean);
  /* The model is told the costs; it too stays inside the budget, repeat by repeat. */
  ASSERT_EQ(kt__replay_run_timed(r, &kt__strategy_forest_align, 60, 3, 7, NULL, 0, &st, &eb), KT_OK);
  ASSERT_TRUE(st.seconds_mean <= 60 && st.evals_mean > 5);
  ASSERT_EQ(kt__replay_run_timed(r, &kt__strategy_random, 0, 1, 7, NULL, 0, &st, &eb), KT_INVALID);
  kt__recorded_free(r);

  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  kt_context *ctx;
  ASSERT_EQ(kt_context_create(NULL, &ctx), KT_OK);
  ASSERT_EQ(kt_replay_seconds(ctx, path, NULL, 60, 2, 1, NULL, 0, 1, out), KT_OK);
  fclose(out);
  ASSERT_CONTAINS(buf, "\"budget_s\": 60, \"seconds_mean\": ");
  ASSERT_CONTAINS(buf, "\"strategy\": \"forest_align\""); /* as a tuning with only a time budget picks */
  free(buf);
  char *no_times = write_temp(small_t4); /* its records hold no "times" */
  ASSERT_EQ(kt_replay_seconds(ctx, no_times, NULL, 60, 1, 1, NULL, 0, 0, stdout), KT_INVALID);
  ASSERT_CONTAINS(kt_errmsg(ctx), "no record holds its evaluation times");
  unlink(no_times);
  kt_context_destroy(ctx);
}

/* Warm start in replay: the best configuration of another file of the same
 * kernel is evaluated first and counts against the budget; a file's own best
 * warm-starts it to the optimum in one evaluation; a file of another kernel
 * (other names) gives none. */
TEST(replay_warm_start) {
  kt__errbuf eb = {{0}};
  kt__recorded *conv = NULL, *dedisp = NULL;
  ASSERT_EQ(kt__recorded_load(dataset("convolution_A4000.json.gz"), &conv, &eb), KT_OK);
  ASSERT_EQ(kt__recorded_load(dataset("dedispersion_W6600.json.gz"), &dedisp, &eb), KT_OK);
  uint64_t warm;
  ASSERT_TRUE(kt__recorded_best_in(conv, conv, &warm));
  double t;
  ASSERT_EQ(kt__recorded_lookup(conv, warm, &t), KT__ST_OK);
  ASSERT_NEAR(t, kt__recorded_optimum(conv), 1e-6 * t); /* times are kept as float */
  uint64_t none;
  ASSERT_FALSE(kt__recorded_best_in(conv, dedisp, &none));
  kt__replay_stats st;
  ASSERT_EQ(kt__replay_run(conv, &kt__strategy_random, 1, 5, 3, &warm, 1, &st, &eb), KT_OK);
  ASSERT_NEAR(st.min, 1.0, 1e-6); /* the warm configuration, in every repeat */
  ASSERT_NEAR(st.evals_mean, 1, 0);
  ASSERT_EQ(kt__replay_run(conv, &kt__strategy_random, 1, 5, 3, NULL, 0, &st, &eb), KT_OK);
  ASSERT_TRUE(st.max < 1.0); /* cold, one random configuration is not the optimum */
  /* Later proposals never repeat the warm configuration (replay checks). */
  ASSERT_EQ(kt__replay_run(conv, &kt__strategy_forest_align, 30, 2, 3, &warm, 1, &st, &eb), KT_OK);
  ASSERT_NEAR(st.evals_mean, 30, 0);
  kt__recorded_free(conv);
  kt__recorded_free(dedisp);
}

/* A forest over two features, the time depending on the first only: fitted
 * with seed SEED, and with a subspace of names (a name per feature) kept
 * with probability KEEP when NAMES; the mean and spread predicted at every
 * level of the first feature (second at 0) into MEAN and SD. */
static void fit_two_features(const uint64_t *names, double keep, uint64_t seed, double *mean, double *sd) {
  static const int levels[2] = {8, 8};
  unsigned char x[64 * 2];
  double y[64];
  for (int i = 0; i < 64; i++) x[2 * i] = (unsigned char)(i % 8), x[2 * i + 1] = (unsigned char)(i / 8), y[i] = i % 8;
  kt__rforest f;
  kt__rf_init(&f, 2, levels, 24, 2, 12);
  if (names) kt__rf_subspace(&f, names, keep);
  kt__rng rng;
  kt__rng_seed(&rng, seed);
  kt__rf_fit(&f, x, y, 64, &rng);
  for (int v = 0; v < 8; v++) kt__rf_predict(&f, (const unsigned char[]){(unsigned char)v, 0}, &mean[v], &sd[v]);
  kt__rf_free(&f);
}

/* kt__rf_subspace: KEEP >= 1 is the plain forest, bit for bit; with names
 * left out, some trees cannot split on the one feature that matters, and
 * the trees disagree more (forest_align's time forest under a count
 * budget, docs/SEARCH.md "Names per tree"). */
TEST(forest_subspace_off_is_the_plain_forest_and_on_widens_the_spread) {
  static const uint64_t names[2] = {1, 2};
  double m0[8], s0[8], m1[8], s1[8], mh[8], sh[8];
  fit_two_features(NULL, 1, 7, m0, s0);
  fit_two_features(names, 1, 7, m1, s1);
  for (int v = 0; v < 8; v++) ASSERT_TRUE(m0[v] == m1[v] && s0[v] == s1[v]);
  fit_two_features(names, 0.5, 7, mh, sh);
  double spread0 = 0, spreadh = 0;
  for (int v = 0; v < 8; v++) spread0 += s0[v], spreadh += sh[v];
  ASSERT_TRUE(spreadh > spread0 + 0.5);
}

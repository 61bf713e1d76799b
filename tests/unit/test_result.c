/* A tuning's result (src/tuner/result.c): how its configurations rank. */
#include "harness.h"

#include "tuner/result.h"

static const char *const names[] = {"U"};

/* A trial of U=VALUE, ok, with first-pass median MEDIAN and finalist-round
 * median FINAL (0: not a finalist). */
static void add_ok(kt_result *r, int64_t value, double median, double final) {
  kt__trial *t = kt__result_add(r, &value, 0);
  t->status = KT__ST_OK;
  t->stats.median = median;
  t->final_s = final;
}

/* A configuration whose first pass ran faster than the finalists' rounds
 * (the rounds ran under other load) did not run beside them: the finalists
 * rank first, by their rounds, and the fastest of them wins. */
TEST(finalists_rank_before_configurations_outside_the_rounds) {
  kt_result *r = kt__result_create("k", "k.c", names, 1, 1);
  add_ok(r, 1, 3.2e-3, 0);      /* slower than both finalists in the first pass */
  add_ok(r, 2, 3.0e-3, 3.9e-3); /* finalists, slower in the rounds */
  add_ok(r, 3, 3.1e-3, 3.8e-3);
  int order[3];
  ASSERT_EQ(kt__result_ranked(r, order, 3), 3);
  ASSERT_EQ(order[0], 2);
  ASSERT_EQ(order[1], 1);
  ASSERT_EQ(order[2], 0);
  kt_result_destroy(r);
}

/* Without finalist rounds, the first pass's medians rank. */
TEST(without_rounds_the_first_pass_ranks) {
  kt_result *r = kt__result_create("k", "k.c", names, 1, 1);
  add_ok(r, 1, 3.2e-3, 0);
  add_ok(r, 2, 3.0e-3, 0);
  int order[2];
  ASSERT_EQ(kt__result_ranked(r, order, 2), 2);
  ASSERT_EQ(order[0], 1);
  ASSERT_EQ(order[1], 0);
  kt_result_destroy(r);
}

/* A tuning's result (src/tuner/result.c): how its configurations rank. */
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

#include "tuner/internal.h"
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

/* A trial of U=VALUE, ok, with median MEDIAN and mean power WATTS (< 0:
 * no energy measured). */
static void add_with_energy(kt_result *r, int64_t value, double median, double watts) {
  add_ok(r, value, median, 0);
  kt__seen *seen = &r->trials[r->ntrials - 1].stats.seen;
  if (watts >= 0) *seen = (kt__seen){.energy_known = true, .energy_j = watts * 0.5, .energy_s = 0.5};
}

/* Three configurations: the fastest draws the most power. By time it wins;
 * by energy (W x s) the slowest but frugal one; by edp (W x s x s) the
 * middle one; one without energy ranks last under energy and edp. */
TEST(objective_decides_the_ranking) {
  static const struct {
    kt_objective objective;
    int first, second;
  } cases[] = {{KT_OBJECTIVE_TIME, 0, 1}, {KT_OBJECTIVE_ENERGY, 2, 1}, {KT_OBJECTIVE_EDP, 1, 0}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    kt_result *r = kt__result_create("k", "k.c", names, 1, 1);
    r->objective = cases[c].objective;
    add_with_energy(r, 1, 1.0e-3, 600); /* 0.60 mJ, edp 6.0e-7 */
    add_with_energy(r, 2, 1.2e-3, 400); /* 0.48 mJ, edp 5.8e-7 */
    add_with_energy(r, 3, 2.0e-3, 200); /* 0.40 mJ, edp 8.0e-7 */
    add_with_energy(r, 4, 1.5e-3, -1);  /* no energy */
    int order[4];
    ASSERT_EQ(kt__result_ranked(r, order, 4), 4);
    ASSERT_EQ(order[0], cases[c].first);
    ASSERT_EQ(order[1], cases[c].second);
    if (cases[c].objective != KT_OBJECTIVE_TIME) ASSERT_EQ(order[3], 3);
    kt_result_destroy(r);
  }
}

/* A winner whose samples were disturbed and kept is not passed off as a
 * decision: its row and a line after the table say so, and --json too. */
TEST(a_winner_measured_while_disturbed_is_said_to_be_not_valid) {
  kt_result *r = kt__result_create("k", "k.c", names, 1, 1);
  add_ok(r, 1, 1.0e-3, 0);
  add_ok(r, 2, 2.0e-3, 0);
  r->trials[0].stats.seen = (kt__seen){.disturbed_samples = 3, .disturbance = KT__DISTURBED_THROTTLED};
  r->winner = 0;
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  kt_result_print_table(r, out);
  kt_result_print_json(r, out);
  fclose(out);
  ASSERT_CONTAINS(text, "[not valid: 3 samples throttled]");
  ASSERT_CONTAINS(text, "winner's measurement is not valid: 3 of its samples were taken while throttled");
  ASSERT_CONTAINS(text, "\"winner_valid\": false");
  free(text);
  kt_result_destroy(r);
}

/* A tuning on a miss tells the worker, with every configuration it asks to
 * be measured, which process is the application (kt__measure_opts.peer_pid),
 * so that the application's own context on the device does not make every
 * sample "shared"; a plain tuning names none. */
TEST(a_miss_tunings_requests_name_the_application) {
  kt__config cfg = {.names = (const char *[]){"U", NULL}, .n = 1, .ntune = 1};
  kt_result *r = kt__result_create("k", "k.c", names, 1, 1);
  add_ok(r, 4, 1e-3, 0);
  kt__tuning t = {.cfg = &cfg, .h = {.peer_pid = 4242}, .sample_s = 0.0005};
  kt__request req;
  kt__tuner_request_for(&t, &r->trials[0], KT__REQ_EVAL, &req);
  ASSERT_EQ(req.measure.peer_pid, 4242);
  ASSERT_EQ(req.values[0], 4);
  t.h.peer_pid = 0;
  kt__tuner_request_for(&t, &r->trials[0], KT__REQ_SAMPLE, &req);
  ASSERT_EQ(req.measure.peer_pid, 0);
  kt_result_destroy(r);
}

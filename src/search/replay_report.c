/* kt__replay_report, behind kt_replay: replay as `ktune replay` prints it. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "replay.h"

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* A replay's budget: a count of configurations, or seconds of recorded
 * evaluation time (INFINITY: none). */
typedef struct budget {
  long evals;
  double seconds;
} replay_budget;

static void print_text(FILE *out, const char *path, const kt__recorded *r, const char *strategy, replay_budget bu,
                       uint64_t seed, int nwarm, const kt__replay_stats *st) {
  const kt__space *s = kt__recorded_space(r);
  fprintf(out, "%s: %" PRIu64 " configurations recorded (%" PRIu64 " ok) in a space of %" PRIu64 "\n", base_name(path),
          kt__recorded_count(r), kt__recorded_ok(r), kt__space_size(s));
  if (isfinite(bu.seconds))
    fprintf(out, "strategy %s, budget %g s of recorded compile and benchmark time, %d repeats, seed %" PRIu64 "\n",
            strategy, bu.seconds, st->repeats, seed);
  else fprintf(out, "strategy %s, budget %ld, %d repeats, seed %" PRIu64 "\n", strategy, bu.evals, st->repeats, seed);
  if (nwarm) fprintf(out, "warm start: %d configuration%s from other files first\n", nwarm, nwarm == 1 ? "" : "s");
  fprintf(out, "fraction of optimum: mean %.4f, std %.4f, min %.4f, median %.4f, max %.4f\n", st->mean, st->std,
          st->min, st->median, st->max);
  fprintf(out, "evaluated per repeat: %.1f (%.1f failed)", st->evals_mean, st->failed_mean);
  if (isfinite(bu.seconds)) fprintf(out, " in %.1f s", st->seconds_mean);
  fprintf(out, "; optimum %g\n", kt__recorded_optimum(r));
}

static void print_json(FILE *out, const char *path, const kt__recorded *r, const char *strategy, replay_budget bu,
                       uint64_t seed, int nwarm, const kt__replay_stats *st) {
  kt__sbuf b = {0};
  kt__sbuf_printf(&b, "{\"file\": ");
  kt__sbuf_json_string(&b, path);
  kt__sbuf_printf(&b, ", \"strategy\": ");
  kt__sbuf_json_string(&b, strategy);
  kt__sbuf_printf(&b,
                  ", \"budget\": %ld, \"repeats\": %d, \"seed\": %" PRIu64 ", \"space_size\": %" PRIu64
                  ", \"recorded\": %" PRIu64 ", \"recorded_ok\": %" PRIu64 ", \"optimum\": %.17g"
                  ", \"warm_start\": %d",
                  bu.evals, st->repeats, seed, kt__space_size(kt__recorded_space(r)), kt__recorded_count(r),
                  kt__recorded_ok(r), kt__recorded_optimum(r), nwarm);
  if (isfinite(bu.seconds))
    kt__sbuf_printf(&b, ", \"budget_s\": %.17g, \"seconds_mean\": %.3f", bu.seconds, st->seconds_mean);
  kt__sbuf_printf(&b,
                  ", \"fraction_of_optimum\": %.6f, \"fraction_std\": %.6f, \"fraction_min\": %.6f"
                  ", \"fraction_median\": %.6f, \"fraction_max\": %.6f, \"evaluations_mean\": %.2f"
                  ", \"failed_mean\": %.2f}\n",
                  st->mean, st->std, st->min, st->median, st->max, st->evals_mean, st->failed_mean);
  fputs(b.s, out);
  kt__sbuf_free(&b);
}

int kt__replay_warm_indices(const kt__recorded *r, const char *const *warm, int nwarm, uint64_t *out, int *n,
                            kt__errbuf *eb) {
  *n = 0;
  for (int i = 0; i < nwarm; i++) {
    kt__recorded *from = NULL;
    KT__FORWARD(kt__recorded_load(warm[i], &from, eb));
    if (kt__recorded_best_in(r, from, &out[*n])) (*n)++;
    kt__recorded_free(from);
  }
  return KT_OK;
}

/* The strategy of a replay that names none: as a tuning would choose it. */
static const char *default_for(const kt__recorded *r, replay_budget bu) {
  if (!isfinite(bu.seconds)) return kt_default_strategy(kt__recorded_count(r), bu.evals);
  const kt__strategy_ops *ops = kt__strategy_choose(NULL, kt__recorded_count(r), 0, bu.seconds, 0).ops;
  return ops->name;
}

static int replay(const kt__recorded *r, const char *strategy, replay_budget bu, int repeats, uint64_t seed,
                  const uint64_t *warm, int nwarm, kt__replay_stats *st, kt__errbuf *eb) {
  const kt__strategy_ops *ops = kt__strategy_find(strategy);
  if (isfinite(bu.seconds)) return kt__replay_run_timed(r, ops, bu.seconds, repeats, seed, warm, nwarm, st, eb);
  return kt__replay_run(r, ops, bu.evals, repeats, seed, warm, nwarm, st, eb);
}

int kt__replay_report(const char *path, const char *strategy, long budget, double budget_s, int repeats, uint64_t seed,
                      const char *const *warm, int nwarm, int json, FILE *out, kt__errbuf *eb) {
  KT__RETURN_IF(budget_s <= 0 || (isfinite(budget_s) && budget != 0), eb, KT_INVALID,
                "kt_replay: a budget of configurations or of seconds, not both");
  KT__RETURN_IF(!path || !out || nwarm < 0 || (nwarm && !warm), eb, KT_INVALID,
                "kt_replay: no file, no output, or NWARM without WARM files");
  if (strategy && !kt__strategy_find(strategy)) {
    kt__sbuf names = {0};
    for (const char *const *n = kt__strategy_names(); *n; n++)
      kt__sbuf_printf(&names, "%s%s", n == kt__strategy_names() ? "" : ", ", *n);
    kt__err(eb, KT_INVALID, "unknown strategy %s; known: %s", strategy, names.s);
    kt__sbuf_free(&names);
    return KT_INVALID;
  }
  kt__recorded *r = NULL;
  KT__FORWARD(kt__recorded_load(path, &r, eb));
  uint64_t *warm_idx = kt__xcalloc((size_t)(nwarm ? nwarm : 1), sizeof *warm_idx);
  int nw = 0;
  int rc = kt__replay_warm_indices(r, warm, nwarm, warm_idx, &nw, eb);
  replay_budget bu = {budget, budget_s};
  if (rc == KT_OK && isfinite(budget_s) && !(kt__recorded_mean_cost(r) > 0))
    rc = kt__err(eb, KT_INVALID,
                 "%s: no record holds its evaluation times (T4 \"times\": compilation, runtimes, ...), so a budget "
                 "of %g s cannot be spent; give --budget a number of configurations",
                 path, budget_s);
  if (!strategy) strategy = default_for(r, bu);
  kt__replay_stats st;
  if (rc == KT_OK) rc = replay(r, strategy, bu, repeats, seed, warm_idx, nw, &st, eb);
  if (rc == KT_OK && json) print_json(out, path, r, strategy, bu, seed, nw, &st);
  if (rc == KT_OK && !json) print_text(out, path, r, strategy, bu, seed, nw, &st);
  free(warm_idx);
  kt__recorded_free(r);
  return rc;
}

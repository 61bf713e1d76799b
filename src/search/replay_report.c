/* kt__replay_report, behind kt_replay: replay as `ktune replay` prints it. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static void print_text(FILE *out, const char *path, const kt__recorded *r, const char *strategy, long budget,
                       uint64_t seed, int nwarm, const kt__replay_stats *st) {
  const kt__space *s = kt__recorded_space(r);
  fprintf(out, "%s: %" PRIu64 " configurations recorded (%" PRIu64 " ok) in a space of %" PRIu64 "\n", base_name(path),
          kt__recorded_count(r), kt__recorded_ok(r), kt__space_size(s));
  fprintf(out, "strategy %s, budget %ld, %d repeats, seed %" PRIu64 "\n", strategy, budget, st->repeats, seed);
  if (nwarm) fprintf(out, "warm start: %d configuration%s from other files first\n", nwarm, nwarm == 1 ? "" : "s");
  fprintf(out, "fraction of optimum: mean %.4f, std %.4f, min %.4f, median %.4f, max %.4f\n", st->mean, st->std,
          st->min, st->median, st->max);
  fprintf(out, "evaluated per repeat: %.1f (%.1f failed); optimum %g\n", st->evals_mean, st->failed_mean,
          kt__recorded_optimum(r));
}

static void print_json(FILE *out, const char *path, const kt__recorded *r, const char *strategy, long budget,
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
                  budget, st->repeats, seed, kt__space_size(kt__recorded_space(r)), kt__recorded_count(r),
                  kt__recorded_ok(r), kt__recorded_optimum(r), nwarm);
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

int kt__replay_report(const char *path, const char *strategy, long budget, int repeats, uint64_t seed,
                      const char *const *warm, int nwarm, int json, FILE *out, kt__errbuf *eb) {
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
  if (!strategy) strategy = kt_default_strategy(kt__recorded_count(r), budget);
  kt__replay_stats st;
  if (rc == KT_OK) rc = kt__replay_run(r, kt__strategy_find(strategy), budget, repeats, seed, warm_idx, nw, &st, eb);
  if (rc == KT_OK && json) print_json(out, path, r, strategy, budget, seed, nw, &st);
  if (rc == KT_OK && !json) print_text(out, path, r, strategy, budget, seed, nw, &st);
  free(warm_idx);
  kt__recorded_free(r);
  return rc;
}

/* A report of a replay (`ktune replay ... --report FILE`): the recorded
 * space itself (every configuration the file holds) and the progress of
 * every strategy over it, beside random search's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../search/replay.h"
#include "../space/space.h"
#include "sources.h"

/* T4 files keep milliseconds (metadata.timeunit, docs/STORE.md). */
#define MS 1e-3

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static void recorded_points(const kt__recorded *rec, kt__report_key *k) {
  const kt__space *s = kt__recorded_space(rec);
  uint64_t n = kt__space_size(s);
  int64_t values[KT__MAX_NAMES];
  for (uint64_t i = 0; i < n; i++) {
    double t;
    kt__status st = kt__recorded_lookup(rec, i, &t);
    if (st == KT__ST_CONSTRAINT) continue; /* not recorded */
    kt__space_values(s, i, values);
    kt__report_add_point(k, values, st, st == KT__ST_OK ? t * MS : NAN, NAN);
  }
  k->winner = kt__report_fastest(k);
}

/* One curve per strategy, random search's first (the baseline). */
static int curves(const kt__recorded *rec, kt__report_key *k, long budget, int repeats, uint64_t seed,
                  const uint64_t *warm, int nwarm, kt__errbuf *eb) {
  long len = budget > 0 ? budget : (long)kt__recorded_count(rec);
  kt__report_curve *c = kt__report_add_curve(k, "random (baseline)", len, true);
  kt__replay_stats st;
  KT__FORWARD(kt__replay_run_curve(rec, kt__strategy_find("random"), budget, repeats, seed, warm, nwarm, &st, c->best,
                                   len, eb));
  for (const char *const *name = kt__strategy_names(); *name; name++) {
    if (strcmp(*name, "random") == 0) continue;
    c = kt__report_add_curve(k, *name, len, false);
    KT__FORWARD(
        kt__replay_run_curve(rec, kt__strategy_find(*name), budget, repeats, seed, warm, nwarm, &st, c->best, len, eb));
  }
  return KT_OK;
}

static void origin(const char *path, const kt__recorded *rec, long budget, int repeats, int nwarm, kt__report *r) {
  kt__sbuf b = {0};
  kt__sbuf_printf(&b, "A replay of %s: %llu configurations recorded (%llu valid); every strategy, %d repeats of ", path,
                  (unsigned long long)kt__recorded_count(rec), (unsigned long long)kt__recorded_ok(rec), repeats);
  if (budget > 0) kt__sbuf_printf(&b, "at most %ld evaluations", budget);
  else kt__sbuf_printf(&b, "as many evaluations as a strategy asks for");
  if (nwarm) kt__sbuf_printf(&b, ", warm-started from %d other file%s", nwarm, nwarm == 1 ? "" : "s");
  kt__sbuf_printf(&b, ".");
  r->origin = b.s;
}

int kt__report_from_replay(const char *path, long budget, int repeats, uint64_t seed, const char *const *warm,
                           int nwarm, kt__report *r, kt__errbuf *eb) {
  KT__RETURN_IF(!path || nwarm < 0 || (nwarm && !warm), eb, KT_INVALID,
                "kt_replay_report: no file, or NWARM without "
                "WARM files");
  KT__RETURN_IF(budget < 0 || repeats < 1, eb, KT_INVALID, "the budget must not be negative, the repeats at least 1");
  kt__recorded *rec = NULL;
  KT__FORWARD(kt__recorded_load(path, &rec, eb));
  uint64_t *warm_idx = kt__xcalloc((size_t)(nwarm ? nwarm : 1), sizeof *warm_idx);
  int nw = 0;
  int rc = kt__replay_warm_indices(rec, warm, nwarm, warm_idx, &nw, eb);
  const kt__space *s = kt__recorded_space(rec);
  kt__report_key *k =
      kt__report_add_key(r, base_name(path), "replay", "recorded space", "", kt__space_names(s), kt__space_ndims(s));
  k->note = "Times as recorded in the file (milliseconds there). Progress: the fraction of the optimum's speed that "
            "each strategy's best found reaches, by evaluations, as a mean over the repeats.";
  if (rc == KT_OK) recorded_points(rec, k);
  if (rc == KT_OK) rc = curves(rec, k, budget, repeats, seed, warm_idx, nw, eb);
  if (rc == KT_OK) origin(path, rec, budget, repeats, nw, r);
  free(warm_idx);
  kt__recorded_free(rec);
  return rc;
}

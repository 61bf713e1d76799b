/* --budget Ns bounds the wall time of the whole tuning (docs/FAULTS.md).
 * Work starts only when it is expected to end in time at the pace this run
 * has shown; what still runs at a deadline is cut off: compilations are
 * abandoned, worker requests are bounded by the time left. The search stops
 * early enough to leave the finalist rounds the time they need. The default
 * configuration is the exception: it is the reference, always run in full. */
#include <math.h>

#include "internal.h"

/* The tuning's work after the finalist rounds: joining the compile threads
 * (an abandoned C compiler takes up to 50 ms to be killed and reaped), ending
 * the worker and storing the winner. */
static const double TEARDOWN_S = 0.1;
/* The finalists' reserve is at most this share of the budget: a slow default
 * would otherwise leave no time to search. */
static const double MAX_RESERVE_SHARE = 0.2;

bool kt__budget_timed(const kt__tuning *t) { return t->deadline > 0; }

void kt__budget_ran_out(kt__tuning *t) {
  if (!t->r->budget_ran_out) kt__trace("budget: ran out");
  t->r->budget_ran_out = true;
}

static double mean_of(double sum, int n) { return n > 0 ? sum / n : 0; }

/* Seconds one finalist sample of TR takes: its launches, and the worker's
 * work around them (restoring state, flushing caches) as the default's
 * measurement showed it. */
double kt__budget_sample_cost(const kt__tuning *t, const kt__trial *tr) {
  return tr->stats.reps * tr->stats.median + t->sample_overhead_s;
}

/* The time the finalist rounds need: a warm-up and every round, for each
 * finalist of the ranking so far and for the default, with the default's
 * cost for each finalist not found yet. Past its cap, the reserve keeps as
 * many rounds as fit, and nothing when too few to count would fit: the
 * search is then better off with the time. */
double kt__budget_finalists_reserve(const kt__tuning *t) {
  int nf = kt__tuning_finalists(t), order[KT__MAX_FINALISTS];
  int n = kt__result_ranked(t->r, order, nf);
  const kt__trial *def = &t->r->trials[t->r->default_trial];
  double round = kt__budget_sample_cost(t, def) * (nf - n + 1);
  for (int i = 0; i < n; i++)
    if (order[i] != t->r->default_trial) round += kt__budget_sample_cost(t, &t->r->trials[order[i]]);
  double cap = MAX_RESERVE_SHARE * t->o.budget_s;
  if ((kt__tuning_rounds(t) + 1) * round <= cap) return (kt__tuning_rounds(t) + 1) * round;
  int fit = (int)(cap / round) - 1; /* after the warm-up */
  return fit >= kt__tuning_rounds_that_count(t) ? (fit + 1) * round : 0;
}

/* When the search must have ended (0: no time budget). */
double kt__budget_search_deadline(const kt__tuning *t) {
  return kt__budget_timed(t) ? t->deadline - kt__budget_finalists_reserve(t) - TEARDOWN_S : 0;
}

/* When the finalist rounds must have ended (0: no time budget). */
double kt__budget_rounds_deadline(const kt__tuning *t) { return kt__budget_timed(t) ? t->deadline - TEARDOWN_S : 0; }

/* Whether one more configuration, queued behind PENDING others, can still be
 * compiled (on every thread) and evaluated (one at a time) before the search
 * deadline. */
bool kt__budget_time_for_one_more(kt__tuning *t, int pending) {
  if (!kt__budget_timed(t)) return true;
  int ahead = pending + 1;
  double need = ceil((double)ahead / t->r->compile_threads) * mean_of(t->compile_sum_s, t->compiles) +
                ahead * mean_of(t->eval_sum_s, t->evals);
  double left = kt__budget_search_deadline(t) - kt__now();
  if (need <= left) return true;
  kt__trace("budget: no time for another configuration (%.3f s needed, %.3f s left before the finalists' %.3f s)", need,
            left, kt__budget_finalists_reserve(t));
  kt__budget_ran_out(t);
  return false;
}

/* How long to wait for compiles while N compiled configurations wait to be
 * evaluated: until there is just time left to evaluate those and one more
 * (0: no limit). */
double kt__budget_collect_deadline(const kt__tuning *t, int n) {
  return kt__budget_timed(t) ? kt__budget_search_deadline(t) - (n + 1) * mean_of(t->eval_sum_s, t->evals) : 0;
}

/* Compiles still queued or running when the time is up are given up: a C
 * compiler is killed, NVRTC left to finish in its thread. */
void kt__budget_abandon_late(kt__tuning *t) {
  if (!kt__budget_timed(t) || kt__pool_pending(t->pool) == 0) return;
  int n = kt__pool_abandon(t->pool);
  kt__trace("budget: %d compilations abandoned", n);
  t->r->compiles_abandoned += n;
  kt__budget_ran_out(t);
}

/* Configurations the budget left unmeasured say so (--json "message"). */
void kt__budget_mark_unmeasured(kt__tuning *t) {
  for (int i = 0; t->r->budget_ran_out && i < t->r->ntrials; i++) {
    kt__trial *tr = &t->r->trials[i];
    if (tr->status == KT__ST_PENDING && !tr->message)
      kt__trial_set_message(tr, "not measured: the time budget ran out");
  }
}

/* The finalist rounds: the fastest few of the first pass (and the default,
 * for a side-by-side speed-up) re-timed in interleaved rounds until the
 * leader is apart (kt__rounds_verdict_of) or the rounds are done, and the
 * winner picked from them; or a stored winner kept when nothing was
 * measured anew. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Reused trials have no compiled file yet: build them for the rounds, as
 * far as the time budget allows (one not built in time sits them out). */
static void compile_missing(kt__tuning *t, const int *order, int n) {
  for (int i = 0; i < n; i++)
    if (!t->r->trials[order[i]].artifact && !t->k->backend->builds_at_load)
      kt__tuner_submit(t, &t->r->trials[order[i]]);
  kt__compile_job *j;
  while ((j = kt__pool_wait_until(t->pool, kt__budget_rounds_deadline(t))) != NULL) {
    kt__trial *tr = &t->r->trials[j->id];
    if (!kt__tuner_take_compiled(t, j, tr) && !t->fault_rc) tr->status = KT__ST_COMPILE;
  }
  kt__budget_abandon_late(t);
}

static bool in_rounds(const kt__tuning *t, const kt__trial *tr) {
  return tr->status == KT__ST_OK && (tr->artifact || !kt__be_compiles(t->k->backend));
}

/* One round: a sample of each finalist, rotated so that none always runs
 * first. False when the time budget or an interrupt cut it short. */
static bool one_round(kt__tuning *t, const int *order, int n, int round, double *samples, int *taken) {
  for (int k = 0; k < n; k++) {
    int i = (k + round + n) % n;
    kt__trial *tr = &t->r->trials[order[i]];
    if (!in_rounds(t, tr)) continue;
    kt__request req;
    kt__reply rep;
    kt__tuner_request_for(t, tr, KT__REQ_SAMPLE, &req);
    req.reps = tr->stats.reps > 0 ? tr->stats.reps : 1;
    /* By the method its measurement chose (one from before methods were recorded: events). */
    req.measure.timing = tr->stats.timing != KT_TIMING_AUTO ? tr->stats.timing : KT_TIMING_EVENTS;
    kt__tuner_ask_twice_on_failure(t, &req, &rep, true, kt__budget_rounds_deadline(t));
    if (rep.status == KT__ST_PENDING || kt__tuner_machine_failed(t, tr, &rep)) return false;
    if (rep.status != KT__ST_OK) {
      tr->status = rep.status; /* a finalist that fails now is not trusted */
      tr->outside = rep.outside;
      kt__trial_set_message(tr, rep.msg);
      kt__trial_set_output(tr, &rep.output);
      continue;
    }
    if (round >= 0) samples[i * kt__tuning_rounds(t) + taken[i]++] = rep.sample_s;
  }
  return true;
}

/* Whether the rounds so far decide the winner (kt__rounds_verdict_of).
 * Only finalists with a sample in each of the COMPLETE rounds count. */
static kt__rounds_verdict rounds_decided(const kt__tuning *t, const int *order, int n, const double *samples,
                                         const int *taken, int complete) {
  bool counts[KT__MAX_FINALISTS + 1];
  for (int i = 0; i < n; i++) counts[i] = in_rounds(t, &t->r->trials[order[i]]) && taken[i] >= complete;
  return kt__rounds_verdict_of(samples, kt__tuning_rounds(t), n, complete, counts, &t->r->rounds_spread);
}

void kt__rounds_run(kt__tuning *t) {
  int rounds = kt__tuning_rounds(t);
  int order[KT__MAX_FINALISTS + 1];
  int n = kt__result_ranked(t->r, order, kt__tuning_finalists(t));
  if (n < 2) return;
  /* The default runs in the rounds too, so that the reported speed-up over it
   * is measured side by side rather than across the run's changing load. */
  int def = t->r->default_trial;
  bool have_default = false;
  for (int i = 0; i < n; i++) have_default |= order[i] == def;
  if (!have_default && def >= 0 && t->r->trials[def].status == KT__ST_OK) order[n++] = def;
  compile_missing(t, order, n);
  double *samples = kt__xcalloc((size_t)(n * rounds), sizeof *samples);
  int *taken = kt__xcalloc((size_t)n, sizeof *taken);
  /* A round starts only when it can end before the deadline: the first is
   * foreseen from the first pass, each later one from the one before. */
  double foreseen = 0;
  for (int i = 0; i < n; i++)
    if (in_rounds(t, &t->r->trials[order[i]])) foreseen += kt__budget_sample_cost(t, &t->r->trials[order[i]]);
  int complete = 0;
  /* Round -1 warms up: a finalist taken from the database has not run in
   * this worker yet, and its first sample would carry the loading. Rounds
   * too few to count are not started. */
  int need = kt__tuning_rounds_that_count(t) + 1;
  for (int round = -1; round < rounds && !kt__interrupted; round++, need--) {
    double start = kt__now();
    if (kt__budget_timed(t) && start + (need > 1 ? need : 1) * foreseen > kt__budget_rounds_deadline(t)) {
      kt__budget_ran_out(t);
      break;
    }
    if (!one_round(t, order, n, round, samples, taken)) break;
    foreseen = kt__now() - start;
    complete += round >= 0;
    /* After the last round too, for the leader's spread that --json reports. */
    kt__rounds_verdict v = complete >= kt__tuning_rounds_that_count(t) && round >= 0
                               ? rounds_decided(t, order, n, samples, taken, complete)
                               : KT__ROUNDS_OPEN;
    if (v != KT__ROUNDS_OPEN && complete < rounds) {
      kt__trace("finalists: the leader is %s after %d of %d rounds",
                v == KT__ROUNDS_APART ? "apart from the others" : "apart from or tied with each of the others",
                complete, rounds);
      t->r->rounds_settled = true;
      t->r->rounds_tied = v == KT__ROUNDS_TIED;
      break;
    }
  }
  t->r->rounds_done = complete;
  t->r->rounds_planned = rounds;
  /* The rounds are the trusted measurement: their statistics replace the
   * first pass's, which ran beside other work. A round cut short sampled
   * only some finalists, and does not count. The database gets what the
   * output says: the rounds' statistics, or the failure. */
  for (int i = 0; i < n; i++) {
    kt__trial *tr = &t->r->trials[order[i]];
    if (complete >= kt__tuning_rounds_that_count(t) && taken[i] > 0 && tr->status == KT__ST_OK) {
      kt__stats_compute(samples + i * rounds, taken[i] < complete ? taken[i] : complete, tr->stats.reps, &tr->stats);
      tr->final_s = tr->stats.median;
    }
    if (!kt__interrupted) kt__records_update(t, tr);
  }
  free(samples);
  free(taken);
}

/* The trial of the configuration CONFIG that may win (ok), or -1. */
static int ok_trial_of(const kt__tuning *t, const char *config) {
  for (int i = 0; i < t->r->ntrials; i++) {
    const kt__trial *tr = &t->r->trials[i];
    if (tr->status != KT__ST_OK || tr->reference_only) continue;
    kt__sbuf cfg = {0};
    kt__result_config_string(t->r, tr, &cfg);
    bool same = strcmp(cfg.s, config) == 0;
    kt__sbuf_free(&cfg);
    if (same) return i;
  }
  return -1;
}

/* A run that measured nothing anew (every configuration it tried came from
 * the database, the default aside: it is always run, as the reference)
 * keeps the key's stored winner instead of running the finalist rounds
 * again: rounds over near-tied finalists would pick one of them by noise
 * each time, and every run for a key should end on the same winner. Only a
 * winner that the stored results still rank first (SECONDS, what it was
 * stored with, no slower than any reused result) is kept: one stored by a
 * narrower run (--pin) or an import is decided again. Under energy or edp
 * the stored winner's own reused result gives the score it must beat.
 * --retry-failed asks
 * for measuring again, and so for the rounds; --no-cache reuses nothing.
 * True when the winner was kept. */
bool kt__rounds_keep_stored_winner(kt__tuning *t) {
  if (!t->store || t->o.no_cache || t->o.retry_failed || t->o.bench_only || t->measured_anew > 0 || t->r->reused == 0)
    return false;
  char *config = NULL;
  double seconds;
  kt__errbuf eb;
  if (kt__store_winner(t->store, &t->key, t->o.objective, &config, &seconds, &eb) != KT_OK) return false;
  int found = ok_trial_of(t, config);
  free(config);
  if (found < 0) return false;
  double score = t->o.objective == KT_OBJECTIVE_TIME ? seconds : kt__trial_score(t->r, &t->r->trials[found]);
  for (int i = 0; i < t->r->ntrials; i++) {
    const kt__trial *tr = &t->r->trials[i];
    if (i != found && tr->reused && tr->status == KT__ST_OK && kt__trial_score(t->r, tr) < score) return false;
  }
  t->r->winner = found;
  t->r->kept_stored = true;
  kt__trace("finalists: nothing measured anew; the stored winner is kept");
  return true;
}

/* Whether the runner-up RUNNER is within WINNER's noise; only two timed
 * alike (both in the finalist rounds, or neither) compare. */
static bool tied_with_runner_up(const kt__trial *winner, const kt__trial *runner) {
  return (winner->final_s > 0) == (runner->final_s > 0) && kt__within_noise(&winner->stats, &runner->stats);
}

void kt__rounds_pick_winner(kt__tuning *t) {
  if (t->r->kept_stored) return;
  int best[2];
  int n = kt__result_ranked(t->r, best, 2);
  t->r->winner = n > 0 ? best[0] : -1;
  t->r->runner_up = n > 1 ? best[1] : -1;
  t->r->within_noise = n > 1 && tied_with_runner_up(&t->r->trials[best[0]], &t->r->trials[best[1]]);
}

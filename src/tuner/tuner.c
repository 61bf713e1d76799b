/* The tuner: compile pool -> device worker -> verify -> record.
 *
 * One tuning runs in stages. The default configuration (first choices) is
 * compiled and run first; its outputs are the reference. The strategy then
 * proposes configurations, which the compile pool builds on every core while
 * the device worker verifies and times those already built. The fastest few
 * are re-timed in interleaved rounds and the winner is picked from those
 * rounds. Kernels with @cluster get a second stage over the cluster space,
 * run at each of the best few @autotune configurations. Every measurement
 * goes to the results database as soon as it is made.
 *
 * This file keeps compiling and evaluating, the search stages, warm start
 * and kt_tune; the tuning's state and the files of its other phases are in
 * internal.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* kt__tuner_sample_length's defaults. On the H200 (docs/BENCHMARKS.md, "The sample
 * length") 0.5 ms samples picked winners as good as 2 ms ones (regret at
 * most 0.03% against 0.14%, by a 10 ms yardstick) in a quarter of the
 * measuring time. The host keeps 2 ms: 0.5 ms there gave the same winners in
 * the two checks made (docs/BENCHMARKS.md, "Host timings under load"), too
 * few kernels to change its default on. */
#define SAMPLE_S_HOST 0.002
#define SAMPLE_S_DEVICE 0.0005

/* ---- helpers ---------------------------------------------------------- */

void kt__trial_set_message(kt__trial *tr, const char *msg) {
  free(tr->message);
  tr->message = msg && *msg ? kt__xstrdup(msg) : NULL;
}

/* Keeps what the configuration printed in the worker, if anything. */
void kt__trial_set_output(kt__trial *tr, const kt__output *o) {
  if (!o->total) return;
  free(tr->output);
  tr->output = kt__xstrndup(o->text, o->len);
  tr->output_bytes = o->total;
}

static int find_trial(const kt__tuning *t, const int64_t *values) {
  for (int i = 0; i < t->r->ntrials; i++)
    if (memcmp(t->r->trials[i].values, values, (size_t)t->cfg->n * sizeof *values) == 0) return i;
  return -1;
}

/* ---- compile and evaluate --------------------------------------------- */

static kt__compile_job *make_job(kt__tuning *t, const kt__trial *tr) {
  char tag[32];
  snprintf(tag, sizeof tag, "c%llu", (unsigned long long)tr->id);
  kt__build b = {.decl = t->d,
                 .names = t->cfg->names,
                 .values = tr->values,
                 .n = t->cfg->n,
                 .device = &t->build_device,
                 .workdir = t->workdir,
                 .tag = tag,
                 .timeout_s = kt__tuning_compile_timeout(t),
                 .bincache = &t->k->ctx->bincache};
  return kt__compile_job_new(tr->id, t->k->file, &b);
}

void kt__tuner_submit(kt__tuning *t, const kt__trial *tr) {
  if (!tr->is_default && !tr->reused) t->measured_anew++;
  kt__pool_submit(t->pool, make_job(t, tr));
}

/* A timing sample's least length, so that the clock's resolution and a
 * launch's own cost are lost in it: KTUNE_SAMPLE_S (as the context read
 * it), else SAMPLE_S_HOST on the host's own cores, where a
 * sample shorter than the scheduler's slice is often cut by preemption, or
 * SAMPLE_S_DEVICE on a device timed by its own events
 * (bench/sample_length_h200.sh compares lengths on the H200). */
double kt__tuner_sample_length(const kt__envvars *env, const kt__device_info *dev) {
  if (env->v[KT__ENV_SAMPLE_S].set) return env->v[KT__ENV_SAMPLE_S].seconds;
  return dev->host_cpu ? SAMPLE_S_HOST : SAMPLE_S_DEVICE;
}

void kt__tuner_request_for(const kt__tuning *t, const kt__trial *tr, kt__req_kind kind, kt__request *req) {
  memset(req, 0, sizeof *req);
  req->kind = kind == KT__REQ_EVAL && t->h.verify_only ? KT__REQ_VERIFY : kind;
  req->id = tr->id;
  req->nvalues = t->cfg->n;
  memcpy(req->values, tr->values, (size_t)t->cfg->n * sizeof *tr->values);
  if (tr->artifact) snprintf(req->artifact, sizeof req->artifact, "%s", tr->artifact);
  /* The worker times the verified run and hands it to kt__measure as the
   * first launch (first_s), in place of a warm-up. */
  req->measure = (kt__measure_opts){.min_sample_s = t->sample_s,
                                    .min_samples = 3,
                                    .max_samples = 20,
                                    .max_total_s = 0.25,
                                    .best_s = t->best_s,
                                    .timing = t->o.timing,
                                    .energy_wanted = t->o.objective != KT_OBJECTIVE_TIME,
                                    .peer_pid = t->h.peer_pid};
}

/* Asks the worker, waiting at most the run timeout and, with a time budget,
 * no later than UNTIL (0: no limit). A request the budget cuts off, or has
 * no time left for, is no fault of the configuration: it comes back PENDING,
 * so that nothing is recorded and a later run measures it. */
static void ask_worker(kt__tuning *t, const kt__request *req, kt__reply *rep, double until) {
  double timeout = kt__tuning_run_timeout(t), left = until > 0 ? until - kt__now() : timeout;
  if (left <= 0) {
    *rep = (kt__reply){.status = KT__ST_PENDING};
    snprintf(rep->msg, sizeof rep->msg, "not measured: the time budget ran out");
    kt__budget_ran_out(t);
    return;
  }
  bool cut_short = left < timeout;
  double t0 = kt__now();
  kt__worker_request(t->worker, req, rep, cut_short ? left : timeout);
  double took = kt__now() - t0;
  t->r->device_busy_s += took;
  if (cut_short && rep->status == KT__ST_TIMEOUT) {
    rep->status = KT__ST_PENDING;
    snprintf(rep->msg, sizeof rep->msg, "not measured: cut off by the time budget after %.3g s", took);
    t->r->requests_cut++;
    kt__budget_ran_out(t);
  } else if (rep->status == KT__ST_TIMEOUT) { /* the limit that applied, and why it is not the run timeout */
    snprintf(rep->msg, sizeof rep->msg, "exceeded %g s: the run timeout of %g s plus %d s for measuring the run",
             timeout, kt__tuning_run_limit(t), (int)KT__MEASURE_ALLOWANCE_S);
  } else if (req->kind == KT__REQ_EVAL && rep->status != KT__ST_PENDING) {
    t->eval_sum_s += took;
    t->evals++;
  }
}

/* A build that the machine stopped (a full disk, no descriptors, no
 * compiler) says nothing about the configuration: it stays pending, so
 * nothing of it is stored and a later run builds it again, and the tuning
 * stops with the machine's error (t->fault_rc) rather than crown a winner
 * of the configurations that happened to build first. */
static void environment_failed(kt__tuning *t, kt__trial *tr, const char *why) {
  tr->status = KT__ST_PENDING;
  kt__trial_set_message(tr, why);
  if (t->fault_rc) return; /* the first one is the one told */
  kt__sbuf cfg = {0};
  kt__result_config_string(t->r, tr, &cfg);
  t->fault_rc = kt__err(t->eb, KT_IO,
                        "%s: error: the machine, not the configuration, failed building %s:\n%s\nnothing of it is "
                        "recorded as the configuration's failure; free the space (TMPDIR, the binary cache), raise "
                        "the limit or install the compiler, then run again: the next run builds it",
                        t->k->file->src.path, cfg.s, why);
  kt__sbuf_free(&cfg);
}

/* Takes a finished compile job: records a compile failure, or keeps the
 * artifact for the worker. Returns true when the trial can run. */
bool kt__tuner_take_compiled(kt__tuning *t, kt__compile_job *j, kt__trial *tr) {
  tr->compile_s = j->finished - j->started;
  kt__trace("compile: configuration %llu taken (%.4f s, status %d)", (unsigned long long)tr->id, tr->compile_s,
            (int)j->status);
  if (j->status != KT__ST_PENDING) {
    t->compile_sum_s += tr->compile_s;
    t->compiles++;
  }
  bool ok = j->status == KT__ST_OK;
  if (j->status != KT__ST_PENDING) tr->compile_use = j->artifact.cache_use;
  if (j->artifact.not_cached && !t->r->not_cached) t->r->not_cached = kt__xstrdup(j->artifact.not_cached);
  if (!ok && j->artifact.environment) {
    environment_failed(t, tr, j->artifact.log ? j->artifact.log : j->err.msg);
  } else if (!ok) {
    tr->status = j->status == KT__ST_PENDING ? KT__ST_PENDING : KT__ST_COMPILE;
    kt__trial_set_message(tr, j->artifact.log ? j->artifact.log : j->err.msg);
  } else if (j->artifact.path) {
    free(tr->artifact);
    tr->artifact = kt__xstrdup(j->artifact.path);
  }
  kt__compile_job_free(j);
  return ok;
}

/* A crash or a hang is tried once more in a fresh worker before it counts:
 * the worker may have been killed from outside (the OOM killer, an
 * operator, a timeout on a loaded machine), or have inherited a broken
 * state, and a failure recorded for good would keep the real winner out of
 * every later run. ONLY_OUTSIDE: a failure of the kernel's own is final
 * (the finalist rounds: a finalist that crashes at times is not trusted).
 * UNTIL bounds both requests, as ask_worker does. */
void kt__tuner_ask_twice_on_failure(kt__tuning *t, const kt__request *req, kt__reply *rep, bool only_outside,
                                    double until) {
  ask_worker(t, req, rep, until);
  if (rep->status != KT__ST_RUNTIME && rep->status != KT__ST_TIMEOUT) return;
  if (kt__interrupted || (only_outside && !rep->outside)) return;
  kt__reply *first = kt__xmalloc(sizeof *first);
  *first = *rep;
  ask_worker(t, req, rep, until);
  if (rep->status == KT__ST_RUNTIME || rep->status == KT__ST_TIMEOUT) {
    char msg[sizeof rep->msg];
    snprintf(msg, sizeof msg, "%.1980s (failed twice, each time in a fresh worker)", rep->msg);
    memcpy(rep->msg, msg, sizeof msg);
    rep->outside = rep->outside && first->outside;
  }
  free(first);
}

/* The author's check failed on its own (crashed, wrote the tensors it is
 * given, changed directory): bad input, not the configuration's failure.
 * As with the machine's, the trial stays pending and the tuning stops. */
static void check_failed(kt__tuning *t, kt__trial *tr, const char *why) {
  tr->status = KT__ST_PENDING;
  kt__trial_set_message(tr, why);
  if (t->fault_rc) return;
  kt__sbuf cfg = {0};
  kt__result_config_string(t->r, tr, &cfg);
  t->fault_rc = kt__err(t->eb, KT_INVALID,
                        "%s: error: %s, judging %s: that is the check's fault, not the configuration's, and nothing "
                        "of it is recorded; a check reads the tensors it is given and returns its verdict: fix it, "
                        "then run again",
                        t->k->file->src.path, why, cfg.s);
  kt__sbuf_free(&cfg);
}

/* A build in the worker (backends that build at load, or a cubin gone from
 * the work folder) that the machine stopped: as a compile job's, the trial
 * stays pending and the tuning stops. True when REP is one. */
bool kt__tuner_machine_failed(kt__tuning *t, kt__trial *tr, const kt__reply *rep) {
  if (rep->status == KT__ST_OK || !(rep->environment || rep->check_fault)) return false;
  if (rep->check_fault) check_failed(t, tr, rep->msg);
  else environment_failed(t, tr, rep->msg);
  return true;
}

/* Backends that build at load build in the worker: its first reply for a
 * configuration says how the binary cache served that build. */
void kt__tuner_note_load_build(kt__trial *tr, const kt__reply *rep) {
  if (!tr->compile_use) tr->compile_use = rep->compile_use;
}

/* One verified run and measurement, bounded by UNTIL (0: no limit). */
void kt__tuner_evaluate(kt__tuning *t, kt__trial *tr, kt__req_kind kind, double until) {
  kt__request req;
  kt__reply rep;
  kt__tuner_request_for(t, tr, kind, &req);
  kt__tuner_ask_twice_on_failure(t, &req, &rep, false, until);
  if (kt__tuner_machine_failed(t, tr, &rep)) return;
  tr->outside = rep.status != KT__ST_OK && rep.outside;
  tr->status = rep.status;
  kt__trial_set_message(tr, rep.msg);
  kt__trial_set_output(tr, &rep.output);
  tr->load_s = rep.load_s, tr->verify_s = rep.verify_s, tr->measure_s = rep.measure_s;
  kt__tuner_note_load_build(tr, &rep);
  t->r->load_s += rep.load_s, t->r->verify_s += rep.verify_s, t->r->measure_s += rep.measure_s;
  if (rep.status == KT__ST_OK) {
    tr->stats = rep.stats;
    if (t->best_s <= 0 || rep.stats.median < t->best_s) t->best_s = rep.stats.median;
  }
}

/* ---- one search stage ------------------------------------------------- */

static kt__trial *trial_for_index(kt__tuning *t, kt__stage *s, uint64_t index) {
  int64_t values[KT__MAX_NAMES];
  memcpy(values, s->base, sizeof values);
  kt__space_values(s->space, index, values + s->offset);
  int existing = find_trial(t, values);
  if (existing >= 0) return &t->r->trials[existing];
  kt__trial *tr = kt__result_add(t->r, values, s->stage);
  tr->space_index = index;
  return tr;
}

static bool out_of_budget(kt__tuning *t, const kt__stage *s) {
  if (kt__interrupted) return true;
  if (s->budget > 0 && s->asked >= s->budget) return true;
  return !kt__budget_time_for_one_more(t, kt__pool_pending(t->pool));
}

/* What TR cost of the tuning's time (its compilation and the worker's time
 * on it), and the search's time left under a time budget, for a strategy
 * that weighs costs (docs/SEARCH.md, "Budgets in seconds"). */
static void tell_spent(kt__tuning *t, kt__stage *s, const kt__trial *tr) {
  double cost = tr->compile_s + tr->load_s + tr->verify_s + tr->measure_s;
  double left = kt__budget_timed(t) ? kt__budget_search_deadline(t) - kt__now() : INFINITY;
  kt__strategy_spent(s->strategy, tr->space_index, cost, left > 0 ? left : 0);
}

static void finish_trial(kt__tuning *t, kt__stage *s, kt__trial *tr) {
  double secs = tr->status == KT__ST_OK ? tr->stats.median : INFINITY;
  if (tr->space_index != UINT64_MAX) kt__strategy_tell(s->strategy, tr->space_index, tr->status, secs);
  if (tr->space_index != UINT64_MAX) tell_spent(t, s, tr);
  if (tr->status == KT__ST_OK && (t->best_s <= 0 || tr->stats.median < t->best_s)) t->best_s = tr->stats.median;
  kt__progress_settled(t, tr);
  kt__records_put(t, tr);
}

static bool was_warm(const kt__stage *s, uint64_t index) {
  for (int i = 0; i < s->nwarm; i++)
    if (s->warm[i] == index) return true;
  return false;
}

/* The whole configuration (both stages) at INDEX of stage S's space. */
static void stage_values(const kt__stage *s, uint64_t index, int64_t *values) {
  memcpy(values, s->base, sizeof s->base);
  kt__space_values(s->space, index, values + s->offset);
}

/* A configuration where an expression cannot be evaluated (@where(A / (A -
 * 2) > 1) at A=2) is bad input, found for the first configuration that shows
 * it: never counted as excluded, never run as a constraint failure. */
int kt__tuner_report_fault(kt__tuning *t, const int64_t *values, const kt__space_fault *f) {
  kt__env config = {t->cfg->names, values, t->cfg->n, NULL};
  kt__space_fault_error(&t->k->file->src, &config, &t->size_env, f, t->eb);
  return t->fault_rc = KT_INVALID;
}

/* A @where that failed while the strategy looked for valid configurations. */
static bool space_faulted(kt__tuning *t, const kt__stage *s) {
  kt__space_fault f = kt__space_first_fault(s->space);
  if (!f.found) return false;
  int64_t values[KT__MAX_NAMES];
  stage_values(s, f.index, values);
  kt__tuner_report_fault(t, values, &f);
  return true;
}

/* The other expressions of a configuration about to be compiled. */
bool kt__tuner_config_faulted(kt__tuning *t, const int64_t *values) {
  kt__env env = {t->cfg->names, values, t->cfg->n, &t->size_env};
  kt__space_fault f = {.found = true};
  if (kt__decl_check_config(t->d, &env, &f.err, &f.what) == 0) return false;
  kt__tuner_report_fault(t, values, &f);
  return true;
}

/* Asks the strategy for more work until the pool holds enough to keep all
 * compile threads and the device busy. */
static void refill(kt__tuning *t, kt__stage *s, int want) {
  while (!t->fault_rc && !s->exhausted && !out_of_budget(t, s) && kt__pool_pending(t->pool) < want) {
    uint64_t idx;
    int asked = kt__strategy_ask(s->strategy, &idx, 1);
    if (space_faulted(t, s)) break;
    if (asked == 0) {
      s->exhausted = true;
      break;
    }
    kt__trial *tr = trial_for_index(t, s, idx);
    /* Warm starts were counted when they ran; the default, always run as
     * the reference, never counts: --budget N is N besides it, whether or
     * not the strategy happens to propose it. */
    if (!was_warm(s, idx) && !tr->is_default) s->asked++;
    if (tr->status != KT__ST_PENDING) { /* the default or a warm start, measured already */
      kt__strategy_tell(s->strategy, idx, tr->status, tr->status == KT__ST_OK ? tr->stats.median : INFINITY);
      continue;
    }
    tr->space_index = idx;
    if (kt__tuner_config_faulted(t, tr->values)) break;
    if (kt__records_reuse(t, tr)) {
      finish_trial(t, s, tr);
      continue;
    }
    kt__tuner_submit(t, tr);
  }
}

/* Backends that build at load time (OpenCL) get the batch queued first, so
 * that the worker builds it on all cores rather than one build per trial. */
static void prebuild(kt__tuning *t, kt__compile_job **jobs, int n) {
  if (!t->k->backend->builds_at_load) return;
  for (int i = 0; i < n; i++) {
    if (jobs[i]->status != KT__ST_OK) continue;
    kt__request req;
    kt__reply rep;
    kt__tuner_request_for(t, &t->r->trials[jobs[i]->id], KT__REQ_PREBUILD, &req);
    ask_worker(t, &req, &rep, kt__budget_search_deadline(t));
  }
}

/* When kernels run on the host's cores, compile a batch on every core, then
 * time it with the cores quiet, and repeat. Backends that build at load time
 * also go batch by batch, so that a batch can be built at once. */
static void run_stage_batched(kt__tuning *t, kt__stage *s) {
  int batch = 4 * t->r->compile_threads;
  /* A backend that builds at load keeps a bounded cache of built programs,
   * half of it for a prebuild; a batch larger than that would be built twice. */
  const kt__backend *be = t->k->backend;
  if (be->builds_at_load && be->programs_kept && batch > be->programs_kept / 2) batch = be->programs_kept / 2;
  kt__compile_job **jobs = kt__xcalloc((size_t)batch + 1, sizeof *jobs);
  for (;;) {
    refill(t, s, batch);
    int n = 0;
    kt__compile_job *j;
    while ((j = kt__pool_wait_until(t->pool, kt__budget_collect_deadline(t, n))) != NULL) {
      if (n == batch) jobs = kt__xreallocarray(jobs, (size_t)(batch *= 2) + 1, sizeof *jobs);
      jobs[n++] = j;
    }
    kt__budget_abandon_late(t);
    if (n == 0) break;
    prebuild(t, jobs, n);
    for (int i = 0; i < n; i++) {
      kt__trial *tr = &t->r->trials[jobs[i]->id];
      if (kt__tuner_take_compiled(t, jobs[i], tr) && !kt__interrupted)
        kt__tuner_evaluate(t, tr, KT__REQ_EVAL, kt__budget_search_deadline(t));
      if (tr->status != KT__ST_PENDING) finish_trial(t, s, tr);
    }
    if (kt__interrupted) break;
  }
  free(jobs);
}

/* Otherwise the pool keeps compiling while the device times what is ready. */
static void run_stage(kt__tuning *t, kt__stage *s) {
  if (t->r->device.host_cpu || t->k->backend->builds_at_load) {
    run_stage_batched(t, s);
    return;
  }
  int want = 2 * t->r->compile_threads + 2;
  refill(t, s, want);
  kt__compile_job *j;
  while ((j = kt__pool_wait_until(t->pool, kt__budget_collect_deadline(t, 0))) != NULL) {
    kt__trial *tr = &t->r->trials[j->id];
    if (kt__tuner_take_compiled(t, j, tr) && !kt__interrupted)
      kt__tuner_evaluate(t, tr, KT__REQ_EVAL, kt__budget_search_deadline(t));
    if (tr->status == KT__ST_PENDING) continue; /* cancelled by an interrupt, or out of time */
    finish_trial(t, s, tr);
    if (kt__interrupted) kt__pool_cancel_queued(t->pool);
    else refill(t, s, want);
  }
  kt__budget_abandon_late(t);
}

/* ---- warm start ------------------------------------------------------- */

typedef struct warm_configs {
  const kt__tuning *t;
  int64_t values[KT__MAX_WARM][KT__MAX_NAMES];
  int n;
} warm_configs;

static void collect_winner(void *ud, const char *sizes, const char *config, double seconds) {
  warm_configs *w = ud;
  if (w->n == KT__MAX_WARM) return;
  memcpy(w->values[w->n], w->t->cfg->defaults, (size_t)w->t->cfg->n * sizeof w->values[0][0]);
  kt__config_read(w->t->cfg, config, w->values[w->n]);
  w->n++;
}

/* Compiles what was submitted (all cores), then evaluates it (cores quiet
 * when kernels run on the host). At most KT__MAX_WARM jobs are in the pool. */
static void run_submitted(kt__tuning *t, kt__stage *s) {
  kt__compile_job *jobs[KT__MAX_WARM];
  int n = 0;
  kt__compile_job *j;
  while ((j = kt__pool_wait_until(t->pool, kt__budget_collect_deadline(t, n))) != NULL) jobs[n++] = j;
  kt__budget_abandon_late(t);
  for (int i = 0; i < n; i++) {
    kt__trial *tr = &t->r->trials[jobs[i]->id];
    if (kt__tuner_take_compiled(t, jobs[i], tr) && !kt__interrupted)
      kt__tuner_evaluate(t, tr, KT__REQ_EVAL, kt__budget_search_deadline(t));
    if (tr->status != KT__ST_PENDING) finish_trial(t, s, tr);
  }
}

/* Warm start: the configurations that won for this kernel on this device
 * at other sizes, then on other devices, are evaluated before the
 * strategy's first proposal, and
 * the strategy is told their results (finish_trial), so a good
 * configuration is known from the start. They count against the budget
 * once; refill does not evaluate or count them again when proposed. */
static void warm_start(kt__tuning *t, kt__stage *s) {
  if (!t->store || t->o.bench_only || s->stage != 0) return;
  warm_configs *w = kt__xcalloc(1, sizeof *w);
  w->t = t;
  kt__errbuf eb;
  kt__store_each_winner(t->store, &t->key, collect_winner, w, &eb);
  int here = w->n;
  kt__store_each_winner_elsewhere(t->store, &t->key, collect_winner, w, &eb);
  for (int i = 0; i < w->n && !out_of_budget(t, s); i++) {
    uint64_t idx = kt__space_index_of(s->space, w->values[i]);
    if (idx == UINT64_MAX || kt__space_valid_index(s->space, idx) != 1 || was_warm(s, idx)) continue;
    kt__trial *tr = trial_for_index(t, s, idx);
    if (tr->status != KT__ST_PENDING) continue; /* the default */
    s->warm[s->nwarm++] = idx;
    s->asked++;
    if (kt__records_reuse(t, tr)) finish_trial(t, s, tr);
    else kt__tuner_submit(t, tr);
  }
  if (s->nwarm && !kt__tuning_quiet(t))
    fprintf(stderr,
            "  warm start: %d configuration%s that won at other sizes or on other devices first (%d stored "
            "here, %d elsewhere)\n",
            s->nwarm, s->nwarm == 1 ? "" : "s", here, w->n - here);
  run_submitted(t, s);
  free(w);
}

/* ---- a search stage --------------------------------------------------- */

/* Stage WHICH (0 @autotune, 1 @cluster with the other names at BASE): its
 * space and strategy, the warm start, then the search itself. */
static int search(kt__tuning *t, int which, const int64_t *base) {
  kt__stage s = {.stage = which, .offset = kt__config_stage_first(t->cfg, which)};
  memcpy(s.base, base, (size_t)t->cfg->n * sizeof *base);
  kt__other_names other;
  kt__sbuf warn = {0};
  int rc = kt__choice_stage_space(t, which, base, &other, &warn, &s.space);
  if (rc != KT_OK) goto done;
  if (warn.len && !kt__tuning_quiet(t) && which == 0) fputs(warn.s, stderr);
  if (which == 0) kt__choice_exclude_default_outside_pins(t, s.space);
  const kt__strategy_ops *ops;
  if ((rc = kt__choice_strategy(t, &s, &ops)) != KT_OK) goto done;
  if (t->o.bench_only) s.budget = 1;
  s.strategy = kt__strategy_create(ops, s.space, kt__tuning_seed(t), s.budget);
  warm_start(t, &s);
  run_stage(t, &s);
  if (t->fault_rc) rc = t->fault_rc;
  kt__strategy_free(s.strategy);
done:
  kt__sbuf_free(&warn);
  kt__space_free(s.space);
  return rc;
}

/* The @cluster stage runs at this many of the first stage's fastest
 * configurations, not only at its winner: a tile may win only with a cluster
 * (on the H200, gemm_wgmma's M=128 N=14336 K=4096 ran 1.49x faster with two
 * blocks multicasting B at a tile that was not the first stage's winner,
 * docs/BENCHMARKS.md, "The @cluster stage"). Cluster spaces are a few
 * configurations, so three bases cost a few more compiles. */
enum { CLUSTER_BASES = 3 };

/* Stage 1 at each of the CLUSTER_BASES fastest stage-0 configurations, the
 * fastest first (a time budget that runs out cuts the slower bases). Their
 * values are copied first: the stage adds trials, which moves the array. */
static int search_cluster_stage(kt__tuning *t) {
  int order[CLUSTER_BASES];
  int nbases = kt__result_ranked(t->r, order, CLUSTER_BASES);
  size_t width = (size_t)t->cfg->n;
  int64_t *bases = kt__xcalloc((size_t)nbases * width, sizeof *bases);
  for (int i = 0; i < nbases; i++) memcpy(bases + i * width, t->r->trials[order[i]].values, width * sizeof *bases);
  int rc = KT_OK;
  for (int i = 0; i < nbases && rc == KT_OK && !kt__interrupted; i++) rc = search(t, 1, bases + i * width);
  free(bases);
  return rc;
}

/* KTUNE_PRINT_AUTOTUNING: one line per tuning (kernel, key, time, winner);
 * none when the setup failed (nothing was measured: the caller reports the
 * error). */
static void print_tuning(const kt__tuning *t, bool set_up) {
  if (!t->r || !set_up || t->o.bench_only) return;
  kt__sbuf key = {0}, cfg = {0}, how = {0};
  kt__kernel_key_sizes(t->k, t->sizes, &key);
  if (t->r->winner >= 0 && !t->h.verify_only) kt__result_config_string(t->r, &t->r->trials[t->r->winner], &cfg);
  const kt_result *r = t->r;
  if (t->h.verify_only) {
    int passed = 0;
    for (int i = 0; i < r->ntrials; i++) passed += r->trials[i].status == KT__ST_OK && !r->trials[i].reference_only;
    kt__sbuf_printf(&how, "verified %d configurations (%d passed, %d stored before", r->ntrials, passed, r->reused);
  } else {
    kt__sbuf_printf(&how, "tuned %d configurations (%d stored before", r->ntrials, r->reused);
  }
  /* The phases, so that a slow first call can be explained: compiling is
   * the compile threads' busy time, which overlaps the worker's verifying
   * and measuring; measure includes the finalist rounds. */
  kt__sbuf_printf(&how, "; setup %.3f s, compile %.3f s, verify %.3f s, measure %.3f s)%s", r->setup_s,
                  r->compile_busy_s, r->verify_s, r->measure_s + r->finalists_s,
                  r->winner < 0 && !t->h.verify_only ? ", none valid" : "");
  kt__print_autotuning(t->d->name, key.s, how.s, kt__now() - t->started,
                       cfg.s              ? cfg.s
                       : t->h.verify_only ? "none adopted yet"
                                          : "none");
  kt__sbuf_free(&key);
  kt__sbuf_free(&cfg);
  kt__sbuf_free(&how);
}

/* Seconds since *MARK, which moves to now: one phase of the timeline. */
static double lap(double *mark) {
  double now = kt__now(), d = now - *mark;
  *mark = now;
  return d;
}

int kt_tune(kt_kernel *k, const kt_tune_options *opts, kt_result **out) { return kt__tune(k, opts, NULL, out); }

int kt__tune(kt_kernel *k, const kt_tune_options *opts, const kt__tune_helper_opts *helper, kt_result **out) {
  kt__tuning t = {.k = k, .d = k->decl, .cfg = &k->config, .eb = &k->ctx->err, .started = kt__now(), .tty = isatty(2)};
  if (opts) t.o = *opts;
  if (helper) t.h = *helper;
  if (t.o.budget_s > 0) t.deadline = t.started + t.o.budget_s;
  *out = NULL;
  kt__interrupted = 0;
  int rc = kt__setup_start(&t);
  bool set_up = rc == KT_OK;
  double mark = kt__now();
  if (t.r) t.r->setup_s = mark - t.started;
  if (rc == KT_OK) rc = kt__reference_run(&t);
  if (t.r) t.r->reference_s = lap(&mark);
  if (rc == KT_OK) rc = search(&t, 0, t.cfg->defaults);
  if (t.r) kt__rounds_pick_winner(&t); /* no result when the setup failed */
  if (rc == KT_OK && t.d->ncluster > 0 && t.r->winner >= 0 && !kt__interrupted) rc = search_cluster_stage(&t);
  if (t.r) t.r->search_s = lap(&mark);
  if (rc == KT_OK && kt__budget_timed(&t)) t.r->finalists_reserved_s = kt__budget_finalists_reserve(&t);
  if (rc == KT_OK && !kt__interrupted && !t.h.verify_only && !kt__rounds_keep_stored_winner(&t)) kt__rounds_run(&t);
  if (rc == KT_OK && t.fault_rc) rc = t.fault_rc; /* the machine failed a finalist's build */
  if (t.r) t.r->finalists_s = lap(&mark);
  kt__trace("finalists done");
  if (t.r) {
    kt__rounds_pick_winner(&t);
    t.r->interrupted = kt__interrupted;
    kt__budget_mark_unmeasured(&t);
    if (!t.h.verify_only) kt__records_put_winner(&t);
  }
  kt__progress_end(&t);
  print_tuning(&t, set_up);
  kt__setup_finish(&t);
  if (t.r) t.r->wall_s = kt__now() - t.started;
  /* A setup that failed measured nothing: there is no result to report. */
  if (!set_up) {
    kt_result_destroy(t.r);
    t.r = NULL;
  }
  *out = t.r;
  if (rc == KT_OK && t.r->winner < 0) rc = kt__err(t.eb, KT_NOVALID, "no configuration of %s was valid", k->decl->name);
  if (rc == KT_OK && t.store_failures)
    rc = kt__err(t.eb, KT_STORE,
                 "ktune: error: %d of this tuning's writes to the results database failed, so its results are "
                 "reported but not all kept: %s",
                 t.store_failures, t.store_eb.msg);
  /* An interrupt can make the reference fail; bad input stays bad input. */
  if (kt__interrupted && (rc == KT_OK || rc == KT_NOVALID))
    rc = kt__err(t.eb, KT_INTERRUPTED, "ktune: interrupted; the finished measurements are kept%s",
                 t.store ? " and a new run resumes from them" : "");
  return rc;
}
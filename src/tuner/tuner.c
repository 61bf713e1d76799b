/* The tuner: compile pool -> device worker -> verify -> record.
 *
 * One tuning runs in stages. The default configuration (first choices) is
 * compiled and run first; its outputs are the reference. The strategy then
 * proposes configurations, which the compile pool builds on every core while
 * the device worker verifies and times those already built. The fastest few
 * are re-timed in interleaved rounds and the winner is picked from those
 * rounds. Kernels with @cluster get a second stage over the cluster space,
 * with the @autotune winner fixed. Every measurement goes to the results
 * database as soon as it is made. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check/check.h"
#include "../handles/context.h"
#include "../search/policy.h"
#include "../search/strategy.h"
#include "../space/space.h"
#include "../workdir.h"
#include "pool.h"
#include "result.h"
#include "worker_client.h"

enum { DEFAULT_FINALISTS = 5, DEFAULT_ROUNDS = 7 };
/* sample_length's defaults. On the H200 (docs/BENCHMARKS.md, "The sample
 * length") 0.5 ms samples picked winners as good as 2 ms ones (regret at
 * most 0.03% against 0.14%, by a 10 ms yardstick) in a quarter of the
 * measuring time. The host keeps 2 ms: 0.5 ms there gave the same winners in
 * the two checks made (docs/BENCHMARKS.md, "Host timings under load"), too
 * few kernels to change its default on. */
#define SAMPLE_S_HOST 0.002
#define SAMPLE_S_DEVICE 0.0005
enum { MAX_WARM = 16 }; /* stored winners (other sizes, other devices) evaluated first */

/* A configuration string -> stored record, for resuming. */
typedef struct stored_entry {
  char *config;
  kt__record rec;
} stored_entry;

typedef struct tuning {
  kt_kernel *k;
  const kt__kernel_decl *d;
  kt__errbuf *eb;
  kt_tune_options o;
  int64_t *sizes;
  kt__env size_env;
  const kt__config *cfg; /* the kernel's names: tuned, then cluster */
  kt__argset *args;
  kt__constants *constants; /* @constant data, or NULL */
  kt__worker *worker;
  kt__pool *pool;
  kt_result *r;
  /* The device builds are for: the worker's, or before the worker opened
   * it, the one the application saw (kt_kernel.tune_device), for the
   * default's compile started meanwhile (early_default). */
  kt__device_info build_device;
  bool early_default;
  const char *workdir;
  kt__store *store;
  kt__store_key key;
  kt__sbuf key_sizes;
  stored_entry *stored;
  int nstored;
  double best_s;
  double sample_s; /* a timing sample's least length (sample_length) */
  double started;
  double deadline; /* started + the time budget; 0: none */
  /* What this run has measured so far, to foresee what fits in the time
   * budget: compiles, evaluations (the worker's round trip), and what a
   * finalist sample costs beyond its launches. */
  double compile_sum_s, eval_sum_s, sample_overhead_s;
  int compiles, evals;
  int done, planned; /* for progress */
  /* Configurations other than the default (always run: it is the
   * reference) sent to be built and measured in this run, not reused. */
  int measured_anew;
  bool tty;
  int fault_rc;       /* KT_INVALID once a configuration's expression failed to evaluate (in eb) */
  int store_failures; /* writes to the database that failed, the first in store_eb */
  kt__errbuf store_eb;
  /* How outputs are judged (plan_judging): the default's outputs are the
   * reference unless --expect, @reference or a check says otherwise; then
   * the default is measured like any configuration. */
  bool default_is_reference;
  bool default_valid; /* the default satisfies @where */
  bool has_check;
  kt__check check;
  kt__worker_setup setup; /* the worker's, kept for the @reference kernel's worker */
} tuning;

/* ---- helpers ---------------------------------------------------------- */

enum { MEASURE_ALLOWANCE_S = 2 }; /* a configuration's measurement, beyond its run */

static double run_limit(const tuning *t) {
  return t->k->ctx->opts.run_timeout_s > 0 ? t->k->ctx->opts.run_timeout_s : 10.0;
}

static double run_timeout(const tuning *t) { return run_limit(t) + MEASURE_ALLOWANCE_S; }

static double compile_timeout(const tuning *t) {
  return t->k->ctx->opts.compile_timeout_s > 0 ? t->k->ctx->opts.compile_timeout_s : 60.0;
}

static bool quiet(const tuning *t) { return t->k->ctx->opts.quiet; }

static int finalist_count(const tuning *t) {
  int nf = t->o.finalists > 0 ? t->o.finalists : DEFAULT_FINALISTS;
  return nf > 64 ? 64 : nf;
}

static int round_count(const tuning *t) { return t->o.rounds > 0 ? t->o.rounds : DEFAULT_ROUNDS; }

/* Fewer complete rounds than this (or than asked for) would decide on fewer
 * samples than the first pass took (min_samples in request_for): then the
 * first pass decides. */
enum { MIN_ROUNDS = 3 };

static int rounds_that_count(const tuning *t) { return round_count(t) < MIN_ROUNDS ? round_count(t) : MIN_ROUNDS; }

static void set_message(kt__trial *tr, const char *msg) {
  free(tr->message);
  tr->message = msg && *msg ? kt__xstrdup(msg) : NULL;
}

/* Keeps what the configuration printed in the worker, if anything. */
static void set_output(kt__trial *tr, const kt__output *o) {
  if (!o->total) return;
  free(tr->output);
  tr->output = kt__xstrndup(o->text, o->len);
  tr->output_bytes = o->total;
}

static int find_trial(const tuning *t, const int64_t *values) {
  for (int i = 0; i < t->r->ntrials; i++)
    if (memcmp(t->r->trials[i].values, values, (size_t)t->cfg->n * sizeof *values) == 0) return i;
  return -1;
}

static const stored_entry *find_stored(const tuning *t, const char *config) {
  for (int i = 0; i < t->nstored; i++)
    if (strcmp(t->stored[i].config, config) == 0) return &t->stored[i];
  return NULL;
}

/* ---- progress --------------------------------------------------------- */

/* --show-output: what the configuration printed, indented under its line. */
static void show_output(const kt__trial *tr) {
  const char *p = tr->output ? tr->output : "";
  while (*p) {
    size_t n = strcspn(p, "\n");
    fprintf(stderr, "      | %.*s\n", (int)n, p);
    p += n + (p[n] == '\n');
  }
  if (tr->output_bytes > strlen(tr->output ? tr->output : ""))
    fprintf(stderr, "      | ... (%llu bytes in all)\n", (unsigned long long)tr->output_bytes);
}

/* Counts TR as settled (the time is the report's search progress against
 * wall time) and prints its progress line. */
static void progress(tuning *t, kt__trial *tr) {
  tr->done_s = kt__now() - t->started;
  t->done++;
  if (quiet(t)) return;
  char best[32] = "-";
  if (t->best_s > 0) snprintf(best, sizeof best, "%.4g ms", t->best_s * 1e3);
  if (t->tty) {
    int total = t->planned > t->done ? t->planned : t->done, width = 30;
    int fill = total ? t->done * width / total : width;
    fprintf(stderr, "\r  [%.*s%*s] %d/%d  best %s   ", fill, "##############################", width - fill, "",
            t->done, total, best);
    return;
  }
  kt__sbuf cfg = {0};
  kt__result_config_string(t->r, tr, &cfg);
  if (tr->status == KT__ST_OK)
    fprintf(stderr, "  [%d] %s: ok %.4g ms%s\n", t->done, cfg.s, tr->stats.median * 1e3, tr->reused ? " (stored)" : "");
  else fprintf(stderr, "  [%d] %s: %s%s\n", t->done, cfg.s, kt__status_name(tr->status), tr->reused ? " (stored)" : "");
  kt__sbuf_free(&cfg);
  if (t->o.show_output && tr->output_bytes) show_output(tr);
}

static void progress_end(const tuning *t) {
  if (!quiet(t) && t->tty) fprintf(stderr, "\n");
}

/* ---- results database ------------------------------------------------- */

static void load_stored(void *ud, const kt__record *rec) {
  tuning *t = ud;
  t->stored = kt__xreallocarray(t->stored, (size_t)t->nstored + 1, sizeof *t->stored);
  stored_entry *e = &t->stored[t->nstored++];
  e->config = kt__xstrdup(rec->config);
  e->rec = *rec;
  e->rec.config = e->config;
  e->rec.message = rec->message ? kt__xstrdup(rec->message) : NULL;
}

/* A database that was asked for but cannot be opened (a directory, a
 * damaged file) is bad input: refusing before any measurement beats tuning
 * for minutes and keeping nothing. */
static int open_store(tuning *t) {
  t->store = kt__context_store(t->k->ctx);
  if (!t->store) return t->k->ctx->opts.no_db ? KT_OK : KT_STORE;
  t->r->db_path = kt__xstrdup(kt__store_path(t->store));
  kt__kernel_key_sizes(t->k, t->sizes, &t->key_sizes);
  t->key = (kt__store_key){t->k->source_hash, t->d->name, &t->r->device, t->key_sizes.s, NULL};
  kt__errbuf eb;
  if (!t->o.no_cache) kt__store_each(t->store, &t->key, load_stored, t, &eb);
  return KT_OK;
}

/* A write that failed (disk full, the database's folder removed) loses
 * results silently unless said: the first reason is kept for the error at
 * the end of the tuning, which then exits as a store error. */
static void store_failed(tuning *t, int rc) {
  if (rc == KT_OK) return;
  if (!t->store_failures++ && !quiet(t))
    fprintf(stderr, "ktune: warning: could not store a result: %s\n", t->store_eb.msg);
}

/* Records TR as it stands now; a trial taken from the database is recorded
 * again only when UPDATED (the finalist rounds re-timed it or it failed). */
static void record_trial(tuning *t, const kt__trial *tr, bool updated) {
  if (!t->store || (tr->reused && !updated) || tr->status == KT__ST_PENDING) return;
  /* After Ctrl-C a failure may be the interrupt's doing (a killed worker or
   * compiler): keep only what certainly stands, so a restart measures the
   * rest again. */
  if (kt__interrupted && tr->status != KT__ST_OK) return;
  kt__sbuf cfg = {0};
  kt__result_config_string(t->r, tr, &cfg);
  kt__record rec = {cfg.s, tr->status, tr->stats, tr->compile_s, tr->message, tr->outside};
  store_failed(t, kt__store_put(t->store, &t->key, &rec, t->store_failures ? &(kt__errbuf){{0}} : &t->store_eb));
  kt__sbuf_free(&cfg);
}

static void store_trial(tuning *t, const kt__trial *tr) { record_trial(t, tr, false); }

/* A stored failure is measured again when it was not the kernel's doing
 * (killed from outside), or when the caller asks (--retry-failed). */
static bool worth_reusing(const tuning *t, const kt__record *rec) {
  if (rec->status == KT__ST_OK) return true;
  return !rec->outside && !t->o.retry_failed;
}

/* Fills TR from the database when this configuration was measured before. */
static bool reuse_stored(tuning *t, kt__trial *tr) {
  if (!t->nstored) return false;
  kt__sbuf cfg = {0};
  kt__result_config_string(t->r, tr, &cfg);
  const stored_entry *e = find_stored(t, cfg.s);
  kt__sbuf_free(&cfg);
  if (!e || !worth_reusing(t, &e->rec)) return false;
  tr->status = e->rec.status;
  tr->stats = e->rec.stats;
  tr->compile_s = e->rec.compile_s;
  set_message(tr, e->rec.message);
  tr->reused = true;
  t->r->reused++;
  return true;
}

/* ---- the time budget -------------------------------------------------- */

/* --budget Ns bounds the wall time of the whole tuning (docs/FAULTS.md).
 * Work starts only when it is expected to end in time at the pace this run
 * has shown; what still runs at a deadline is cut off: compilations are
 * abandoned, worker requests are bounded by the time left. The search stops
 * early enough to leave the finalist rounds the time they need. The default
 * configuration is the exception: it is the reference, always run in full. */

/* The tuning's work after the finalist rounds: joining the compile threads
 * (an abandoned C compiler takes up to 50 ms to be killed and reaped), ending
 * the worker and storing the winner. */
static const double TEARDOWN_S = 0.1;
/* The finalists' reserve is at most this share of the budget: a slow default
 * would otherwise leave no time to search. */
static const double MAX_RESERVE_SHARE = 0.2;

static bool timed(const tuning *t) { return t->deadline > 0; }

static void ran_out(tuning *t) {
  if (!t->r->budget_ran_out) kt__trace("budget: ran out");
  t->r->budget_ran_out = true;
}

static double mean_of(double sum, int n) { return n > 0 ? sum / n : 0; }

/* Seconds one finalist sample of TR takes: its launches, and the worker's
 * work around them (restoring state, flushing caches) as the default's
 * measurement showed it. */
static double sample_cost(const tuning *t, const kt__trial *tr) {
  return tr->stats.reps * tr->stats.median + t->sample_overhead_s;
}

/* The time the finalist rounds need: a warm-up and every round, for each
 * finalist of the ranking so far and for the default, with the default's
 * cost for each finalist not found yet. Past its cap, the reserve keeps as
 * many rounds as fit, and nothing when too few to count would fit: the
 * search is then better off with the time. */
static double finalists_reserve(const tuning *t) {
  int nf = finalist_count(t), order[64];
  int n = kt__result_ranked(t->r, order, nf);
  const kt__trial *def = &t->r->trials[t->r->default_trial];
  double round = sample_cost(t, def) * (nf - n + 1);
  for (int i = 0; i < n; i++)
    if (order[i] != t->r->default_trial) round += sample_cost(t, &t->r->trials[order[i]]);
  double cap = MAX_RESERVE_SHARE * t->o.budget_s;
  if ((round_count(t) + 1) * round <= cap) return (round_count(t) + 1) * round;
  int fit = (int)(cap / round) - 1; /* after the warm-up */
  return fit >= rounds_that_count(t) ? (fit + 1) * round : 0;
}

/* When the search must have ended (0: no time budget). */
static double search_deadline(const tuning *t) {
  return timed(t) ? t->deadline - finalists_reserve(t) - TEARDOWN_S : 0;
}

/* When the finalist rounds must have ended (0: no time budget). */
static double rounds_deadline(const tuning *t) { return timed(t) ? t->deadline - TEARDOWN_S : 0; }

/* Whether one more configuration, queued behind PENDING others, can still be
 * compiled (on every thread) and evaluated (one at a time) before the search
 * deadline. */
static bool time_for_one_more(tuning *t, int pending) {
  if (!timed(t)) return true;
  int ahead = pending + 1;
  double need = ceil((double)ahead / t->r->compile_threads) * mean_of(t->compile_sum_s, t->compiles) +
                ahead * mean_of(t->eval_sum_s, t->evals);
  double left = search_deadline(t) - kt__now();
  if (need <= left) return true;
  kt__trace("budget: no time for another configuration (%.3f s needed, %.3f s left before the finalists' %.3f s)", need,
            left, finalists_reserve(t));
  ran_out(t);
  return false;
}

/* How long to wait for compiles while N compiled configurations wait to be
 * evaluated: until there is just time left to evaluate those and one more
 * (0: no limit). */
static double collect_deadline(const tuning *t, int n) {
  return timed(t) ? search_deadline(t) - (n + 1) * mean_of(t->eval_sum_s, t->evals) : 0;
}

/* Compiles still queued or running when the time is up are given up: a C
 * compiler is killed, NVRTC left to finish in its thread. */
static void abandon_late(tuning *t) {
  if (!timed(t) || kt__pool_pending(t->pool) == 0) return;
  int n = kt__pool_abandon(t->pool);
  kt__trace("budget: %d compilations abandoned", n);
  t->r->compiles_abandoned += n;
  ran_out(t);
}

/* Configurations the budget left unmeasured say so (--json "message"). */
static void mark_unmeasured(tuning *t) {
  for (int i = 0; t->r->budget_ran_out && i < t->r->ntrials; i++) {
    kt__trial *tr = &t->r->trials[i];
    if (tr->status == KT__ST_PENDING && !tr->message) set_message(tr, "not measured: the time budget ran out");
  }
}

/* ---- compile and evaluate --------------------------------------------- */

static kt__compile_job *make_job(tuning *t, const kt__trial *tr) {
  char tag[32];
  snprintf(tag, sizeof tag, "c%llu", (unsigned long long)tr->id);
  kt__build b = {.decl = t->d,
                 .names = t->cfg->names,
                 .values = tr->values,
                 .n = t->cfg->n,
                 .device = &t->build_device,
                 .workdir = t->workdir,
                 .tag = tag,
                 .timeout_s = compile_timeout(t),
                 .bincache = &t->k->ctx->bincache};
  return kt__compile_job_new(tr->id, t->k->file, &b);
}

static void submit(tuning *t, const kt__trial *tr) {
  if (!tr->is_default && !tr->reused) t->measured_anew++;
  kt__pool_submit(t->pool, make_job(t, tr));
}

/* A timing sample's least length, so that the clock's resolution and a
 * launch's own cost are lost in it: KTUNE_SAMPLE_S (checked by
 * kt_context_create), else SAMPLE_S_HOST on the host's own cores, where a
 * sample shorter than the scheduler's slice is often cut by preemption, or
 * SAMPLE_S_DEVICE on a device timed by its own events
 * (bench/sample_length_h200.sh compares lengths on the H200). */
static double sample_length(const kt__device_info *dev) {
  const char *v = getenv("KTUNE_SAMPLE_S");
  double s = v && *v ? strtod(v, NULL) : 0;
  if (s > 0) return s;
  return dev->host_cpu ? SAMPLE_S_HOST : SAMPLE_S_DEVICE;
}

static void request_for(const tuning *t, const kt__trial *tr, kt__req_kind kind, kt__request *req) {
  memset(req, 0, sizeof *req);
  req->kind = kind;
  req->id = tr->id;
  req->nvalues = t->cfg->n;
  memcpy(req->values, tr->values, (size_t)t->cfg->n * sizeof *tr->values);
  if (tr->artifact) snprintf(req->artifact, sizeof req->artifact, "%s", tr->artifact);
  /* The worker times the verified run and hands it to kt__measure as the
   * first launch (first_s), in place of a warm-up. */
  req->measure = (kt__measure_opts){
      .min_sample_s = t->sample_s, .min_samples = 3, .max_samples = 20, .max_total_s = 0.25, .best_s = t->best_s};
}

/* Asks the worker, waiting at most the run timeout and, with a time budget,
 * no later than UNTIL (0: no limit). A request the budget cuts off, or has
 * no time left for, is no fault of the configuration: it comes back PENDING,
 * so that nothing is recorded and a later run measures it. */
static void ask_worker(tuning *t, const kt__request *req, kt__reply *rep, double until) {
  double timeout = run_timeout(t), left = until > 0 ? until - kt__now() : timeout;
  if (left <= 0) {
    *rep = (kt__reply){.status = KT__ST_PENDING};
    snprintf(rep->msg, sizeof rep->msg, "not measured: the time budget ran out");
    ran_out(t);
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
    ran_out(t);
  } else if (rep->status == KT__ST_TIMEOUT) { /* the limit that applied, and why it is not the run timeout */
    snprintf(rep->msg, sizeof rep->msg, "exceeded %g s: the run timeout of %g s plus %d s for measuring the run",
             timeout, run_limit(t), (int)MEASURE_ALLOWANCE_S);
  } else if (req->kind == KT__REQ_EVAL && rep->status != KT__ST_PENDING) {
    t->eval_sum_s += took;
    t->evals++;
  }
}

/* Takes a finished compile job: records a compile failure, or keeps the
 * artifact for the worker. Returns true when the trial can run. */
static bool take_compiled(tuning *t, kt__compile_job *j, kt__trial *tr) {
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
  if (!ok) {
    tr->status = j->status == KT__ST_PENDING ? KT__ST_PENDING : KT__ST_COMPILE;
    set_message(tr, j->artifact.log ? j->artifact.log : j->err.msg);
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
static void ask_twice_on_failure(tuning *t, const kt__request *req, kt__reply *rep, bool only_outside, double until) {
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

/* Backends that build at load build in the worker: its first reply for a
 * configuration says how the binary cache served that build. */
static void note_load_build(kt__trial *tr, const kt__reply *rep) {
  if (!tr->compile_use) tr->compile_use = rep->compile_use;
}

/* One verified run and measurement, bounded by UNTIL (0: no limit). */
static void evaluate(tuning *t, kt__trial *tr, kt__req_kind kind, double until) {
  kt__request req;
  kt__reply rep;
  request_for(t, tr, kind, &req);
  ask_twice_on_failure(t, &req, &rep, false, until);
  tr->outside = rep.status != KT__ST_OK && rep.outside;
  tr->status = rep.status;
  set_message(tr, rep.msg);
  set_output(tr, &rep.output);
  tr->load_s = rep.load_s, tr->verify_s = rep.verify_s, tr->measure_s = rep.measure_s;
  note_load_build(tr, &rep);
  t->r->load_s += rep.load_s, t->r->verify_s += rep.verify_s, t->r->measure_s += rep.measure_s;
  if (rep.status == KT__ST_OK) {
    tr->stats = rep.stats;
    if (t->best_s <= 0 || rep.stats.median < t->best_s) t->best_s = rep.stats.median;
  }
}

/* ---- the reference (default configuration) ---------------------------- */

/* What the default's measurement tells of the finalist samples' cost, and
 * whether it alone spent the time budget (it is always run, and said so). */
static void reference_timing(tuning *t, const kt__trial *def) {
  const kt__stats *st = &def->stats;
  if (st->nsamples > 0) t->sample_overhead_s = fmax(def->measure_s / st->nsamples - st->reps * st->median, 0);
  if (!timed(t) || kt__now() < t->deadline) return;
  t->r->reference_over_budget = true;
  ran_out(t);
  if (!quiet(t))
    fprintf(stderr,
            "ktune: note: the default configuration is always run in full, as the reference: it took %.2f s "
            "(%.2f s with the setup) of the %g s budget, and nothing else was tried\n",
            kt__now() - t->started - t->r->setup_s, kt__now() - t->started, t->o.budget_s);
}

/* Compile-time names for building another kernel of the file than the one
 * tuned (the @reference kernel, @check's function): its own configuration
 * FIRST (NULL: none), then every other tuned name of the file at its first
 * choice, since the file is compiled as a whole and the tuned kernel's code
 * uses its names too. Returns the count (at most KT__MAX_NAMES). */
static int file_defines(const tuning *t, const kt__config *first, const char **names, int64_t *values) {
  int n = 0;
  for (int i = 0; first && i < first->n && n < KT__MAX_NAMES; i++, n++)
    names[n] = first->names[i], values[n] = first->defaults[i];
  const kt__file *f = t->k->file;
  for (int k = -1; k < f->nkernels; k++) {
    const kt__kernel_decl *d = k < 0 ? t->d : &f->kernels[k];
    for (int i = 0; i < d->ntune + d->ncluster; i++) {
      const kt__tunedim *td = i < d->ntune ? &d->tune[i] : &d->cluster[i - d->ntune];
      bool seen = false;
      for (int j = 0; j < n && !seen; j++) seen = strcmp(names[j], td->name) == 0;
      if (!seen && n < KT__MAX_NAMES) names[n] = td->name, values[n++] = td->values[0];
    }
  }
  return n;
}

/* The @reference kernel, with its own first choices, run once in a worker
 * of its own on the same buffers: its outputs become the reference. */
static int run_reference_kernel(tuning *t) {
  const kt__kernel_decl *rd = t->k->reference;
  const char *path = t->k->file->src.path;
  kt__config rc;
  kt__config_init(&rc, rd);
  const char *names[KT__MAX_NAMES];
  int64_t values[KT__MAX_NAMES];
  kt__build b = {.decl = rd,
                 .names = names,
                 .values = values,
                 .n = file_defines(t, &rc, names, values),
                 .device = &t->r->device,
                 .workdir = t->workdir,
                 .tag = "reference",
                 .timeout_s = compile_timeout(t)};
  kt__pool_submit(t->pool, kt__compile_job_new(UINT64_MAX, t->k->file, &b));
  kt__compile_job *j = kt__pool_wait(t->pool);
  int result = KT_OK;
  if (j->status != KT__ST_OK) {
    result = kt__err(t->eb, KT_NOVALID, "%s: error: the reference kernel %s (@reference) does not compile:\n%s", path,
                     rd->name, j->artifact.log ? j->artifact.log : j->err.msg);
    kt__compile_job_free(j);
    kt__config_free(&rc);
    return result;
  }
  kt__worker_setup ws = t->setup;
  ws.decl = rd;
  ws.check = NULL;
  ws.extra_names = names + rc.n; /* for backends that build in the worker (OpenCL) */
  ws.extra_values = values + rc.n;
  ws.nextra = b.n - rc.n;
  kt__worker *w = NULL;
  kt__device_info info;
  result = kt__worker_start(&ws, &info, &w, t->eb);
  if (result == KT_OK) {
    kt__request req = {.kind = KT__REQ_REFERENCE, .id = 0, .nvalues = rc.n};
    memcpy(req.values, rc.defaults, (size_t)rc.n * sizeof *rc.defaults);
    if (j->artifact.path) snprintf(req.artifact, sizeof req.artifact, "%s", j->artifact.path);
    kt__reply *rep = kt__xcalloc(1, sizeof *rep);
    kt__worker_request(w, &req, rep, run_timeout(t));
    if (rep->status != KT__ST_OK)
      result = kt__err(t->eb, KT_NOVALID,
                       "%s: error: the reference kernel %s (@reference) failed with status %s; its outputs are what "
                       "every configuration is verified against, so it must work:\n%s",
                       path, rd->name, kt__status_name(rep->status), rep->msg);
    free(rep);
  }
  kt__worker_stop(w);
  kt__trace("reference: @reference kernel run");
  kt__compile_job_free(j);
  kt__config_free(&rc);
  return result;
}

/* With a reference other than the default (--expect, @reference, a
 * check), the default is one configuration among others: it may fail. */
static int run_default(tuning *t) {
  if (t->k->reference) KT__FORWARD(run_reference_kernel(t));
  kt__trial *tr = kt__result_add(t->r, t->cfg->defaults, 0);
  tr->is_default = true;
  tr->space_index = UINT64_MAX;
  t->r->default_trial = (int)tr->id;
  if (!t->default_valid) {
    tr->status = KT__ST_CONSTRAINT;
    set_message(tr, "the default configuration violates @where; it is not the reference here, so it is not run");
    progress(t, tr);
    return KT_OK;
  }
  submit(t, tr);
  kt__compile_job *j = kt__pool_wait(t->pool);
  tr = &t->r->trials[t->r->default_trial];
  if (take_compiled(t, j, tr)) evaluate(t, tr, KT__REQ_EVAL, 0);
  progress(t, tr);
  store_trial(t, tr);
  if (tr->status == KT__ST_OK) reference_timing(t, tr);
  return KT_OK;
}

static int run_reference(tuning *t) {
  if (!t->default_is_reference) return run_default(t);
  kt__trial *tr = kt__result_add(t->r, t->cfg->defaults, 0);
  tr->is_default = true;
  tr->space_index = UINT64_MAX;
  t->r->default_trial = (int)tr->id;
  if (!t->early_default) submit(t, tr); /* else its job is the first the pool finishes */
  kt__compile_job *j = kt__pool_wait(t->pool);
  kt__trace("reference: compiled");
  tr = &t->r->trials[t->r->default_trial];
  if (take_compiled(t, j, tr)) {
    kt__request req;
    kt__reply rep;
    request_for(t, tr, KT__REQ_REFERENCE, &req);
    ask_twice_on_failure(t, &req, &rep, false, 0);
    kt__trace("reference: run and kept");
    tr->status = rep.status;
    set_message(tr, rep.msg);
    set_output(tr, &rep.output);
    note_load_build(tr, &rep);
    if (rep.status == KT__ST_OK) evaluate(t, tr, KT__REQ_EVAL, 0);
    kt__trace("reference: verified and measured");
  }
  progress(t, tr);
  store_trial(t, tr);
  if (tr->status != KT__ST_OK) {
    kt__sbuf cfg = {0};
    kt__result_config_string(t->r, tr, &cfg);
    kt__err(t->eb, KT_NOVALID,
            "%s: error: the default configuration (%s) failed with status %s; it is the reference every other "
            "configuration is verified against, so it must work:\n%s",
            t->k->file->src.path, cfg.s, kt__status_name(tr->status), tr->message ? tr->message : "");
    kt__sbuf_free(&cfg);
    return KT_NOVALID;
  }
  reference_timing(t, tr);
  return KT_OK;
}

/* ---- one search stage ------------------------------------------------- */

typedef struct stage {
  kt__space *space;
  kt__strategy *strategy;
  int stage;  /* 0 @autotune, 1 @cluster */
  int offset; /* where this stage's names start in values */
  int64_t base[KT__MAX_NAMES];
  long budget; /* 0: none */
  long asked;
  bool exhausted;
  uint64_t warm[MAX_WARM]; /* indices evaluated by warm_start, already counted */
  int nwarm;
} stage;

static kt__trial *trial_for_index(tuning *t, stage *s, uint64_t index) {
  int64_t values[KT__MAX_NAMES];
  memcpy(values, s->base, sizeof values);
  kt__space_values(s->space, index, values + s->offset);
  int existing = find_trial(t, values);
  if (existing >= 0) return &t->r->trials[existing];
  kt__trial *tr = kt__result_add(t->r, values, s->stage);
  tr->space_index = index;
  return tr;
}

static bool out_of_budget(tuning *t, const stage *s) {
  if (kt__interrupted) return true;
  if (s->budget > 0 && s->asked >= s->budget) return true;
  return !time_for_one_more(t, kt__pool_pending(t->pool));
}

static void finish_trial(tuning *t, stage *s, kt__trial *tr) {
  double secs = tr->status == KT__ST_OK ? tr->stats.median : INFINITY;
  if (tr->space_index != UINT64_MAX) kt__strategy_tell(s->strategy, tr->space_index, tr->status, secs);
  if (tr->status == KT__ST_OK && (t->best_s <= 0 || tr->stats.median < t->best_s)) t->best_s = tr->stats.median;
  progress(t, tr);
  store_trial(t, tr);
}

static bool was_warm(const stage *s, uint64_t index) {
  for (int i = 0; i < s->nwarm; i++)
    if (s->warm[i] == index) return true;
  return false;
}

/* The whole configuration (both stages) at INDEX of stage S's space. */
static void stage_values(const stage *s, uint64_t index, int64_t *values) {
  memcpy(values, s->base, sizeof s->base);
  kt__space_values(s->space, index, values + s->offset);
}

/* A configuration where an expression cannot be evaluated (@where(A / (A -
 * 2) > 1) at A=2) is bad input, found for the first configuration that shows
 * it: never counted as excluded, never run as a constraint failure. */
static int report_fault(tuning *t, const int64_t *values, const kt__space_fault *f) {
  kt__env config = {t->cfg->names, values, t->cfg->n, NULL};
  kt__space_fault_error(&t->k->file->src, &config, &t->size_env, f, t->eb);
  return t->fault_rc = KT_INVALID;
}

/* A @where that failed while the strategy looked for valid configurations. */
static bool space_faulted(tuning *t, const stage *s) {
  kt__space_fault f = kt__space_first_fault(s->space);
  if (!f.found) return false;
  int64_t values[KT__MAX_NAMES];
  stage_values(s, f.index, values);
  report_fault(t, values, &f);
  return true;
}

/* The other expressions of a configuration about to be compiled. */
static bool config_faulted(tuning *t, const int64_t *values) {
  kt__env env = {t->cfg->names, values, t->cfg->n, &t->size_env};
  kt__space_fault f = {.found = true};
  if (kt__decl_check_config(t->d, &env, &f.err, &f.what) == 0) return false;
  report_fault(t, values, &f);
  return true;
}

/* Asks the strategy for more work until the pool holds enough to keep all
 * compile threads and the device busy. */
static void refill(tuning *t, stage *s, int want) {
  while (!t->fault_rc && !s->exhausted && !out_of_budget(t, s) && kt__pool_pending(t->pool) < want) {
    uint64_t idx;
    int asked = kt__strategy_ask(s->strategy, &idx, 1);
    if (space_faulted(t, s)) break;
    if (asked == 0) {
      s->exhausted = true;
      break;
    }
    if (!was_warm(s, idx)) s->asked++; /* warm starts were counted when they ran */
    kt__trial *tr = trial_for_index(t, s, idx);
    if (tr->status != KT__ST_PENDING) { /* the default or a warm start, measured already */
      kt__strategy_tell(s->strategy, idx, tr->status, tr->status == KT__ST_OK ? tr->stats.median : INFINITY);
      continue;
    }
    tr->space_index = idx;
    if (config_faulted(t, tr->values)) break;
    if (reuse_stored(t, tr)) {
      finish_trial(t, s, tr);
      continue;
    }
    submit(t, tr);
  }
}

/* Backends that build at load time (OpenCL) get the batch queued first, so
 * that the worker builds it on all cores rather than one build per trial. */
static void prebuild(tuning *t, kt__compile_job **jobs, int n) {
  if (!t->k->backend->builds_at_load) return;
  for (int i = 0; i < n; i++) {
    if (jobs[i]->status != KT__ST_OK) continue;
    kt__request req;
    kt__reply rep;
    request_for(t, &t->r->trials[jobs[i]->id], KT__REQ_PREBUILD, &req);
    ask_worker(t, &req, &rep, search_deadline(t));
  }
}

/* When kernels run on the host's cores, compile a batch on every core, then
 * time it with the cores quiet, and repeat. Backends that build at load time
 * also go batch by batch, so that a batch can be built at once. */
static void run_stage_batched(tuning *t, stage *s) {
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
    while ((j = kt__pool_wait_until(t->pool, collect_deadline(t, n))) != NULL) {
      if (n == batch) jobs = kt__xreallocarray(jobs, (size_t)(batch *= 2) + 1, sizeof *jobs);
      jobs[n++] = j;
    }
    abandon_late(t);
    if (n == 0) break;
    prebuild(t, jobs, n);
    for (int i = 0; i < n; i++) {
      kt__trial *tr = &t->r->trials[jobs[i]->id];
      if (take_compiled(t, jobs[i], tr) && !kt__interrupted) evaluate(t, tr, KT__REQ_EVAL, search_deadline(t));
      if (tr->status != KT__ST_PENDING) finish_trial(t, s, tr);
    }
    if (kt__interrupted) break;
  }
  free(jobs);
}

/* Otherwise the pool keeps compiling while the device times what is ready. */
static void run_stage(tuning *t, stage *s) {
  if (t->r->device.host_cpu || t->k->backend->builds_at_load) {
    run_stage_batched(t, s);
    return;
  }
  int want = 2 * t->r->compile_threads + 2;
  refill(t, s, want);
  kt__compile_job *j;
  while ((j = kt__pool_wait_until(t->pool, collect_deadline(t, 0))) != NULL) {
    kt__trial *tr = &t->r->trials[j->id];
    if (take_compiled(t, j, tr) && !kt__interrupted) evaluate(t, tr, KT__REQ_EVAL, search_deadline(t));
    if (tr->status == KT__ST_PENDING) continue; /* cancelled by an interrupt, or out of time */
    finish_trial(t, s, tr);
    if (kt__interrupted) kt__pool_cancel_queued(t->pool);
    else refill(t, s, want);
  }
  abandon_late(t);
}

/* ---- warm start ------------------------------------------------------- */

typedef struct warm_configs {
  const tuning *t;
  int64_t values[MAX_WARM][KT__MAX_NAMES];
  int n;
} warm_configs;

static void collect_winner(void *ud, const char *sizes, const char *config, double seconds) {
  warm_configs *w = ud;
  if (w->n == MAX_WARM) return;
  memcpy(w->values[w->n], w->t->cfg->defaults, (size_t)w->t->cfg->n * sizeof w->values[0][0]);
  kt__config_read(w->t->cfg, config, w->values[w->n]);
  w->n++;
}

/* Compiles what was submitted (all cores), then evaluates it (cores quiet
 * when kernels run on the host). At most MAX_WARM jobs are in the pool. */
static void run_submitted(tuning *t, stage *s) {
  kt__compile_job *jobs[MAX_WARM];
  int n = 0;
  kt__compile_job *j;
  while ((j = kt__pool_wait_until(t->pool, collect_deadline(t, n))) != NULL) jobs[n++] = j;
  abandon_late(t);
  for (int i = 0; i < n; i++) {
    kt__trial *tr = &t->r->trials[jobs[i]->id];
    if (take_compiled(t, jobs[i], tr) && !kt__interrupted) evaluate(t, tr, KT__REQ_EVAL, search_deadline(t));
    if (tr->status != KT__ST_PENDING) finish_trial(t, s, tr);
  }
}

/* Warm start: the configurations that won for this kernel on this device
 * at other sizes, then on other devices, are evaluated before the
 * strategy's first proposal, and
 * the strategy is told their results (finish_trial), so a good
 * configuration is known from the start. They count against the budget
 * once; refill does not evaluate or count them again when proposed. */
static void warm_start(tuning *t, stage *s) {
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
    if (reuse_stored(t, tr)) finish_trial(t, s, tr);
    else submit(t, tr);
  }
  if (s->nwarm && !quiet(t))
    fprintf(stderr,
            "  warm start: %d configuration%s that won at other sizes or on other devices first (%d stored "
            "here, %d elsewhere)\n",
            s->nwarm, s->nwarm == 1 ? "" : "s", here, w->n - here);
  run_submitted(t, s);
  free(w);
}

/* ---- strategy choice -------------------------------------------------- */

/* Counts the valid configurations of stage WHICH's SPACE (the other
 * stage's names at BASE) when it is small enough to visit, and checks that
 * each one's expressions evaluate. */
static int sweep(tuning *t, const kt__space *space, int which, const int64_t *base, uint64_t *valid) {
  kt__space_fault f;
  *valid = kt__space_sweep(space, t->d, KT__VALID_COUNT_MAX, &f);
  if (!f.found) return KT_OK;
  int64_t values[KT__MAX_NAMES];
  memcpy(values, base, (size_t)t->cfg->n * sizeof *values);
  kt__space_values(space, f.index, values + kt__config_stage_first(t->cfg, which));
  return report_fault(t, values, &f);
}

static int unknown_strategy(tuning *t) {
  kt__sbuf names = {0};
  for (const char *const *n = kt__strategy_names(); *n; n++) kt__sbuf_printf(&names, "%s%s", names.len ? ", " : "", *n);
  kt__err(t->eb, KT_INVALID, "strategy %s: no such strategy; choose one of: %s", t->o.strategy, names.s);
  kt__sbuf_free(&names);
  return KT_INVALID;
}

static int choose_strategy(tuning *t, stage *s, const kt__strategy_ops **ops) {
  /* check_space counted the first stage's valid configurations. */
  uint64_t valid = s->stage == 0 ? t->r->valid_size : 0;
  if (s->stage != 0) KT__FORWARD(sweep(t, s->space, s->stage, s->base, &valid));
  kt__strategy_choice c = kt__strategy_choose(t->o.strategy, valid, t->o.budget_configs, t->o.budget_s, s->stage);
  if (!(*ops = c.ops)) return unknown_strategy(t);
  s->budget = c.budget;
  if (s->stage == 0) {
    t->r->strategy = kt__xstrdup((*ops)->name);
    t->r->strategy_reason = kt__xstrdup(c.reason);
    t->r->budget = s->budget;
    t->planned += (int)(s->budget > 0 && (uint64_t)s->budget < valid ? (uint64_t)s->budget : valid);
  } else {
    t->planned += (int)valid;
  }
  return KT_OK;
}

/* The env that binds the other stage's names while @where is evaluated. The
 * values are a copy: the winner's trial moves as trials are added. */
typedef struct other_names {
  int64_t values[KT__MAX_NAMES];
  kt__env env;
} other_names;

static void bind_other(const tuning *t, int which, const int64_t *values, other_names *o) {
  int from = kt__config_stage_first(t->cfg, which), count = kt__config_stage_count(t->cfg, which);
  memcpy(o->values, values + from, (size_t)count * sizeof *values);
  o->env = (kt__env){t->cfg->names + from, o->values, count, &t->size_env};
}

/* The space of stage WHICH, with the other stage's names bound to BASE (in
 * OTHER, which must outlive it) and this stage's --autotune pins applied
 * (parsed once, by kt_kernel_pin); warnings about pinned values go to WARN
 * (may be NULL). */
static int stage_space(tuning *t, int which, const int64_t *base, other_names *other, kt__sbuf *warn, kt__space **out) {
  const kt__kernel_decl *d = t->d;
  bind_other(t, !which, base, other);
  const kt__tunedim *dims = which ? d->cluster : d->tune;
  int ndims = which ? d->ncluster : d->ntune;
  KT__FORWARD(kt__space_create(dims, ndims, d->where, d->nwhere, &other->env, out, t->eb));
  kt__config_pins pins = kt__config_pins_stage(t->cfg, &t->k->pins, which);
  kt__space_pin_values(*out, &pins, warn);
  return KT_OK;
}

/* Whether the default configuration's outputs are the reference: no
 * --expect file, @reference or check gives another. */
static bool reference_is_default(const tuning *t) {
  for (int i = 0; i < t->d->nparams; i++)
    if (t->k->expects[i].path) return false;
  return !t->k->reference && !t->o.check && !t->k->check_path && !t->d->check;
}

/* Before anything runs: the default must satisfy @where when it is the
 * reference (bad input otherwise), and the pinned space must hold a valid
 * configuration; otherwise no result is made, so that no winner is ever
 * picked from outside the space. Gives the space's size and valid count. */
static int check_space(tuning *t, uint64_t *size, uint64_t *valid) {
  other_names other;
  kt__space *space;
  KT__FORWARD(stage_space(t, 0, t->cfg->defaults, &other, NULL, &space));
  /* The default must satisfy @where when it is the reference; otherwise it
   * is one configuration among others, and one @where leaves out. */
  kt__errbuf scratch;
  int rc = kt__space_check_default(space, t->k->file->src.path, reference_is_default(t) ? t->eb : &scratch);
  t->default_valid = rc == KT_OK;
  if (!reference_is_default(t)) rc = KT_OK;
  *size = kt__space_size(space);
  *valid = 0;
  if (rc == KT_OK && config_faulted(t, t->cfg->defaults)) rc = t->fault_rc; /* the reference, however large the space */
  if (rc == KT_OK) rc = sweep(t, space, 0, t->cfg->defaults, valid);
  if (rc == KT_OK && *valid == 0)
    rc = kt__space_none_valid(space, t->k->file->src.path, t->d->name, t->k->ctx->opts.labels.pin, t->eb);
  kt__space_free(space);
  return rc;
}

/* --autotune pins the space; the default still runs as the reference, but
 * outside the pinned space it must not win (the caller asked for B=8). */
static void exclude_default_outside_pins(tuning *t, const kt__space *space) {
  if (t->r->default_trial < 0) return;
  uint64_t index = kt__space_index_of(space, t->cfg->defaults);
  t->r->trials[t->r->default_trial].reference_only = index == UINT64_MAX || kt__space_valid_index(space, index) != 1;
}

static int search(tuning *t, int which, const int64_t *base) {
  stage s = {.stage = which, .offset = kt__config_stage_first(t->cfg, which)};
  memcpy(s.base, base, (size_t)t->cfg->n * sizeof *base);
  other_names other;
  kt__sbuf warn = {0};
  int rc = stage_space(t, which, base, &other, &warn, &s.space);
  if (rc != KT_OK) goto done;
  if (warn.len && !quiet(t) && which == 0) fputs(warn.s, stderr);
  if (which == 0) exclude_default_outside_pins(t, s.space);
  const kt__strategy_ops *ops;
  if ((rc = choose_strategy(t, &s, &ops)) != KT_OK) goto done;
  if (t->o.bench_only) s.budget = 1;
  s.strategy = kt__strategy_create(ops, s.space, t->o.seed ? t->o.seed : 42, s.budget);
  warm_start(t, &s);
  run_stage(t, &s);
  if (t->fault_rc) rc = t->fault_rc;
  kt__strategy_free(s.strategy);
done:
  kt__sbuf_free(&warn);
  kt__space_free(s.space);
  return rc;
}

/* ---- finalists -------------------------------------------------------- */

/* Reused trials have no compiled file yet: build them for the rounds, as
 * far as the time budget allows (one not built in time sits them out). */
static void compile_missing(tuning *t, const int *order, int n) {
  for (int i = 0; i < n; i++)
    if (!t->r->trials[order[i]].artifact && !t->k->backend->builds_at_load) submit(t, &t->r->trials[order[i]]);
  kt__compile_job *j;
  while ((j = kt__pool_wait_until(t->pool, rounds_deadline(t))) != NULL) {
    kt__trial *tr = &t->r->trials[j->id];
    if (!take_compiled(t, j, tr)) tr->status = KT__ST_COMPILE;
  }
  abandon_late(t);
}

static bool in_rounds(const tuning *t, const kt__trial *tr) {
  return tr->status == KT__ST_OK && (tr->artifact || !kt__be_compiles(t->k->backend));
}

/* One round: a sample of each finalist, rotated so that none always runs
 * first. False when the time budget or an interrupt cut it short. */
static bool one_round(tuning *t, const int *order, int n, int round, double *samples, int *taken) {
  for (int k = 0; k < n; k++) {
    int i = (k + round + n) % n;
    kt__trial *tr = &t->r->trials[order[i]];
    if (!in_rounds(t, tr)) continue;
    kt__request req;
    kt__reply rep;
    request_for(t, tr, KT__REQ_SAMPLE, &req);
    req.reps = tr->stats.reps > 0 ? tr->stats.reps : 1;
    ask_twice_on_failure(t, &req, &rep, true, rounds_deadline(t));
    if (rep.status == KT__ST_PENDING) return false;
    if (rep.status != KT__ST_OK) {
      tr->status = rep.status; /* a finalist that fails now is not trusted */
      tr->outside = rep.outside;
      set_message(tr, rep.msg);
      set_output(tr, &rep.output);
      continue;
    }
    if (round >= 0) samples[i * round_count(t) + taken[i]++] = rep.sample_s;
  }
  return true;
}

/* Whether the rounds so far decide the winner (kt__rounds_verdict_of).
 * Only finalists with a sample in each of the COMPLETE rounds count. */
static kt__rounds_verdict rounds_decided(const tuning *t, const int *order, int n, const double *samples,
                                         const int *taken, int complete) {
  bool counts[65];
  for (int i = 0; i < n; i++) counts[i] = in_rounds(t, &t->r->trials[order[i]]) && taken[i] >= complete;
  return kt__rounds_verdict_of(samples, round_count(t), n, complete, counts, &t->r->rounds_spread);
}

static void finalist_rounds(tuning *t) {
  int rounds = round_count(t);
  int order[65];
  int n = kt__result_ranked(t->r, order, finalist_count(t));
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
    if (in_rounds(t, &t->r->trials[order[i]])) foreseen += sample_cost(t, &t->r->trials[order[i]]);
  int complete = 0;
  /* Round -1 warms up: a finalist taken from the database has not run in
   * this worker yet, and its first sample would carry the loading. Rounds
   * too few to count are not started. */
  int need = rounds_that_count(t) + 1;
  for (int round = -1; round < rounds && !kt__interrupted; round++, need--) {
    double start = kt__now();
    if (timed(t) && start + (need > 1 ? need : 1) * foreseen > rounds_deadline(t)) {
      ran_out(t);
      break;
    }
    if (!one_round(t, order, n, round, samples, taken)) break;
    foreseen = kt__now() - start;
    complete += round >= 0;
    /* After the last round too, for the leader's spread that --json reports. */
    kt__rounds_verdict v = complete >= rounds_that_count(t) && round >= 0
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
    if (complete >= rounds_that_count(t) && taken[i] > 0 && tr->status == KT__ST_OK) {
      kt__stats_compute(samples + i * rounds, taken[i] < complete ? taken[i] : complete, tr->stats.reps, &tr->stats);
      tr->final_s = tr->stats.median;
    }
    if (!kt__interrupted) record_trial(t, tr, true);
  }
  free(samples);
  free(taken);
}

/* The trial of the configuration CONFIG that may win (ok), or -1. */
static int ok_trial_of(const tuning *t, const char *config) {
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
 * narrower run (--pin) or an import is decided again. --retry-failed asks
 * for measuring again, and so for the rounds; --no-cache reuses nothing.
 * True when the winner was kept. */
static bool keep_stored_winner(tuning *t) {
  if (!t->store || t->o.no_cache || t->o.retry_failed || t->o.bench_only || t->measured_anew > 0 || t->r->reused == 0)
    return false;
  char *config = NULL;
  double seconds;
  kt__errbuf eb;
  if (kt__store_winner(t->store, &t->key, &config, &seconds, &eb) != KT_OK) return false;
  int found = ok_trial_of(t, config);
  free(config);
  if (found < 0) return false;
  for (int i = 0; i < t->r->ntrials; i++) {
    const kt__trial *tr = &t->r->trials[i];
    if (i != found && tr->reused && tr->status == KT__ST_OK && kt__trial_seconds(tr) < seconds) return false;
  }
  t->r->winner = found;
  t->r->kept_stored = true;
  kt__trace("finalists: nothing measured anew; the stored winner is kept");
  return true;
}

static void pick_winner(tuning *t) {
  if (t->r->kept_stored) return;
  int best;
  t->r->winner = kt__result_ranked(t->r, &best, 1) ? best : -1;
}

/* ---- setup and teardown ----------------------------------------------- */

static double eval_work(const tuning *t, const kt__expr *e) {
  if (!e) return 0;
  kt__env env = {t->cfg->names, t->cfg->defaults, t->cfg->n, &t->size_env};
  int64_t v;
  kt__eval_error ee;
  return kt__expr_eval(e, &env, &v, &ee) == 0 ? (double)v : 0;
}

static void describe_sizes(tuning *t) {
  kt__sbuf b = {0};
  kt__config_format((const char *const *)t->d->sizes, t->sizes, t->d->nsizes, "", &b);
  t->r->sizes = b.s;
}

/* Messages from the argument setup point at "line:col: ..." or nowhere;
 * the user needs the file too, in the `file:line:col: error:` form. */
static int locate_error(tuning *t, int rc) {
  char msg[sizeof t->eb->msg];
  int line, col, n = 0;
  snprintf(msg, sizeof msg, "%s", t->eb->msg);
  const char *path = t->k->file->src.path;
  if (sscanf(msg, "%d:%d: %n", &line, &col, &n) != 2 || n == 0) return kt__err(t->eb, rc, "%s: error: %s", path, msg);
  /* With the source line and a caret, as the parser's errors have them. */
  kt__diag d;
  kt__diag_init(&d, &t->k->file->src);
  kt__diag_error(&d, (kt__loc){line, col}, "%s", msg + n);
  size_t len = d.errors.len;
  while (len && d.errors.s[len - 1] == '\n') len--;
  kt__err(t->eb, rc, "%.*s", (int)len, d.errors.s);
  kt__diag_free(&d);
  return rc;
}

/* kt_launch tunes on the caller's data (CPU backend, host pointers): the
 * inputs and inout tensors start from the caller's contents, so the
 * reference and every trial see the real data. Outputs keep their declared
 * initial value or poison. The caller's memory is only read. */
/* The caller's data (the tuning helper's), once the application has
 * written it: the wait overlaps the worker's opening of its device. */
static int use_caller_data(tuning *t) {
  if (t->k->tune_args_wait) KT__FORWARD(t->k->tune_args_wait(t->k->tune_args_ud, t->eb));
  kt__argset_take(t->args, t->k->tune_args);
  return KT_OK;
}

/* ---- real data and how outputs are judged ------------------------------ */

/* Every data file against its tensor's evaluated shape and type, before
 * anything is written or run. */
static int check_files(tuning *t) {
  kt_kernel *k = t->k;
  const kt_labels *l = &k->ctx->opts.labels;
  for (int i = 0; i < t->args->ntensors; i++) {
    const kt__host_tensor *ht = &t->args->tensors[i];
    if (k->inputs[ht->param].path)
      KT__FORWARD(kt__kernel_check_file(k, ht->param, &k->inputs[ht->param], ht->shape, ht->ndims, l->input, t->eb));
    if (k->expects[ht->param].path)
      KT__FORWARD(kt__kernel_check_file(k, ht->param, &k->expects[ht->param], ht->shape, ht->ndims, l->expect, t->eb));
  }
  return KT_OK;
}

/* -D flags for compiling a check: every tuned name of the kernel's file at
 * its first choice (file_defines). */
static int default_defines(const tuning *t, char (*defs)[96], const char **words) {
  const char *names[KT__MAX_NAMES];
  int64_t values[KT__MAX_NAMES];
  int n = file_defines(t, NULL, names, values);
  for (int i = 0; i < n; i++) {
    snprintf(defs[i], sizeof defs[i], "-D%s=%lld", names[i], (long long)values[i]);
    words[i] = defs[i];
  }
  return n;
}

/* The check that judges outputs: the caller's callback, else --check's
 * file, else @check's function in the kernel's own file (cpu backend). */
static int build_check(tuning *t) {
  kt_kernel *k = t->k;
  if (t->o.check) {
    t->check = (kt__check){.fn = t->o.check, .user = t->o.check_data, .source = kt__xstrdup("kt_tune_options.check")};
  } else if (k->check_path || t->d->check) {
    /* The check's file may be the kernel's own (or include it): the tuned
     * names are defined at their first choices. */
    char defs[KT__MAX_NAMES][96];
    const char *words[KT__MAX_NAMES];
    int n = default_defines(t, defs, words);
    const char *path = k->check_path ? k->check_path : k->file->src.path;
    KT__FORWARD(kt__check_build(path, k->check_path ? k->check_fn : t->d->check, words, n, t->workdir,
                                compile_timeout(t), &t->check, t->eb));
  } else {
    return KT_OK;
  }
  t->has_check = true;
  return KT_OK;
}

/* Which outputs are compared with what. The reference is, in order: the
 * --expect files (only the outputs they name are compared), the @reference
 * kernel's outputs, else the default configuration's. A check decides
 * alone, shown the reference where there is one other than the default. */
static int plan_judging(tuning *t) {
  kt_kernel *k = t->k;
  bool expect = false;
  for (int i = 0; i < t->d->nparams; i++) expect |= k->expects[i].path != NULL;
  if (expect && k->reference)
    return kt__err(t->eb, KT_INVALID,
                   "%s:%d:%d: error: both %s files and @reference(%s) give the expected outputs; keep one of them",
                   k->file->src.path, t->d->reference_loc.line, t->d->reference_loc.col, k->ctx->opts.labels.expect,
                   t->d->reference);
  KT__FORWARD(build_check(t));
  for (int i = 0; i < t->args->ntensors; i++) {
    kt__host_tensor *ht = &t->args->tensors[i];
    if (ht->mode == KT__MODE_IN) continue;
    const kt__param *p = &t->d->params[ht->param];
    if (ht->shape_tuned && !t->has_check)
      return kt__err(t->eb, KT_INVALID,
                     "%s:%d:%d: error: the shape of %s uses tuned names, so its content depends on the configuration "
                     "and no reference compares like with like: give a check that judges it (%s FILE.c:FN, "
                     "@check(FN) in a cpu kernel's file, or kt_tune_options.check)",
                     k->file->src.path, p->loc.line, p->loc.col, p->name, k->ctx->opts.labels.check);
    ht->reference_set = expect ? k->expects[ht->param].path != NULL : k->reference ? true : !t->has_check;
    ht->compared = ht->reference_set && !t->has_check;
  }
  t->default_is_reference = !expect && !k->reference && !t->has_check;
  return KT_OK;
}

/* Whether builds for A serve B: the same compiler input. */
static bool same_build_target(const kt__device_info *a, const kt__device_info *b) {
  return strcmp(a->backend, b->backend) == 0 && strcmp(a->name, b->name) == 0 && strcmp(a->arch, b->arch) == 0 &&
         strcmp(a->toolchain_version, b->toolchain_version) == 0;
}

/* The compile threads; in the tuning helper, where the application's view
 * of the device came with the request, the default's compile starts now,
 * while the worker still opens the device (cuInit and a context: about
 * 0.3 s on the H200, as long as an NVRTC compile). Only for the plain
 * reference (the default) and a backend that compiles in the tuner; on the
 * host's own cores too, as nothing is timed yet. */
static int start_compiles(tuning *t) {
  int jobs = t->k->ctx->opts.jobs > 0 ? t->k->ctx->opts.jobs : kt__ncores();
  t->r->compile_threads = jobs;
  t->pool = kt__pool_create(t->k->backend, jobs);
  if (!t->pool) return kt__err(t->eb, KT_NOMEM, "cannot start a compile thread");
  const kt__device_info *seen = t->k->tune_device;
  if (!seen || !kt__be_compiles(t->k->backend) || t->k->backend->builds_at_load || !t->default_is_reference)
    return KT_OK;
  t->build_device = *seen;
  kt__trial tr = {.id = (uint64_t)t->r->ntrials}; /* the id run_reference gives the default next */
  memcpy(tr.values, t->cfg->defaults, (size_t)t->cfg->n * sizeof *tr.values);
  submit(t, &tr);
  t->early_default = true;
  kt__trace("setup: the default's compile started before the worker is ready");
  return KT_OK;
}

static int start(tuning *t) {
  const kt__kernel_decl *d = t->d;
  /* Bad options are refused before anything runs or is written. */
  if (t->o.strategy && !kt__strategy_find(t->o.strategy)) return unknown_strategy(t);
  t->sizes = kt__xcalloc((size_t)d->nsizes + 1, sizeof *t->sizes);
  KT__FORWARD(kt__kernel_resolve_sizes(t->k, t->sizes, t->eb));
  t->size_env = (kt__env){(const char *const *)d->sizes, t->sizes, d->nsizes, NULL};
  KT__FORWARD(kt__config_check_size(t->cfg, t->k->file->src.path, d->name, t->eb));
  uint64_t size, valid;
  KT__FORWARD(check_space(t, &size, &valid));
  t->r = kt__result_create(d->name, t->k->file->src.path, t->cfg->names, t->cfg->n, t->cfg->ntune);
  t->r->bincache = t->k->ctx->bincache;
  t->r->space_size = size;
  t->r->valid_size = valid;
  t->r->budget_s = t->o.budget_s > 0 ? t->o.budget_s : 0;
  describe_sizes(t);
  t->r->flops = eval_work(t, d->flops);
  t->r->bytes = eval_work(t, d->bytes);
  if (!(t->workdir = kt__workdir(t->eb))) return KT_INVALID;
  kt__trace("setup: names and sizes");
  int rc = kt__argset_map(d, &t->size_env, t->k->ctx->opts.max_tensor_bytes, &t->args, t->eb);
  if (rc == KT_OK) rc = kt__constants_create(d, t->k->file->src.path, t->o.seed ? t->o.seed : 42, &t->constants, t->eb);
  if (rc != KT_OK) return locate_error(t, rc);
  KT__FORWARD(check_files(t));
  KT__FORWARD(plan_judging(t));
  kt__worker_setup ws = {.backend = t->k->backend,
                         .device = t->k->ctx->opts.device,
                         .file = t->k->file,
                         .decl = d,
                         .sizes = &t->size_env,
                         .args = t->args,
                         .constants = t->constants,
                         .atol = -1, /* the worker applies @verify and per-type defaults */
                         .rtol = -1,
                         .workdir = t->workdir,
                         .check = t->has_check ? &t->check : NULL,
                         .bincache = &t->k->ctx->bincache,
                         .constants_seed = t->o.seed ? t->o.seed : 42};
  t->setup = ws;
  /* The worker opens its device (a CUDA context: 0.26 s on the H200) while
   * the tuner writes the tensors it will upload; a kept one has it open. */
  if (!t->k->keep_worker || kt__worker_rebind(&ws, &t->worker, t->eb) != KT_OK)
    KT__FORWARD(kt__worker_launch(&ws, &t->worker, t->eb));
  rc = kt__argset_fill(d, t->o.seed ? t->o.seed : 42, t->k->inputs, t->k->expects, t->k->tune_args, t->args, t->eb);
  if (rc != KT_OK) return locate_error(t, rc);
  if (t->k->tune_args) KT__FORWARD(use_caller_data(t));
  kt__trace("setup: tensors written");
  KT__FORWARD(start_compiles(t));
  KT__FORWARD(kt__worker_ready(&t->worker, &t->r->device, t->eb));
  t->sample_s = sample_length(&t->r->device);
  kt__trace("setup: worker started");
  if (t->early_default && !same_build_target(&t->build_device, &t->r->device)) {
    kt__trace("setup: the worker's device differs from the application's: the default is compiled again");
    kt__compile_job_free(kt__pool_wait(t->pool));
    t->early_default = false;
  }
  t->build_device = t->r->device; /* no compile runs now unless for the same target */
  return open_store(t);
}

static void finish(tuning *t) {
  if (t->pool) {
    kt__pool_cancel_queued(t->pool);
    kt__compile_job *j;
    while ((j = kt__pool_wait(t->pool)) != NULL) kt__compile_job_free(j);
    t->r->compile_busy_s = kt__pool_busy_seconds(t->pool);
  }
  kt__pool_free(t->pool);
  kt__trace("teardown: compile threads joined");
  if (t->worker) t->r->restarts = kt__worker_restarts(t->worker);
  if (!t->k->keep_worker || !kt__worker_bindable(&t->setup) || !kt__worker_park(t->worker)) kt__worker_stop(t->worker);
  kt__trace("teardown: worker stopped");
  kt__argset_free(t->args);
  kt__constants_free(t->constants);
  kt__check_free(&t->check);
  kt__trace("teardown: tensors freed");
  for (int i = 0; i < t->nstored; i++) {
    free(t->stored[i].config);
    free((char *)t->stored[i].rec.message);
  }
  free(t->stored);
  kt__sbuf_free(&t->key_sizes);
  free(t->sizes);
}

/* A kept stored winner stays as it was stored: the time it is stored with is
 * the deciding run's, which the next run's keep_stored_winner compares. */
static void store_winner(tuning *t) {
  if (!t->store || t->r->winner < 0 || t->o.bench_only || t->r->interrupted || t->fault_rc || t->r->kept_stored) return;
  kt__sbuf cfg = {0};
  const kt__trial *w = &t->r->trials[t->r->winner];
  kt__result_config_string(t->r, w, &cfg);
  store_failed(t, kt__store_set_winner(t->store, &t->key, cfg.s, kt__trial_seconds(w),
                                       t->store_failures ? &(kt__errbuf){{0}} : &t->store_eb));
  kt__sbuf_free(&cfg);
}

/* KTUNE_PRINT_AUTOTUNING: one line per tuning (kernel, key, time, winner);
 * none when the setup failed (nothing was measured: the caller reports the
 * error). */
static void print_tuning(const tuning *t, bool set_up) {
  if (!t->r || !set_up || t->o.bench_only) return;
  kt__sbuf key = {0}, cfg = {0}, how = {0};
  kt__kernel_key_sizes(t->k, t->sizes, &key);
  if (t->r->winner >= 0) kt__result_config_string(t->r, &t->r->trials[t->r->winner], &cfg);
  kt__sbuf_printf(&how, "tuned %d configurations (%d stored before)%s", t->r->ntrials, t->r->reused,
                  t->r->winner < 0 ? ", none valid" : "");
  kt__print_autotuning(t->d->name, key.s, how.s, kt__now() - t->started, cfg.s ? cfg.s : "none");
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

int kt_tune(kt_kernel *k, const kt_tune_options *opts, kt_result **out) {
  tuning t = {.k = k, .d = k->decl, .cfg = &k->config, .eb = &k->ctx->err, .started = kt__now(), .tty = isatty(2)};
  if (opts) t.o = *opts;
  if (t.o.budget_s > 0) t.deadline = t.started + t.o.budget_s;
  *out = NULL;
  kt__interrupted = 0;
  int rc = start(&t);
  bool set_up = rc == KT_OK;
  double mark = kt__now();
  if (t.r) t.r->setup_s = mark - t.started;
  if (rc == KT_OK) rc = run_reference(&t);
  if (t.r) t.r->reference_s = lap(&mark);
  if (rc == KT_OK) rc = search(&t, 0, t.cfg->defaults);
  if (t.r) pick_winner(&t); /* no result when the setup failed */
  if (rc == KT_OK && t.d->ncluster > 0 && t.r->winner >= 0 && !kt__interrupted)
    rc = search(&t, 1, t.r->trials[t.r->winner].values);
  if (t.r) t.r->search_s = lap(&mark);
  if (rc == KT_OK && timed(&t)) t.r->finalists_reserved_s = finalists_reserve(&t);
  if (rc == KT_OK && !kt__interrupted && !keep_stored_winner(&t)) finalist_rounds(&t);
  if (t.r) t.r->finalists_s = lap(&mark);
  kt__trace("finalists done");
  if (t.r) {
    pick_winner(&t);
    t.r->interrupted = kt__interrupted;
    mark_unmeasured(&t);
    store_winner(&t);
  }
  progress_end(&t);
  print_tuning(&t, set_up);
  finish(&t);
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

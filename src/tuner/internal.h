/* The state of one tuning, shared by the tuner's files (as Lua's lstate.h is
 * by the interpreter's): each file owns one phase or concern of kt_tune and
 * works on this state.
 *
 *   tuner.c      compile and evaluate, the search stages, warm start, kt_tune
 *   setup.c      setup and teardown: sizes, tensors, the worker, compile threads
 *   judging.c    real data and how outputs are judged (--input, --expect, checks)
 *   reference.c  the reference run: the default configuration, @reference
 *   choice.c     a stage's space and the strategy that searches it
 *   budget.c     the time budget (--budget Ns)
 *   rounds.c     the finalist rounds and the winner
 *   records.c    the results database: resuming, recording, the winner
 *   progress.c   the progress lines
 *
 * Names are kt__<file>_..., kt__tuning_... for the option helpers here. */
#ifndef KT_TUNER_INTERNAL_H
#define KT_TUNER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "../check/check.h"
#include "../handles/context.h"
#include "../search/strategy.h"
#include "../space/space.h"
#include "pool.h"
#include "result.h"
#include "tuner.h"
#include "worker_client.h"

enum { KT__DEFAULT_FINALISTS = 5, KT__DEFAULT_ROUNDS = 7 };
/* The most finalists a tuning re-times; the default joins them in the rounds
 * (KT__MAX_FINALISTS + 1 trials). */
enum { KT__MAX_FINALISTS = 64 };
/* Fewer complete rounds than this (or than asked for) would decide on fewer
 * samples than the first pass took (min_samples in kt__tuner_request_for):
 * then the first pass decides. */
enum { KT__MIN_ROUNDS = 3 };
enum { KT__MEASURE_ALLOWANCE_S = 2 }; /* a configuration's measurement, beyond its run */
enum { KT__MAX_WARM = 16 };           /* stored winners (other sizes, other devices) evaluated first */
/* The seed when kt_tune_options.seed is 0 (kt__tuning_seed). */
enum { KT__DEFAULT_SEED = 42 };

/* A configuration string -> stored record, for resuming. */
typedef struct kt__stored_entry {
  char *config;
  kt__record rec;
} kt__stored_entry;

/* The threads that allocate the pages of a request's references (setup.c):
 * thread i of n takes parts i, i + n, i + 2n... of them. */
enum { KT__REFERENCE_THREADS = 8 };
typedef struct kt__reference_share {
  struct kt__reference_pages *all;
  int index;
} kt__reference_share;
typedef struct kt__reference_pages {
  const kt__argset *args;
  pthread_t threads[KT__REFERENCE_THREADS];
  kt__reference_share shares[KT__REFERENCE_THREADS]; /* the threads' arguments */
  int nthreads, started;
  atomic_size_t missing; /* bytes that had no page */
  atomic_int running;    /* threads not done yet: the last one to finish says how many */
} kt__reference_pages;

typedef struct kt__tuning {
  kt_kernel *k;
  const kt__kernel_decl *d;
  kt__errbuf *eb;
  kt_tune_options o;
  kt__tune_helper_opts h; /* the tuning helper's own (kt__tune); zero otherwise */
  int64_t *sizes;
  kt__env size_env;
  const kt__config *cfg; /* the kernel's names: tuned, then cluster */
  kt__argset *args;
  kt__constants *constants; /* @constant data, or NULL */
  kt__worker *worker;
  kt__pool *pool;
  /* The threads that allocate the pages of the references while
   * the worker starts (setup.c, start_reference_pages); joined at the
   * teardown. */
  kt__reference_pages reference_pages;
  kt_result *r;
  /* The device builds are for: the worker's, or before the worker opened
   * it, the one the application saw (h.device), for the
   * default's compile started meanwhile (early_default). */
  kt__device_info build_device;
  bool early_default;
  const char *workdir;
  kt__store *store;
  kt__store_key key;
  kt__sbuf key_sizes;
  kt__stored_entry *stored;
  int nstored;
  double best_s;
  double sample_s; /* a timing sample's least length (kt__tuner_sample_length) */
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
  /* How outputs are judged (kt__judging_plan): the default's outputs are the
   * reference unless --expect, @reference or a check says otherwise; then
   * the default is measured like any configuration. */
  bool default_is_reference;
  bool default_valid; /* the default satisfies @where */
  bool has_check;
  kt__check check;
  kt__worker_setup setup; /* the worker's, kept for the @reference kernel's worker */
} kt__tuning;

/* One search stage: the @autotune names, then (with @cluster) the cluster
 * names with the first stage's winner fixed. */
typedef struct kt__stage {
  kt__space *space;
  kt__strategy *strategy;
  int stage;  /* 0 @autotune, 1 @cluster */
  int offset; /* where this stage's names start in values */
  int64_t base[KT__MAX_NAMES];
  long budget; /* 0: none */
  long asked;
  bool exhausted;
  uint64_t warm[KT__MAX_WARM]; /* indices evaluated by warm_start, already counted */
  int nwarm;
} kt__stage;

/* The env that binds the other stage's names while @where is evaluated. The
 * values are a copy: the winner's trial moves as trials are added. */
typedef struct kt__other_names {
  int64_t values[KT__MAX_NAMES];
  kt__env env;
} kt__other_names;

/* ---- options, with their defaults ---- */

static inline double kt__tuning_run_limit(const kt__tuning *t) {
  return t->k->ctx->opts.run_timeout_s > 0 ? t->k->ctx->opts.run_timeout_s : 10.0;
}

static inline double kt__tuning_run_timeout(const kt__tuning *t) {
  return kt__tuning_run_limit(t) + KT__MEASURE_ALLOWANCE_S;
}

static inline double kt__tuning_compile_timeout(const kt__tuning *t) {
  return t->k->ctx->opts.compile_timeout_s > 0 ? t->k->ctx->opts.compile_timeout_s : 60.0;
}

static inline bool kt__tuning_quiet(const kt__tuning *t) { return t->k->ctx->opts.quiet; }

static inline int kt__tuning_finalists(const kt__tuning *t) {
  int nf = t->o.finalists > 0 ? t->o.finalists : KT__DEFAULT_FINALISTS;
  return nf > KT__MAX_FINALISTS ? KT__MAX_FINALISTS : nf;
}

static inline int kt__tuning_rounds(const kt__tuning *t) { return t->o.rounds > 0 ? t->o.rounds : KT__DEFAULT_ROUNDS; }

static inline int kt__tuning_rounds_that_count(const kt__tuning *t) {
  return kt__tuning_rounds(t) < KT__MIN_ROUNDS ? kt__tuning_rounds(t) : KT__MIN_ROUNDS;
}

/* The one seed of a tuning: the strategy's, the @constant data's and the
 * tensors' fills all come from it, so that a run can be repeated. */
static inline uint64_t kt__tuning_seed(const kt__tuning *t) { return t->o.seed ? t->o.seed : KT__DEFAULT_SEED; }

/* ---- tuner.c: compile and evaluate, the stages ---- */

void kt__trial_set_message(kt__trial *tr, const char *msg);
/* Keeps what the configuration printed in the worker, if anything. */
void kt__trial_set_output(kt__trial *tr, const kt__output *o);
/* Queues TR's compile (counting it as measured anew unless it is the
 * default or reused). */
void kt__tuner_submit(kt__tuning *t, const kt__trial *tr);
/* A timing sample's least length on DEV. */
double kt__tuner_sample_length(const kt__envvars *env, const kt__device_info *dev);
void kt__tuner_request_for(const kt__tuning *t, const kt__trial *tr, kt__req_kind kind, kt__request *req);
/* Takes a finished compile job: records a compile failure, or keeps the
 * artifact for the worker. Returns true when the trial can run. */
bool kt__tuner_take_compiled(kt__tuning *t, kt__compile_job *j, kt__trial *tr);
/* Asks the worker, and once more in a fresh worker after a crash or a hang
 * (ONLY_OUTSIDE: only when it was killed from outside), by UNTIL (0: no
 * limit). */
void kt__tuner_ask_twice_on_failure(kt__tuning *t, const kt__request *req, kt__reply *rep, bool only_outside,
                                    double until);
/* How the binary cache served a build in the worker (backends that build at load). */
void kt__tuner_note_load_build(kt__trial *tr, const kt__reply *rep);
/* Whether REP is a build in the worker that the machine stopped (the trial stays pending, the tuning stops). */
bool kt__tuner_machine_failed(kt__tuning *t, kt__trial *tr, const kt__reply *rep);
/* One verified run and measurement, bounded by UNTIL (0: no limit). */
void kt__tuner_evaluate(kt__tuning *t, kt__trial *tr, kt__req_kind kind, double until);
/* A configuration whose expression cannot be evaluated: the error in t->eb,
 * KT_INVALID (also kept in t->fault_rc). */
int kt__tuner_report_fault(kt__tuning *t, const int64_t *values, const kt__space_fault *f);
/* Whether the other expressions of a configuration about to be compiled fail
 * (then reported). */
bool kt__tuner_config_faulted(kt__tuning *t, const int64_t *values);

/* ---- setup.c ---- */

int kt__setup_start(kt__tuning *t);
void kt__setup_finish(kt__tuning *t);

/* ---- judging.c ---- */

/* Every data file against its tensor's shape and type, before anything runs. */
int kt__judging_check_files(kt__tuning *t);
/* Which outputs are compared with what, and the check that judges them. */
int kt__judging_plan(kt__tuning *t);

/* ---- reference.c ---- */

/* Compile-time names for building another kernel of the file than the one
 * tuned: FIRST's configuration (NULL: none), then every other tuned name of
 * the file at its first choice. Returns the count (at most KT__MAX_NAMES). */
int kt__reference_defines(const kt__tuning *t, const kt__config *first, const char **names, int64_t *values);
/* The default configuration's run: the reference, or with another reference
 * (--expect, @reference, a check) one configuration among others. */
int kt__reference_run(kt__tuning *t);

/* ---- choice.c ---- */

int kt__choice_unknown_strategy(kt__tuning *t);
/* The strategy for stage S (and its budget), counting what it plans. */
int kt__choice_strategy(kt__tuning *t, kt__stage *s, const kt__strategy_ops **ops);
/* The space of stage WHICH, the other stage's names bound to BASE (in OTHER,
 * which must outlive it), its --autotune pins applied; warnings to WARN. */
int kt__choice_stage_space(kt__tuning *t, int which, const int64_t *base, kt__other_names *other, kt__sbuf *warn,
                           kt__space **out);
/* The checks before anything runs; gives the space's size and valid count. */
int kt__choice_check_space(kt__tuning *t, uint64_t *size, uint64_t *valid);
void kt__choice_exclude_default_outside_pins(kt__tuning *t, const kt__space *space);

/* ---- budget.c ---- */

bool kt__budget_timed(const kt__tuning *t);
void kt__budget_ran_out(kt__tuning *t);
double kt__budget_sample_cost(const kt__tuning *t, const kt__trial *tr);
double kt__budget_finalists_reserve(const kt__tuning *t);
double kt__budget_search_deadline(const kt__tuning *t);
double kt__budget_rounds_deadline(const kt__tuning *t);
bool kt__budget_time_for_one_more(kt__tuning *t, int pending);
double kt__budget_collect_deadline(const kt__tuning *t, int n);
void kt__budget_abandon_late(kt__tuning *t);
void kt__budget_mark_unmeasured(kt__tuning *t);

/* ---- rounds.c ---- */

void kt__rounds_run(kt__tuning *t);
bool kt__rounds_keep_stored_winner(kt__tuning *t);
void kt__rounds_pick_winner(kt__tuning *t);

/* ---- records.c ---- */

/* Opens the results database and loads this key's stored results. */
int kt__records_open(kt__tuning *t);
/* Records TR as measured in this run (not one taken from the database). */
void kt__records_put(kt__tuning *t, const kt__trial *tr);
/* Records TR again after the finalist rounds re-timed it (or it failed). */
void kt__records_update(kt__tuning *t, const kt__trial *tr);
/* Fills TR from the database when this configuration was measured before. */
bool kt__records_reuse(kt__tuning *t, kt__trial *tr);
void kt__records_put_winner(kt__tuning *t);
void kt__records_free(kt__tuning *t);

/* ---- progress.c ---- */

void kt__progress_settled(kt__tuning *t, kt__trial *tr);
void kt__progress_end(const kt__tuning *t);

#endif

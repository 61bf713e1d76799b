/* The outcome of one tuning: every configuration tried, the winner, the
 * timeline; printed as a closing table or as one JSON document. */
#ifndef KT_RESULT_H
#define KT_RESULT_H

#include "../backend/backend.h"
#include "../config.h" /* KT__MAX_NAMES */
#include "../measure/measure.h"

typedef struct kt__trial {
  uint64_t id;                   /* index in kt_result.trials; the worker's cache key */
  int64_t values[KT__MAX_NAMES]; /* tuned names, then cluster names */
  kt__status status;
  kt__stats stats;
  double compile_s;
  char *message;         /* why it failed (first lines of a log) */
  char *output;          /* what it printed in the worker (first KT__OUTPUT_KEEP bytes) */
  uint64_t output_bytes; /* how much it printed in all */
  bool outside;          /* failed by no fault of its own (worker killed from outside) */
  char *artifact;        /* compiled file kept for finalist rounds */
  bool is_default;
  bool reference_only;                /* the default outside the pinned space: the reference, never the winner */
  bool reused;                        /* taken from the results database */
  int stage;                          /* 0 @autotune, 1 @cluster */
  uint64_t space_index;               /* index in its stage's space (UINT64_MAX: outside it) */
  double final_s;                     /* median over finalist rounds; 0 if not a finalist */
  double done_s;                      /* when its status was settled, seconds after the tuning began */
  double load_s, verify_s, measure_s; /* the worker's time on it */
  kt__bin_use compile_use;            /* how the binary cache served its build (NONE: none) */
} kt__trial;

struct kt_result {
  char *kernel;
  char *file;
  char *sizes; /* "M=1024 N=1024" */
  kt__device_info device;
  const char *const *timings; /* the backend's names of its timing methods (kt__backend.timings) */
  kt_timing timing;           /* the method asked for (AUTO: chosen per configuration) */
  kt_objective objective;     /* what the ranking and the winner minimise */
  char **names;               /* tuned names, then cluster names (owned) */
  int nnames, ntune;
  uint64_t space_size, valid_size; /* valid_size UINT64_MAX: not counted */
  char *strategy, *strategy_reason;
  long budget;
  /* The time budget (0: none) and how it was spent. */
  double budget_s;
  bool budget_ran_out;         /* it stopped or cut some work */
  bool reference_over_budget;  /* the default alone took longer (it is always run) */
  double finalists_reserved_s; /* held back for the finalist rounds when the search stopped */
  int compiles_abandoned, requests_cut;
  int rounds_done, rounds_planned;
  bool rounds_settled;  /* the rounds stopped early: every other finalist was apart from the leader or tied */
  bool rounds_tied;     /* ... and some were tied with it (within the leader's noise) */
  double rounds_spread; /* the leader's interquartile range over its median, at the last verdict */
  bool kept_stored;     /* nothing was measured anew: the stored winner was kept, no rounds ran */
  kt__trial *trials;
  int ntrials, cap;
  int winner;        /* trial index or -1 */
  int runner_up;     /* the next in rank after the winner, or -1 */
  bool within_noise; /* the runner-up is within the winner's noise (kt__within_noise): a tie, not a decision */
  int default_trial;
  int reused, restarts;
  bool interrupted;
  double flops, bytes; /* per launch; 0 when not declared */
  double wall_s, compile_busy_s, device_busy_s;
  double setup_s;                     /* sizes, tensors, worker start, before the first trial */
  double reference_s;                 /* compiling and running the default, the reference output */
  double search_s;                    /* the strategy's stages: compile, verify, screen */
  double finalists_s;                 /* the finalists' interleaved rounds */
  double load_s, verify_s, measure_s; /* device busy, split by phase */
  int compile_threads;
  char *db_path;
  kt__bincache bincache; /* the binary cache the tuning used */
  char *not_cached;      /* why it could not keep this kernel's builds, or NULL */
};

kt_result *kt__result_create(const char *kernel, const char *file, const char *const *names, int nnames, int ntune);
kt__trial *kt__result_add(kt_result *r, const int64_t *values, int stage);
/* The configuration as "NAME=VALUE NAME=VALUE". */
void kt__result_config_string(const kt_result *r, const kt__trial *t, kt__sbuf *out);
/* Trials with status OK that may win, fastest first; returns count. Those
 * timed side by side in the finalist rounds rank before the rest, whose
 * first-pass times ran under other load and do not compare with theirs. */
int kt__result_ranked(const kt_result *r, int *order, int max);
/* One device as a JSON object (`ktune devices --json` and the result's "device"). */
void kt__device_json(const kt__device_info *d, kt__sbuf *b);
/* The first line of why T failed (its message; of a compiler's log, the
 * first line with "error:"), cut to KT__WHY_WIDTH
 * characters with "..." after, in OUT; "" when it gives none. For the
 * progress lines and the closing table; --json keeps the whole message. */
enum { KT__WHY_WIDTH = 160 };
void kt__trial_why(const kt__trial *t, char *out, size_t size);
/* The time a trial is judged by: its finalist-round median if it has one. */
double kt__trial_seconds(const kt__trial *t);
/* What T is ranked by under R's objective (kt__objective_score), lower better. */
double kt__trial_score(const kt_result *r, const kt__trial *t);

#endif

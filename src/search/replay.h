/* Replay: search strategies run against an exhaustively measured space (a
 * T4 results file) instead of a device. The recorded space is rebuilt from
 * the file: its parameters, each with the distinct values it takes, sorted;
 * configurations the file does not hold (or marks as breaking constraints)
 * are invalid, failed ones fail with their recorded status, and the others
 * "run" in their recorded time. */
#ifndef KT_SEARCH_REPLAY_H
#define KT_SEARCH_REPLAY_H

#include "strategy.h"

typedef struct kt__recorded kt__recorded;

/* Reads a T4 results file, gzip-compressed or plain JSON. */
int kt__recorded_load(const char *path, kt__recorded **out, kt__errbuf *eb);
void kt__recorded_free(kt__recorded *r);

const kt__space *kt__recorded_space(const kt__recorded *r);
/* Recorded configurations: all of them, and those that ran correctly. */
uint64_t kt__recorded_count(const kt__recorded *r);
uint64_t kt__recorded_ok(const kt__recorded *r);
/* Fastest recorded time, in the file's unit. */
double kt__recorded_optimum(const kt__recorded *r);
/* What evaluating INDEX gives: its status and time (INFINITY unless OK).
 * KT__ST_CONSTRAINT for a configuration outside the recorded space. */
kt__status kt__recorded_lookup(const kt__recorded *r, uint64_t index, double *time);
/* Seconds the recorded evaluation of INDEX took, failed ones included: the
 * sum of its "times" (compilation, runtimes, framework, search_algorithm,
 * validation) in the file's metadata.timeunit. NAN when the file holds no
 * time for it (or no record). */
double kt__recorded_cost(const kt__recorded *r, uint64_t index);
/* The mean of kt__recorded_cost over the records that hold a time; NAN
 * when none does. */
double kt__recorded_mean_cost(const kt__recorded *r);

typedef struct kt__replay_stats {
  int repeats;
  double mean, std, min, max, median; /* of t_opt / t_best_found per repeat */
  int below_080;                      /* repeats that ended under 0.80 of the optimum (issue 32's worst-repeat goal) */
  double evals_mean;                  /* configurations evaluated per repeat */
  double failed_mean;                 /* of which failed */
  double seconds_mean;                /* recorded seconds those evaluations took, per repeat */
} kt__replay_stats;

/* Runs OPS REPEATS times with BUDGET evaluations each (0: until the
 * strategy stops), seeds derived from SEED. Each repeat first evaluates the
 * NWARM configurations WARM (they count against the budget) and tells the
 * strategy, as kt_tune does with the winners stored at other sizes and on
 * other devices. A repeat that finds nothing scores 0. KT_INTERNAL when a strategy breaks its contract (a repeat, an
 * invalid configuration): replay doubles as a checker. */
int kt__replay_run(const kt__recorded *r, const kt__strategy_ops *ops, long budget, int repeats, uint64_t seed,
                   const uint64_t *warm, int nwarm, kt__replay_stats *st, kt__errbuf *eb);

/* As kt__replay_run, and CURVE (LEN entries, or NULL) gets the search's
 * progress: CURVE[i] is the mean over the repeats of t_opt / best found
 * after i+1 evaluations (0 before anything valid; a repeat that stopped
 * sooner keeps its last value). */
int kt__replay_run_curve(const kt__recorded *r, const kt__strategy_ops *ops, long budget, int repeats, uint64_t seed,
                         const uint64_t *warm, int nwarm, kt__replay_stats *st, double *curve, long len,
                         kt__errbuf *eb);

/* Called after each evaluation of a traced replay: the repeat (from 0), the
 * evaluation (from 1, warm ones included), the configuration and what it
 * gave (its recorded status, and its time or INFINITY). */
typedef void kt__replay_trace_fn(void *ud, int repeat, long eval, uint64_t index, kt__status status, double time);

/* As kt__replay_run, and TRACE (NULL: none) is called with UD after every
 * evaluation: how a search reached its result, repeat by repeat
 * (bench/strategies -t). */
int kt__replay_run_traced(const kt__recorded *r, const kt__strategy_ops *ops, long budget, int repeats, uint64_t seed,
                          const uint64_t *warm, int nwarm, kt__replay_stats *st, kt__replay_trace_fn *trace, void *ud,
                          kt__errbuf *eb);

/* As kt__replay_run with a budget of SECONDS instead of a count: each
 * evaluation spends its recorded cost (kt__recorded_cost), and a repeat ends
 * before the first evaluation that would end past SECONDS. The strategy is
 * told each cost and the time left (the spent op), as kt_tune tells it under
 * --budget Ns. A record without times costs nothing (a file with none is
 * walked until the strategy ends: kt__replay_report refuses it). */
int kt__replay_run_timed(const kt__recorded *r, const kt__strategy_ops *ops, double seconds, int repeats, uint64_t seed,
                         const uint64_t *warm, int nwarm, kt__replay_stats *st, kt__errbuf *eb);

/* The fastest configuration recorded in FROM as an index of R's space (same
 * names, same numeric values); false when there is none or it is not in R. */
bool kt__recorded_best_in(const kt__recorded *r, const kt__recorded *from, uint64_t *index);

/* The best configuration of each of the NWARM files WARM, as indices of R's
 * space into OUT, *N of them: a file that cannot be read is an error, one
 * whose best is not in R's space is skipped. */
int kt__replay_warm_indices(const kt__recorded *r, const char *const *warm, int nwarm, uint64_t *out, int *n,
                            kt__errbuf *eb);

/* Seed of repeat I of a replay with seed SEED (so that tests and the bench
 * reproduce single repeats). */
uint64_t kt__replay_seed(uint64_t seed, int i);

/* kt_replay and kt_replay_seconds (context.c makes the call on a context):
 * loads, replays and prints as ktune.h says, with the detail of an error in
 * EB. BUDGET_S is a time budget in seconds (INFINITY: none; BUDGET is then
 * the count, else 0). */
int kt__replay_report(const char *path, const char *strategy, long budget, double budget_s, int repeats, uint64_t seed,
                      const char *const *warm, int nwarm, int json, FILE *out, kt__errbuf *eb);

#endif

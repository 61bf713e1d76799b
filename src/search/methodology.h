/* The autotuning community's score of a search strategy on a recorded
 * space (Willemsen, van Nieuwpoort, van Werkhoven, "A methodology for
 * comparing optimization algorithms for auto-tuning", FGCS 2024, as the
 * autotuning_methodology package computes it; our own implementation).
 *
 * Time is what the recorded evaluations cost (kt__recorded_cost: compile,
 * benchmark and framework time). The window runs from the time random
 * search is expected to need to get 1% of the way from the median to the
 * optimum to the time it needs for 95%. At each of 1000 instants of the
 * window the strategy's expected best is scored
 * (strategy - random) / (optimum - random), 0 for random search and 1 for
 * the optimum; the score is the mean over the window, and over files the
 * mean of the files' scores. */
#ifndef KT_SEARCH_METHODOLOGY_H
#define KT_SEARCH_METHODOLOGY_H

#include "replay.h"

/* The package's defaults (the hypertuning paper's experiments). */
#define KT__METHOD_CUTOFF 0.95
#define KT__METHOD_CUTOFF_START 0.01
enum { KT__METHOD_RESOLUTION = 1000 };

typedef struct kt__method_window {
  long fevals_start, fevals_end; /* random search's expected evaluations to the two cut-offs */
  double t_start, t_end;         /* the window, seconds: fevals * median_cost */
  double median_cost;            /* median recorded cost of an evaluation */
  double cost_per_feval;  /* the baseline's: mean cost of a valid evaluation + invalid fraction * mean of invalid */
  double optimum, median; /* of the valid recorded objective values */
} kt__method_window;

/* The window of R for cut-offs CUTOFF and START (fractions of the way from
 * the median to the optimum). KT_INVALID when the file holds no times, or
 * random search reaches the optimum at once. */
int kt__method_window_of(const kt__recorded *r, double cutoff, double start, kt__method_window *w, kt__errbuf *eb);

/* Random search's expected best at each of the N instants TIMES (seconds,
 * ascending) into OUT: the expected rank of the best of M draws without
 * replacement, M the instant over cost_per_feval, smoothed over the
 * instants with a monotone cubic (PCHIP) as the package does. */
void kt__method_random_curve(const kt__recorded *r, const kt__method_window *w, const double *times, int n,
                             double *out);

/* One repeat of a strategy: after evaluation i, TIME[i] seconds have passed
 * (cumulative cost) and BEST[i] is the best valid objective so far (NAN
 * before any). */
typedef struct kt__method_trace {
  const double *time, *best;
  long n;
} kt__method_trace;

/* The strategy's curve over TIMES from its NTRACES repeats, as the package
 * makes it: the ranks of the best-so-far values among the valid recorded
 * ones, pooled over repeats, fitted by a decreasing isotonic regression of
 * rank on time (the package averages isotonic fits of bootstrap subsamples,
 * see docs/SEARCH.md), and held from the median time the repeats stop. */
int kt__method_strategy_curve(const kt__recorded *r, const kt__method_trace *traces, int ntraces, const double *times,
                              int n, double *out, kt__errbuf *eb);

/* The score of NTRACES repeats on R over window W (RESOLUTION instants). */
int kt__method_score_traces(const kt__recorded *r, const kt__method_window *w, const kt__method_trace *traces,
                            int ntraces, double *score, kt__errbuf *eb);

typedef struct kt__method_result {
  kt__method_window window;
  double score;
  double evals_mean; /* evaluations per repeat */
} kt__method_result;

/* The traces of OPS replayed REPEATS times on R (seeds from SEED, as
 * kt__replay_run), each repeat until its cumulative cost passes the
 * window's end plus 10% (the package's time limit) or the strategy has
 * nothing left; *N of them into *OUT, freed by kt__method_traces_free. */
int kt__method_traces(const kt__recorded *r, const kt__strategy_ops *ops, int repeats, uint64_t seed,
                      kt__method_trace **out, int *n, kt__errbuf *eb);
void kt__method_traces_free(kt__method_trace *traces, int n);

/* Replays OPS REPEATS times on R (seeds from SEED, as kt__replay_run), each
 * repeat until its cumulative cost passes the window's end plus 10% (the
 * package's time limit), and scores it. */
int kt__method_score(const kt__recorded *r, const kt__strategy_ops *ops, int repeats, uint64_t seed,
                     kt__method_result *out, kt__errbuf *eb);

#endif

/* Timing that scales itself (as zstd's benchfn): warm up, grow the number of
 * launches per sample until a sample lasts long enough to trust, then take
 * samples until the median is stable or the time is spent, and stop early
 * when the configuration is clearly slower than the best so far. */
#ifndef KT_MEASURE_H
#define KT_MEASURE_H

#include "../common.h"

typedef struct kt__measure_opts {
  double min_sample_s; /* a sample must last at least this long (0: 1 ms) */
  int min_samples;     /* 0: 5 */
  int max_samples;     /* 0: 50 */
  double max_total_s;  /* time budget for one configuration (0: 1 s) */
  double best_s;       /* best median so far (per launch); <= 0: none */
  double first_s;      /* > 0: one launch already timed (the verified run,
                          after the same cache flush), which stands for the
                          warm-up: kept as the first sample when it lasts
                          min_sample_s, else it sets the first sample's
                          launch count */
} kt__measure_opts;

/* Per-launch seconds. */
typedef struct kt__stats {
  double median, min, max, mean, stddev;
  int nsamples;
  int reps;           /* launches per sample */
  bool stopped_early; /* abandoned as clearly slower than best_s */
} kt__stats;

/* Times REPS back-to-back launches; total seconds in *SECONDS. */
typedef kt__status (*kt__timer_fn)(void *ud, int reps, double *seconds, kt__errbuf *eb);

kt__status kt__measure(const kt__measure_opts *o, kt__timer_fn timer, void *ud, kt__stats *out, kt__errbuf *eb);

/* Statistics of N per-launch samples (the array is sorted in place). */
void kt__stats_compute(double *samples, int n, int reps, kt__stats *out);

/* The interquartile range of N samples (interpolated quartiles, as the
 * stability test uses; the array is sorted in place): the spread of the
 * middle half, which the odd disturbed sample does not move. */
double kt__interquartile(double *samples, int n);

/* Where interleaved rounds of samples leave the choice of the fastest of
 * several candidates (the tuner's finalist rounds). */
typedef enum kt__rounds_verdict {
  KT__ROUNDS_OPEN,  /* another candidate might still overtake the leader by more than noise */
  KT__ROUNDS_APART, /* the leader's slowest sample beats every other candidate's fastest */
  KT__ROUNDS_TIED,  /* every other candidate is apart, or within the leader's own noise of it */
} kt__rounds_verdict;

/* A leader whose middle half of samples spans more than this share of its
 * median is too noisy to bound anything: no ties are declared with it. */
#define KT__TIE_MAX_SPREAD 0.02

/* The verdict on N candidates after ROUNDS rounds: SAMPLES[i * STRIDE + r]
 * is candidate i's sample of round r; a candidate with COUNTS[i] false
 * takes no part. The leader is the best median; *SPREAD (may be NULL) gets
 * its interquartile range over its median (0 when there is no leader). */
kt__rounds_verdict kt__rounds_verdict_of(const double *samples, int stride, int n, int rounds, const bool *counts,
                                         double *spread);

#endif

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

#endif

/* KT_MISS_ONLINE: tuning through the application's own launches.
 *
 * On a miss the helper compiles and verifies the configurations on copies
 * of the caller's data, times none, and answers with those that passed
 * (tune_helper.c, "verified ..."). Until then the key's calls launch the
 * fallback, as KT_MISS_BACKGROUND's do. Then each call launches the next
 * verified configuration that still needs samples on the caller's own
 * data and stream, timed by the backend around that one launch
 * (kt__be_run_timed: device events on CUDA, the host's clock elsewhere),
 * KT__ONLINE_SAMPLES samples each; the fastest median is adopted, stored
 * as the key's winner with every candidate's samples (their `measurement`
 * method "online ..."), and later calls launch it untimed.
 *
 * This file keeps the measuring state of one key: which candidate the
 * next call times, the samples, the winner. runtime.c loads and launches. */
#ifndef KT_ONLINE_H
#define KT_ONLINE_H

#include <pthread.h>
#include <stdbool.h>

#include "../handles/context.h"
#include "../store/store.h" /* kt__stats, kt__stats_compute (through measure.h) */

/* Samples per candidate: the tuner's least count per configuration (3) and
 * two more, since one launch a sample on a busy application is noisier
 * than the tuner's samples of back-to-back launches. */
enum { KT__ONLINE_SAMPLES = 5 };

typedef struct kt__online_cand {
  int64_t values[KT__MAX_NAMES];
  bool loaded;  /* FN and LAUNCH are set */
  bool dropped; /* its launch failed: never launched again */
  void *fn;     /* loaded in this process (the runtime's table owns it) */
  kt__launch launch;
  double samples[KT__ONLINE_SAMPLES];
  int nsamples;
} kt__online_cand;

typedef struct kt__online {
  /* One call at a time times a candidate; another thread's call meanwhile
   * launches the fallback untimed (trylock: no caller waits for another). */
  pthread_mutex_t lock;
  kt__online_cand *cands;
  int ncands;
  int next;           /* round robin: the candidate the next timed call tries first */
  int calls;          /* calls timed so far */
  double timed_s;     /* their summed launch time */
  const char *method; /* how they were timed (kt__be_run_timed) */
  double started;     /* kt__now() when the verified list came back */
} kt__online;

/* The policy K's misses follow: its context's, except that a kernel with an
 * inout tensor under KT_MISS_ONLINE follows KT_MISS_BACKGROUND (a timed
 * launch on the caller's data applies the kernel: a candidate that ran
 * could not be run again on the same inputs, so one launch a call is the
 * only one, and the helper's copies are where several can be timed), and
 * so does a context whose objective is not time (the calls are timed by the
 * clock alone; the helper measures energy). */
kt_miss_policy kt__online_policy(const kt_kernel *k);

/* The measuring state of LIST ("CONFIG;CONFIG;...", the helper's verified
 * configurations, read as CFG's values over its defaults); NULL when the
 * list holds none. */
kt__online *kt__online_create(const kt__config *cfg, const char *list);
void kt__online_free(kt__online *o);
/* The candidate this call times, with O's lock taken; -1 (no lock) when
 * another call times one now or none needs samples. */
int kt__online_begin(kt__online *o);
/* Ends the call of kt__online_begin: candidate C's sample of SECONDS, or
 * its drop (FAILED); releases the lock. True when this was the last sample
 * needed: the caller then adopts (kt__online_winner), once. */
bool kt__online_end(kt__online *o, int c, double seconds, bool failed);
/* After the last sample: the fastest candidate by median (-1 when every
 * one was dropped) and each candidate's statistics into STATS (ncands). */
int kt__online_winner(kt__online *o, kt__stats *stats);

#endif

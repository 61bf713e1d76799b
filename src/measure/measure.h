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
  kt_timing timing;    /* AUTO: chosen from the first sample (kt__timing_choose);
                          the tuner sends EVENTS to backends without graphs */
  /* The device's kt__device_info.energy_window_s (the worker sets it): energy
   * read over a shorter span of samples is left unknown, not taken for the
   * configuration's. With energy_wanted (an energy or edp objective), samples
   * go on past max_samples and max_total_s until their reads span it (at
   * most 3 windows more of wall time), and only the energy is taken from the
   * samples past max_samples. */
  double energy_window_s;
  bool energy_wanted;
  /* A process whose context on the device does not make a sample "shared"
   * (0: none): the application a tuning on a miss runs for. Its context is
   * always there, and while a blocking miss tunes it waits; counting it
   * retook every sample up to max_samples, 0.2 s a configuration at 256 MB
   * on the H200 (docs/BENCHMARKS.md, "Tune on a miss at production sizes").
   * What its own launches do to a background tuning's samples is judged by
   * their spread instead (the "contended" mark). */
  int peer_pid;
} kt__measure_opts;

/* What the device reported over a measurement's samples (kt__reading,
 * gathered): the lowest and highest SM clock, every throttle reason seen,
 * the highest power and temperature. */
typedef struct kt__seen {
  bool clock_known, throttle_known, power_known, temp_known;
  unsigned sm_clock_min_mhz, sm_clock_max_mhz;
  uint64_t throttle_reasons;
  double power_max_w;
  unsigned temp_max_c;
  /* Summed over the samples that read an energy counter: joules, and the
   * seconds the counter's reads spanned (their ratio is the mean power). */
  bool energy_known;
  double energy_j, energy_s;
  /* Validity: samples taken again because they were disturbed (the time
   * allowed permitting), samples kept disturbed, and what disturbed them
   * (KT__DISTURBED_*, or-ed). A measurement with kept disturbed samples is
   * not valid (kt__seen_valid). */
  int retaken_samples, disturbed_samples;
  unsigned disturbance;
} kt__seen;

/* What disturbed a sample (kt__reading_disturbance). */
enum {
  KT__DISTURBED_THROTTLED = 1, /* SM clock below its maximum with a thermal or hardware slowdown reason */
  KT__DISTURBED_SHARED = 2,    /* another process computed on the device */
};

/* NVML's clocks-event reasons that make a lower clock a disturbance:
 * software and hardware thermal slowdown, hardware slowdown and the power
 * brake (0x8, 0x20, 0x40, 0x80). Not the software power cap (0x4): a kernel
 * that draws the card's power limit runs at that clock in an application
 * too, so it is the kernel's own steady state, and no sample of it could be
 * taken otherwise. Not idle (0x1) nor application clocks (0x2). */
#define KT__THROTTLE_DISTURBING 0xe8ull

/* What disturbed the sample R was read after (KT__DISTURBED_*), 0 for none
 * or where the device did not say. */
unsigned kt__reading_disturbance(const kt__reading *r, int peer_pid);
/* Whether SEEN's samples were all undisturbed. */
bool kt__seen_valid(const kt__seen *seen);
/* "throttled", "shared", "throttled, shared" for the bits of D. */
const char *kt__disturbance_words(unsigned d);

/* The mean power over SEEN's energy windows, in watts; NAN without them. */
double kt__seen_watts(const kt__seen *seen);

/* What a configuration is judged by under objective O, lower better: its
 * SECONDS per launch (time); joules per launch, the mean power times
 * SECONDS (energy); joules times seconds (edp). Where SEEN has no energy,
 * INFINITY under energy and edp: such a configuration ranks last. */
double kt__objective_score(kt_objective o, double seconds, const kt__seen *seen);
/* "time", "energy", "edp"; and back (-1 for anything else). */
const char *kt__objective_name(kt_objective o);
int kt__objective_from_name(const char *name);

/* Adds one sample's reading to SEEN. */
void kt__seen_add(kt__seen *seen, const kt__reading *r);

/* Per-launch seconds. */
typedef struct kt__stats {
  double median, min, max, mean, stddev;
  double iqr; /* interquartile range: the spread a tie is judged by (0: unknown, as a stored result's) */
  int nsamples;
  int reps;           /* launches per sample */
  bool stopped_early; /* abandoned as clearly slower than best_s */
  /* How the samples were taken: the method (GRAPH or EVENTS, never AUTO)
   * and what the device reported meanwhile. kt__stats_compute keeps both. */
  kt_timing timing;
  kt__seen seen;
  /* The samples' spread says that something else ran on the device during
   * some of them (kt__samples_contended): recorded with the result, so that
   * a winner measured beside a busy application is marked as such. */
  bool contended;
} kt__stats;

/* Another process's kernels (a busy application beside a background
 * tuning) share the SMs and the memory bandwidth with the samples they
 * overlap, and only those: a quiet device's samples of one configuration
 * lie within a few percent of each other (0.1-2% on the H200,
 * docs/BENCHMARKS.md), while overlapped ones are tens of percent slower.
 * Samples whose slowest is more than KT__CONTENDED_SPREAD over their fastest
 * (at least 3 of them) are contended: the measurement then takes at least
 * KT__CONTENDED_SAMPLES samples whatever their stability says, so that the
 * median lies among the samples taken in the gaps between the other
 * process's work, and the result is marked (`contended` in its
 * `measurement` record). */
#define KT__CONTENDED_SPREAD 0.25
enum { KT__CONTENDED_SAMPLES = 11 };
bool kt__samples_contended(const double *samples, int n);

/* Times REPS back-to-back launches by method HOW (GRAPH or EVENTS); total
 * seconds in *SECONDS, and what the device said meanwhile in *READING
 * (left all unknown where it says nothing), the energy only with ENERGY. */
typedef kt__status (*kt__timer_fn)(void *ud, kt_timing how, int reps, bool energy, double *seconds,
                                   kt__reading *reading, kt__errbuf *eb);

/* Events around launches made one by one measure the launches, not the
 * kernels, once a kernel is shorter than its launch: a sample of REPS
 * launches timed both ways, EVENTS_S and GRAPH_S per launch, keeps GRAPH
 * when the events' time exceeds the graph's by more than
 * KT__GRAPH_GAIN_MIN (the device sat idle between launches); else EVENTS,
 * what an application's own launches see. A sample of one launch has no
 * gaps to close: EVENTS. */
#define KT__GRAPH_GAIN_MIN 0.03

/* A launch at least this long by events is timed by events with no graph
 * sample: while a kernel outlasts the host's cost of a launch (microseconds)
 * the stream holds the next launch before this one ends, and what a graph
 * closes between them is the device's own gap, 1.8 us on the H200
 * (elementwise at N = 2^22, 12-21 us kernels: events against graph in
 * docs/BENCHMARKS.md, "Timing small kernels"), under KT__GRAPH_GAIN_MIN of
 * this. In the H100 traces of a 256 MB transpose, whose winners all ended
 * on events, the graph sample and its capture took about 1.5 ms of each
 * configuration (docs/BENCHMARKS.md, twentieth session; measured in the
 * twenty-first: about 1 ms of each). */
#define KT__GRAPH_USELESS_S 100e-6
kt_timing kt__timing_choose(int reps, double events_s, double graph_s);

/* "graph", "events" or "auto"; and back (AUTO for anything else). */
const char *kt__timing_name(kt_timing t);
kt_timing kt__timing_from_name(const char *name);

/* S's `measurement` record as a JSON object: METHOD (what the backend calls
 * S's timing: "graph", "events", "profiling", "clock"; NULL: the timing's
 * own name), launches per sample, samples, and the SM clock's range, the
 * throttle reasons seen, the highest power and temperature where the
 * device reported them (the fields are left out where it did not); for a
 * contended measurement, "contended": true and "spread" (the slowest
 * sample over the fastest, minus 1). */
void kt__measurement_json(kt__sbuf *b, const char *method, const kt__stats *s);

kt__status kt__measure(const kt__measure_opts *o, kt__timer_fn timer, void *ud, kt__stats *out, kt__errbuf *eb);

/* Statistics of N per-launch samples (the array is sorted in place); OUT's
 * timing and seen are kept. */
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

/* Whether RUNNER_UP's median lies within WINNER's own noise of WINNER's
 * (its interquartile range): a winner that more samples could as well turn
 * into the runner-up, so that the output calls the pair a tie rather than a
 * decision. Unlike the rounds' early stop (KT__TIE_MAX_SPREAD), no spread is
 * too wide: the noisier the winner, the more is a tie. */
bool kt__within_noise(const kt__stats *winner, const kt__stats *runner_up);

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

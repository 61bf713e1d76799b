/* The self-scaling timing loop. One measurement has three phases:
 *   warm-up  - a couple of launches whose times are thrown away (first-touch
 *              page faults, cold instruction caches, lazy driver work);
 *   scaling  - the number of launches per sample grows until one sample lasts
 *              min_sample_s, so that timer resolution and launch overhead are
 *              small against what is measured (short samples are discarded);
 *   sampling - samples until the median is known well enough, or the sample
 *              count or the time budget is spent, abandoning early a
 *              configuration clearly slower than the best one so far.
 * Under KT_TIMING_AUTO the sample that ends the scaling, taken with events,
 * is taken again from a graph and kt__timing_choose decides which method the
 * rest of the samples use (scaling again when the graph's sample is short). */
#include "measure.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { WARMUP_RUNS = 2 };
/* Relative standard error of the median that counts as stable. */
static const double STABLE_REL_ERR = 0.01;
/* After EARLY_SAMPLES samples a minimum this much above the best median is
 * clearly slower: noise only ever adds time, so the minimum is an optimistic
 * estimate and a 50% gap cannot be closed by more samples. Once min_samples
 * are in, a smaller gap is enough. */
enum { EARLY_SAMPLES = 3 };
static const double EARLY_FACTOR = 1.5, LATE_FACTOR = 1.1;

typedef struct run {
  kt__measure_opts o;
  kt__timer_fn timer;
  void *ud;
  kt__errbuf *eb;
  double start;
  double timed;  /* seconds the timer reported, warm-up included */
  kt_timing how; /* the method samples are taken by now */
  kt__seen seen;
  unsigned last_disturbance; /* of the last sample taken (kt__reading_disturbance) */
  double last_sample_s;      /* the last sample's seconds, all its launches */
} run;

static void apply_defaults(kt__measure_opts *o) {
  if (o->min_sample_s <= 0) o->min_sample_s = 1e-3;
  if (o->min_samples <= 0) o->min_samples = 5;
  if (o->max_samples <= 0) o->max_samples = 50;
  if (o->max_samples < o->min_samples) o->max_samples = o->min_samples;
  if (o->max_total_s <= 0) o->max_total_s = 1.0;
}

/* The budget covers wall time (cache flushes and restores between samples
 * included) and, for timers that report more than passes (simulated ones),
 * the time they report. */
static bool out_of_time(const run *r) {
  return r->timed >= r->o.max_total_s || kt__now() - r->start >= r->o.max_total_s;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_sorted(const double *v, int n) { return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]); }

/* Quantile Q of N sorted values, interpolating between neighbours. */
static double quantile_sorted(const double *v, int n, double q) {
  double pos = q * (n - 1);
  int i = (int)pos;
  return i + 1 < n ? v[i] + (pos - i) * (v[i + 1] - v[i]) : v[n - 1];
}

void kt__stats_compute(double *samples, int n, int reps, kt__stats *out) {
  *out = (kt__stats){.nsamples = n, .reps = reps, .timing = out->timing, .seen = out->seen};
  if (n <= 0) return;
  qsort(samples, (size_t)n, sizeof *samples, cmp_double);
  double sum = 0;
  for (int i = 0; i < n; i++) sum += samples[i];
  double mean = sum / n, ss = 0;
  for (int i = 0; i < n; i++) ss += (samples[i] - mean) * (samples[i] - mean);
  out->median = median_sorted(samples, n);
  out->min = samples[0];
  out->max = samples[n - 1];
  out->mean = mean;
  out->stddev = n > 1 ? sqrt(ss / (n - 1)) : 0;
  out->iqr = quantile_sorted(samples, n, 0.75) - quantile_sorted(samples, n, 0.25);
  out->contended = kt__samples_contended(samples, n);
}

bool kt__samples_contended(const double *samples, int n) {
  if (n < 3) return false;
  double lo = samples[0], hi = samples[0];
  for (int i = 1; i < n; i++) lo = fmin(lo, samples[i]), hi = fmax(hi, samples[i]);
  return lo > 0 && hi > lo * (1 + KT__CONTENDED_SPREAD);
}

bool kt__within_noise(const kt__stats *winner, const kt__stats *runner_up) {
  return runner_up->median - winner->median <= winner->iqr;
}

double kt__interquartile(double *samples, int n) {
  if (n <= 0) return 0;
  qsort(samples, (size_t)n, sizeof *samples, cmp_double);
  return quantile_sorted(samples, n, 0.75) - quantile_sorted(samples, n, 0.25);
}

/* The N values at V, sorted, in a new array (V keeps its order). */
static double *sorted_copy(const double *v, int n) {
  double *c = kt__xmalloc((size_t)n * sizeof *c);
  memcpy(c, v, (size_t)n * sizeof *c);
  qsort(c, (size_t)n, sizeof *c, cmp_double);
  return c;
}

static double median_copy(const double *v, int n) {
  double *c = sorted_copy(v, n);
  double m = median_sorted(c, n);
  free(c);
  return m;
}

/* Every other candidate must be either apart (its fastest sample slower
 * than the leader's slowest: noise only adds time, so later rounds would
 * only confirm the order) or tied (its median within the leader's
 * interquartile range of the leader's: what more rounds could gain by
 * switching to it is within the measurement's own noise, at most
 * KT__TIE_MAX_SPREAD). Replayed on recorded samples in
 * bench/finalist_rounds.py (docs/DESIGN.md, "Where a trial's time goes"). */
kt__rounds_verdict kt__rounds_verdict_of(const double *samples, int stride, int n, int rounds, const bool *counts,
                                         double *spread) {
  int lead = -1;
  if (spread) *spread = 0;
  double lead_median = INFINITY;
  for (int i = 0; i < n && rounds > 0; i++) {
    if (!counts[i]) continue;
    double m = median_copy(samples + i * stride, rounds);
    if (m < lead_median) lead_median = m, lead = i;
  }
  if (lead < 0) return KT__ROUNDS_OPEN;
  double *ls = sorted_copy(samples + lead * stride, rounds);
  double lead_max = ls[rounds - 1];
  /* Seconds within which another median is tied with the leader's: the
   * leader's interquartile range, unless that is too wide to bound anything. */
  double iqr = kt__interquartile(ls, rounds);
  free(ls);
  double bound = iqr <= KT__TIE_MAX_SPREAD * lead_median ? iqr : 0;
  if (spread && lead_median > 0) *spread = iqr / lead_median;
  kt__rounds_verdict v = KT__ROUNDS_APART;
  for (int i = 0; i < n; i++) {
    if (i == lead || !counts[i]) continue;
    bool apart = true;
    for (int r = 0; r < rounds; r++) apart &= samples[i * stride + r] > lead_max;
    if (apart) continue;
    if (median_copy(samples + i * stride, rounds) - lead_median > bound) return KT__ROUNDS_OPEN;
    v = KT__ROUNDS_TIED;
  }
  return v;
}

/* Standard error of the median, relative to it, with the spread taken from
 * the interquartile range: robust against the odd sample disturbed by another
 * process, yet not fooled by two clusters of times (where the median absolute
 * deviation can be zero while the median jumps between the clusters).
 * SORTED holds N per-launch times in order. */
static double median_rel_error(const double *sorted, int n) {
  double med = median_sorted(sorted, n);
  if (med <= 0) return 0;
  double sigma = (quantile_sorted(sorted, n, 0.75) - quantile_sorted(sorted, n, 0.25)) / 1.349;
  return 1.2533 * sigma / sqrt((double)n) / med;
}

kt_timing kt__timing_choose(int reps, double events_s, double graph_s) {
  if (reps <= 1 || !(graph_s > 0) || !(events_s > 0)) return KT_TIMING_EVENTS;
  return events_s > graph_s * (1 + KT__GRAPH_GAIN_MIN) ? KT_TIMING_GRAPH : KT_TIMING_EVENTS;
}

const char *kt__timing_name(kt_timing t) {
  switch (t) {
  case KT_TIMING_GRAPH: return "graph";
  case KT_TIMING_EVENTS: return "events";
  case KT_TIMING_AUTO: break;
  }
  return "auto";
}

void kt__seen_add(kt__seen *seen, const kt__reading *r) {
  if (r->clock_known) {
    bool first = !seen->clock_known;
    if (first || r->sm_clock_mhz < seen->sm_clock_min_mhz) seen->sm_clock_min_mhz = r->sm_clock_mhz;
    if (first || r->sm_clock_mhz > seen->sm_clock_max_mhz) seen->sm_clock_max_mhz = r->sm_clock_mhz;
    seen->clock_known = true;
  }
  if (r->throttle_known) seen->throttle_reasons |= r->throttle_reasons, seen->throttle_known = true;
  if (r->power_known) {
    if (!seen->power_known || r->power_w > seen->power_max_w) seen->power_max_w = r->power_w;
    seen->power_known = true;
  }
  if (r->temp_known) {
    if (!seen->temp_known || r->temp_c > seen->temp_max_c) seen->temp_max_c = r->temp_c;
    seen->temp_known = true;
  }
  if (r->energy_known && r->energy_s > 0) {
    seen->energy_j += r->energy_j;
    seen->energy_s += r->energy_s;
    seen->energy_known = true;
  }
}

/* Other processes in R but PEER_PID (0: none). */
static int others_but(const kt__reading *r, int peer_pid) {
  int n = r->other_processes;
  for (int i = 0; i < n && i < KT__READING_PIDS && peer_pid > 0; i++)
    if (r->other_pids[i] == (unsigned)peer_pid) return n - 1;
  return n;
}

unsigned kt__reading_disturbance(const kt__reading *r, int peer_pid) {
  unsigned d = 0;
  if (r->clock_known && r->max_clock_mhz > 0 && r->sm_clock_mhz < r->max_clock_mhz && r->throttle_known &&
      (r->throttle_reasons & KT__THROTTLE_DISTURBING))
    d |= KT__DISTURBED_THROTTLED;
  if (r->others_known && others_but(r, peer_pid) > 0) d |= KT__DISTURBED_SHARED;
  return d;
}

bool kt__seen_valid(const kt__seen *seen) { return seen->disturbed_samples == 0; }

const char *kt__disturbance_words(unsigned d) {
  static const char *const words[] = {"", "throttled", "shared", "throttled, shared"};
  return words[d & 3];
}

double kt__seen_watts(const kt__seen *seen) {
  return seen->energy_known && seen->energy_s > 0 ? seen->energy_j / seen->energy_s : NAN;
}

/* The mean power times the median time, rather than the joules over the
 * launches: the time per launch is the robust median, and the power is the
 * counter's over all the samples, which span at least the device's window
 * (NVML's counter moves only every ~100 ms: kt__measure_opts.energy_window_s). */
double kt__objective_score(kt_objective o, double seconds, const kt__seen *seen) {
  if (o == KT_OBJECTIVE_TIME) return seconds;
  double w = kt__seen_watts(seen);
  if (!(w >= 0) || !(seconds > 0)) return INFINITY;
  return o == KT_OBJECTIVE_EDP ? w * seconds * seconds : w * seconds;
}

static const char *const objective_names[] = {
    [KT_OBJECTIVE_TIME] = "time", [KT_OBJECTIVE_ENERGY] = "energy", [KT_OBJECTIVE_EDP] = "edp"};

const char *kt__objective_name(kt_objective o) { return (unsigned)o <= KT_OBJECTIVE_EDP ? objective_names[o] : "time"; }

int kt__objective_from_name(const char *name) {
  for (int i = 0; name && i <= KT_OBJECTIVE_EDP; i++)
    if (strcmp(name, objective_names[i]) == 0) return i;
  return -1;
}

/* Whether the next sample reads the energy counter: under an energy
 * objective, and otherwise where samples are long enough (a quarter of the
 * counter's window, judged by the last one) for a configuration's samples
 * to span the window, as a time tuning's reports the energy it can know.
 * Shorter ones would be left unknown (kt__measure) after paying for the
 * reads: on an H100, 6 ms a sample, 33 ms against 4.7 ms to measure a
 * 256 MB transpose configuration (bench/nvml_sample_cost_h200.sh). */
static bool energy_now(const run *r) {
  return r->o.energy_window_s > 0 && (r->o.energy_wanted || r->last_sample_s >= r->o.energy_window_s / 4);
}

static kt__status time_reps(run *r, int reps, double *seconds) {
  kt__reading reading = {0};
  kt__status st = r->timer(r->ud, r->how, reps, energy_now(r), seconds, &reading, r->eb);
  if (st == KT__ST_OK && !(*seconds >= 0)) *seconds = 0; /* NaN or negative: a broken clock */
  if (st == KT__ST_OK) r->timed += *seconds, r->last_sample_s = *seconds, kt__seen_add(&r->seen, &reading);
  r->last_disturbance = st == KT__ST_OK ? kt__reading_disturbance(&reading, r->o.peer_pid) : 0;
  return st;
}

/* After the sample just taken: true when it was disturbed and there is time
 * to take it again (it is then left out); a disturbed sample kept for lack
 * of time makes the measurement invalid. */
static bool retake(run *r) {
  if (!r->last_disturbance) return false;
  r->seen.disturbance |= r->last_disturbance;
  if (!out_of_time(r) && r->seen.retaken_samples < r->o.max_samples) {
    r->seen.retaken_samples++;
    return true;
  }
  r->seen.disturbed_samples++;
  return false;
}

/* Warm-up launches; *LAST_S is the time of the last one. A launch that
 * lasts many samples' worth has amortised its one-time costs already, and
 * repeating it would only spend the budget (and the request's timeout). */
static kt__status warm_up(run *r, double *last_s) {
  for (int i = 0; i < WARMUP_RUNS; i++) {
    kt__status st = time_reps(r, 1, last_s);
    if (st != KT__ST_OK) return st;
    if (*last_s >= 10 * r->o.min_sample_s) break;
  }
  return KT__ST_OK;
}

/* The next launch count after a sample of REPS that lasted S seconds: at
 * least double, and straight to the count that should reach the target when
 * the last sample says how far off it is (with 20% headroom). */
static int next_reps(int reps, double s, double target) {
  double want = reps * 2.0;
  if (s > 0) want = fmax(want, ceil(reps * target / s * 1.2));
  want = fmin(want, reps * 1024.0);
  return want >= INT_MAX / 2 ? INT_MAX / 2 : (int)want;
}

/* Finds the launch count per sample, starting from a sample of REPS
 * launches that lasted S seconds (the warm-up's one launch); the sample that
 * reached the target is kept as the first one (*FIRST_S, per launch), since
 * it is as good as any later one. */
static kt__status scale_reps(run *r, int reps, double s_of_reps, int *reps_out, double *first_s) {
  if (s_of_reps < r->o.min_sample_s) reps = next_reps(reps, s_of_reps, r->o.min_sample_s);
  for (;;) {
    double s;
    kt__status st = time_reps(r, reps, &s);
    if (st != KT__ST_OK) return st;
    /* Out of time or launches: take what there is rather than nothing. */
    if (s >= r->o.min_sample_s || out_of_time(r) || reps >= INT_MAX / 2) {
      *reps_out = reps;
      *first_s = s / reps;
      return KT__ST_OK;
    }
    reps = next_reps(reps, s, r->o.min_sample_s);
  }
}

/* AUTO: the first sample (*FIRST_S per launch, REPS launches, by events)
 * taken again from a graph; with the graph chosen, its sample replaces the
 * first, or starts the scaling again when it is too short. */
static kt__status choose_timing(run *r, int *reps, double *first_s) {
  if (*reps <= 1 || out_of_time(r)) return KT__ST_OK;    /* nothing to amortise */
  if (*first_s >= KT__GRAPH_USELESS_S) return KT__ST_OK; /* the host keeps ahead: no gap to close */
  double s;
  r->how = KT_TIMING_GRAPH;
  kt__status st = time_reps(r, *reps, &s);
  if (st != KT__ST_OK) return st;
  if (kt__timing_choose(*reps, *first_s, s / *reps) == KT_TIMING_EVENTS) {
    r->how = KT_TIMING_EVENTS;
    return KT__ST_OK;
  }
  if (s >= r->o.min_sample_s || out_of_time(r)) {
    *first_s = s / *reps;
    return KT__ST_OK;
  }
  return scale_reps(r, *reps, s, reps, first_s);
}

static bool clearly_slower(const run *r, const double *samples, int n) {
  if (r->o.best_s <= 0) return false;
  double lo = samples[0];
  for (int i = 1; i < n; i++) lo = fmin(lo, samples[i]);
  int early = r->o.min_samples < EARLY_SAMPLES ? r->o.min_samples : EARLY_SAMPLES;
  if (n >= early && lo > EARLY_FACTOR * r->o.best_s) return true;
  return n >= r->o.min_samples && lo > LATE_FACTOR * r->o.best_s;
}

static bool stable(const double *samples, int n) {
  double *sorted = kt__xmalloc((size_t)n * sizeof *sorted);
  for (int i = 0; i < n; i++) sorted[i] = samples[i];
  qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
  bool ok = median_rel_error(sorted, n) <= STABLE_REL_ERR;
  free(sorted);
  return ok;
}

static kt__status take_samples(run *r, int reps, double *samples, int *n, bool *stopped) {
  while (*n < r->o.max_samples) {
    if (clearly_slower(r, samples, *n)) {
      *stopped = true;
      break;
    }
    /* Contended samples are not trusted to be stable: more of them, so
     * that the median falls among those taken in the gaps. */
    bool enough = *n >= r->o.min_samples && !(*n < KT__CONTENDED_SAMPLES && kt__samples_contended(samples, *n));
    if (enough && stable(samples, *n)) break;
    if (out_of_time(r) && *n > 0) break; /* one sample at least, after retakes too */
    double s;
    kt__status st = time_reps(r, reps, &s);
    if (st != KT__ST_OK) return st;
    if (!retake(r)) samples[(*n)++] = s / reps;
  }
  return KT__ST_OK;
}

/* Under an energy objective, more samples until the energy counter's reads
 * span the device's window (kt__measure_opts.energy_window_s). */
static kt__status fill_energy_window(run *r, int reps, double *samples, int *n) {
  if (!r->o.energy_wanted || r->o.energy_window_s <= 0) return KT__ST_OK;
  /* Samples of a quarter window each: what passes between samples (cache
   * flushes, restores) then costs little beside the counter's span. */
  double per_launch = *n > 0 ? samples[*n - 1] : 0;
  if (per_launch > 0 && reps * per_launch < r->o.energy_window_s / 4) {
    double want = ceil(r->o.energy_window_s / 4 / per_launch);
    reps = want < 1e9 ? (int)want : 1000000000;
  }
  double until = kt__now() + 3 * r->o.energy_window_s;
  while (r->seen.energy_s < r->o.energy_window_s && kt__now() < until) {
    double s;
    kt__status st = time_reps(r, reps, &s);
    if (st != KT__ST_OK) return st;
    if (!retake(r) && *n < r->o.max_samples) samples[(*n)++] = s / reps; /* disturbed: counted as elsewhere */
  }
  return KT__ST_OK;
}

kt__status kt__measure(const kt__measure_opts *o, kt__timer_fn timer, void *ud, kt__stats *out, kt__errbuf *eb) {
  run r = {.o = *o, .timer = timer, .ud = ud, .eb = eb, .start = kt__now()};
  apply_defaults(&r.o);
  r.how = r.o.timing == KT_TIMING_AUTO ? KT_TIMING_EVENTS : r.o.timing;
  *out = (kt__stats){0};
  double warm_s = 0;
  kt__status st = KT__ST_OK;
  int reps = 1, n = 0;
  double *samples = kt__xmalloc((size_t)r.o.max_samples * sizeof *samples);
  if (r.o.first_s > 0) { /* the caller's timed launch stands for the warm-up */
    r.timed += r.o.first_s;
    warm_s = r.o.first_s;
    if (r.o.first_s >= r.o.min_sample_s) samples[n++] = r.o.first_s;
  } else {
    st = warm_up(&r, &warm_s);
  }
  if (st == KT__ST_OK && n == 0) {
    st = scale_reps(&r, 1, warm_s, &reps, &samples[n++]);
    if (st == KT__ST_OK && r.o.timing == KT_TIMING_AUTO) st = choose_timing(&r, &reps, &samples[0]);
    /* The scaling's last sample counts as the first unless it was disturbed. */
    if (st == KT__ST_OK && retake(&r)) n = 0;
  }
  bool stopped = false;
  if (st == KT__ST_OK) st = take_samples(&r, reps, samples, &n, &stopped);
  if (st == KT__ST_OK)
    st = fill_energy_window(&r, reps, samples, &n); /* stopped early too: slower need not cost more energy */
  if (r.seen.energy_known && r.seen.energy_s < r.o.energy_window_s) { /* too short to tell */
    r.seen.energy_known = false;
    r.seen.energy_j = r.seen.energy_s = 0;
  }
  if (st == KT__ST_OK) {
    out->timing = r.how;
    out->seen = r.seen;
    kt__stats_compute(samples, n, reps, out);
    out->stopped_early = stopped;
  }
  free(samples);
  return st;
}

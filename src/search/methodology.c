/* The autotuning_methodology score (methodology.h). The package's
 * definitions, in the order it applies them: the cut-off points and the
 * window (its SearchspaceStatistics), random search's calculated curve
 * (RandomSearchCalculatedBaseline), the strategy's curve over time
 * (StochasticOptimizationAlgorithm) and the standardised mean. */
#include "methodology.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "u64map.h"

/* The valid recorded objective values, ascending, and the costs. */
typedef struct dist {
  double *v; /* valid objective values, ascending */
  long n;
  double *cost; /* every record's cost that is a number, ascending */
  long ncost;
  double cost_ok_sum, cost_failed_sum;
  long ncost_ok, ncost_failed, records;
} dist;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void dist_load(const kt__recorded *r, dist *d) {
  uint64_t size = kt__space_size(kt__recorded_space(r));
  *d = (dist){.v = kt__xmalloc((kt__recorded_ok(r) + 1) * sizeof *d->v),
              .cost = kt__xmalloc((kt__recorded_count(r) + 1) * sizeof *d->cost)};
  for (uint64_t i = 0; i < size; i++) {
    double t;
    kt__status st = kt__recorded_lookup(r, i, &t);
    if (st == KT__ST_CONSTRAINT) continue;
    d->records++;
    if (st == KT__ST_OK) d->v[d->n++] = t;
    double c = kt__recorded_cost(r, i);
    if (isnan(c)) continue;
    d->cost[d->ncost++] = c;
    if (st == KT__ST_OK) d->cost_ok_sum += c, d->ncost_ok++;
    else d->cost_failed_sum += c, d->ncost_failed++;
  }
  qsort(d->v, (size_t)d->n, sizeof *d->v, cmp_double);
  qsort(d->cost, (size_t)d->ncost, sizeof *d->cost, cmp_double);
}

static void dist_free(dist *d) {
  free(d->v);
  free(d->cost);
}

/* numpy's median: the mean of the two middle values of an even count. */
static double median_sorted(const double *v, long n) { return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]); }

/* Python's round() and numpy's: halves to even (the default rounding mode). */
static long round_even(double x) { return (long)nearbyint(x); }

/* Random search's expected evaluations to get CUTOFF of the way from the
 * median to the optimum: with the values worst first, i is the first that
 * is good enough, and the best of M draws from N sits at i = M(N+1)/(M+1)
 * in expectation, so M = ceil(i / (N + 1 - i)). When i already is the
 * optimum the package steps one back (a cut-off below 1 must not need it). */
static int cutoff_fevals(const dist *d, double cutoff, long *fevals, kt__errbuf *eb) {
  double opt = d->v[0], target = opt + (median_sorted(d->v, d->n) - opt) * (1 - cutoff);
  long i = 0;
  while (i < d->n && d->v[d->n - 1 - i] > target) i++;
  if (cutoff != 1.0 && d->v[d->n - 1 - i] == opt) {
    KT__RETURN_IF(i == 0, eb, KT_INVALID, "every recorded value is the optimum: random search reaches it at once");
    i--;
  }
  *fevals = (long)ceil((double)i / (double)(d->n + 1 - i));
  return KT_OK;
}

int kt__method_window_of(const kt__recorded *r, double cutoff, double start, kt__method_window *w, kt__errbuf *eb) {
  KT__RETURN_IF(!(cutoff > 0 && cutoff <= 1 && start >= 0 && start < cutoff), eb, KT_INVALID,
                "cut-offs %g and %g: 0 <= start < cutoff <= 1 expected", start, cutoff);
  dist d;
  dist_load(r, &d);
  int rc = KT_OK;
  if (d.ncost == 0) rc = kt__err(eb, KT_INVALID, "the file records no compile or run times");
  *w = (kt__method_window){0};
  if (rc == KT_OK) rc = cutoff_fevals(&d, start, &w->fevals_start, eb);
  if (rc == KT_OK) rc = cutoff_fevals(&d, cutoff, &w->fevals_end, eb);
  if (rc == KT_OK) {
    /* The package's margin: at least two evaluations between the ends. */
    if (w->fevals_end - w->fevals_start < 2) {
      if (w->fevals_start == 0) w->fevals_end += 2;
      else w->fevals_end += 1, w->fevals_start -= 1;
    }
    w->optimum = d.v[0];
    w->median = median_sorted(d.v, d.n);
    w->median_cost = median_sorted(d.cost, d.ncost);
    w->t_start = start > 0 ? (double)w->fevals_start * w->median_cost : 0;
    w->t_end = (double)w->fevals_end * w->median_cost;
    /* "mean_per_feval": a valid evaluation's mean cost plus the chance of
     * an invalid one times its mean cost. */
    w->cost_per_feval = d.ncost_failed == 0 || d.ncost_ok == 0
                            ? (d.cost_ok_sum + d.cost_failed_sum) / (double)d.ncost
                            : d.cost_ok_sum / (double)d.ncost_ok + (double)d.ncost_failed / (double)d.records *
                                                                       (d.cost_failed_sum / (double)d.ncost_failed);
    if (!(w->cost_per_feval > 0)) rc = kt__err(eb, KT_INVALID, "the recorded evaluations cost no time");
  }
  dist_free(&d);
  return rc;
}

/* ---- random search ---- */

/* Slopes of a monotone piecewise cubic through (X, Y), N >= 3, as
 * Fritsch and Carlson (and scipy's PchipInterpolator): a weighted harmonic
 * mean of the neighbouring secants inside, 0 where they disagree in sign,
 * a one-sided three-point estimate kept in shape at the ends. */
static double pchip_end(double h0, double h1, double m0, double m1) {
  double d = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1);
  if ((d > 0) != (m0 > 0) || d == 0) return 0;
  if ((m0 > 0) != (m1 > 0) && fabs(d) > 3 * fabs(m0)) return 3 * m0;
  return d;
}

static void pchip_slopes(const double *x, const double *y, long n, double *d) {
  double *h = kt__xmalloc((size_t)n * sizeof *h), *m = kt__xmalloc((size_t)n * sizeof *m);
  for (long k = 0; k + 1 < n; k++) {
    h[k] = x[k + 1] - x[k];
    m[k] = (y[k + 1] - y[k]) / h[k];
  }
  for (long k = 1; k + 1 < n; k++) {
    if (m[k - 1] == 0 || m[k] == 0 || (m[k - 1] > 0) != (m[k] > 0)) {
      d[k] = 0;
      continue;
    }
    double w1 = 2 * h[k] + h[k - 1], w2 = h[k] + 2 * h[k - 1];
    d[k] = (w1 + w2) / (w1 / m[k - 1] + w2 / m[k]);
  }
  d[0] = pchip_end(h[0], h[1], m[0], m[1]);
  d[n - 1] = pchip_end(h[n - 2], h[n - 3], m[n - 2], m[n - 3]);
  free(h);
  free(m);
}

/* The cubic Hermite through (X, Y) with slopes D at T (X[0] <= T <= X[N-1]). */
static double hermite_at(const double *x, const double *y, const double *d, long n, double t) {
  long k = 0;
  while (k + 2 < n && t > x[k + 1]) k++;
  double h = x[k + 1] - x[k], s = (t - x[k]) / h;
  double h00 = (1 + 2 * s) * (1 - s) * (1 - s), h10 = s * (1 - s) * (1 - s), h01 = s * s * (3 - 2 * s),
         h11 = s * s * (s - 1);
  return h00 * y[k] + h10 * h * d[k] + h01 * y[k + 1] + h11 * h * d[k + 1];
}

/* The package smooths the draws with PCHIP over the distinct evaluation
 * counts, read at N evenly spaced counts from the first to the last. */
static void smooth_draws(const long *fevals, const double *draws, int n, double *out) {
  double *x = kt__xmalloc((size_t)n * sizeof *x), *y = kt__xmalloc((size_t)n * sizeof *y);
  double *d = kt__xmalloc((size_t)n * sizeof *d);
  long u = 0;
  for (int k = 0; k < n; k++)
    if (k == 0 || fevals[k] > fevals[k - 1]) x[u] = (double)fevals[k], y[u++] = draws[k];
  for (int k = 0; k < n; k++) {
    double t = n == 1 ? x[0] : x[0] + (x[u - 1] - x[0]) * k / (n - 1);
    if (u == 1) out[k] = y[0];
    else if (u == 2) out[k] = y[0] + (y[1] - y[0]) * (t - x[0]) / (x[1] - x[0]);
    else {
      if (k == 0) pchip_slopes(x, y, u, d);
      out[k] = hermite_at(x, y, d, u, t);
    }
  }
  free(x);
  free(y);
  free(d);
}

void kt__method_random_curve(const kt__recorded *r, const kt__method_window *w, const double *times, int n,
                             double *out) {
  dist d;
  dist_load(r, &d);
  long *fevals = kt__xmalloc((size_t)n * sizeof *fevals);
  double *draws = kt__xmalloc((size_t)n * sizeof *draws);
  for (int k = 0; k < n; k++) {
    long m = round_even(fmax(times[k] / w->cost_per_feval, 1));
    long i = round_even((double)m * (double)(d.n + 1) / (double)(m + 1));
    if (i > d.n - 1) i = d.n - 1;
    fevals[k] = m;
    draws[k] = d.v[d.n - 1 - i]; /* the values worst first */
  }
  if (n <= 2) memcpy(out, draws, (size_t)n * sizeof *out);
  else smooth_draws(fevals, draws, n, out);
  free(fevals);
  free(draws);
  dist_free(&d);
}

/* ---- the strategy ---- */

typedef struct point {
  double t, rank;
} point;

static int cmp_point(const void *a, const void *b) {
  const point *p = a, *q = b;
  if (p->t != q->t) return (p->t > q->t) - (p->t < q->t);
  return (p->rank > q->rank) - (p->rank < q->rank);
}

/* The position of V in the ascending D (the first equal value). */
static double rank_of(const dist *d, double v) {
  long lo = 0, hi = d->n;
  while (lo < hi) {
    long mid = lo + (hi - lo) / 2;
    if (d->v[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return (double)lo;
}

/* Decreasing isotonic regression of the sorted points P (as sklearn's:
 * equal times merged into their mean first, then pool-adjacent-violators)
 * into X, Y; returns the number of distinct times. */
static long isotonic_decreasing(const point *p, long n, double *x, double *y, double *wt) {
  long u = 0;
  for (long i = 0; i < n; i++) {
    if (u > 0 && p[i].t == x[u - 1]) {
      y[u - 1] += (p[i].rank - y[u - 1]) / (wt[u - 1] + 1);
      wt[u - 1] += 1;
      continue;
    }
    x[u] = p[i].t, y[u] = p[i].rank, wt[u] = 1;
    u++;
  }
  /* Blocks of equal fitted value: a stack of (mean, weight, length). */
  double *bm = kt__xmalloc((size_t)u * sizeof *bm), *bw = kt__xmalloc((size_t)u * sizeof *bw);
  long *bl = kt__xmalloc((size_t)u * sizeof *bl), nb = 0;
  for (long i = 0; i < u; i++) {
    bm[nb] = y[i], bw[nb] = wt[i], bl[nb] = 1, nb++;
    while (nb > 1 && bm[nb - 2] < bm[nb - 1]) {
      double w2 = bw[nb - 2] + bw[nb - 1];
      bm[nb - 2] = (bm[nb - 2] * bw[nb - 2] + bm[nb - 1] * bw[nb - 1]) / w2;
      bw[nb - 2] = w2, bl[nb - 2] += bl[nb - 1], nb--;
    }
  }
  for (long b = 0, i = 0; b < nb; b++)
    for (long k = 0; k < bl[b]; k++) y[i++] = bm[b];
  free(bm);
  free(bw);
  free(bl);
  return u;
}

/* The fit at T: linear between the distinct times, clipped at the ends. */
static double fit_at(const double *x, const double *y, long u, double t) {
  if (t <= x[0]) return y[0];
  if (t >= x[u - 1]) return y[u - 1];
  long lo = 0, hi = u - 1;
  while (hi - lo > 1) {
    long mid = lo + (hi - lo) / 2;
    if (x[mid] <= t) lo = mid;
    else hi = mid;
  }
  return y[lo] + (y[hi] - y[lo]) * (t - x[lo]) / (x[hi] - x[lo]);
}

/* The median over repeats of the time each last improved on nothing, i.e.
 * of its last evaluation with a valid best (the package's real stopping
 * point: past it, fewer than half the repeats are still running). */
static double stopping_time(const kt__method_trace *traces, int ntraces) {
  double *last = kt__xmalloc((size_t)ntraces * sizeof *last);
  int n = 0;
  for (int i = 0; i < ntraces; i++) {
    double t = NAN;
    for (long j = 0; j < traces[i].n; j++)
      if (!isnan(traces[i].best[j])) t = traces[i].time[j];
    if (!isnan(t)) last[n++] = t;
  }
  qsort(last, (size_t)n, sizeof *last, cmp_double);
  double t = n ? median_sorted(last, n) : NAN;
  free(last);
  return t;
}

/* The valid (time, rank) points of the repeats within the window plus a
 * margin of 10% on either side, sorted. */
static long pooled_points(const dist *d, const kt__method_trace *traces, int ntraces, double t0, double t1,
                          point **out) {
  long cap = 0, n = 0;
  for (int i = 0; i < ntraces; i++) cap += traces[i].n;
  point *p = kt__xmalloc((size_t)(cap + 1) * sizeof *p);
  for (int i = 0; i < ntraces; i++)
    for (long j = 0; j < traces[i].n; j++) {
      double t = traces[i].time[j], b = traces[i].best[j];
      if (!isnan(b) && t >= t0 * 0.9 && t <= t1 * 1.1) p[n++] = (point){t, rank_of(d, b)};
    }
  qsort(p, (size_t)n, sizeof *p, cmp_point);
  *out = p;
  return n;
}

int kt__method_strategy_curve(const kt__recorded *r, const kt__method_trace *traces, int ntraces, const double *times,
                              int n, double *out, kt__errbuf *eb) {
  dist d;
  dist_load(r, &d);
  point *p = NULL;
  long np = pooled_points(&d, traces, ntraces, times[0], times[n - 1], &p);
  double stop = stopping_time(traces, ntraces);
  int rc = KT_OK;
  if (np < 2) rc = kt__err(eb, KT_INVALID, "fewer than two valid evaluations fall in the time window");
  else if (stop < times[n - 1] && stop <= times[0])
    rc = kt__err(eb, KT_INVALID, "half the repeats stop (at %g s) before the time window (from %g s)", stop, times[0]);
  if (rc == KT_OK) {
    double *x = kt__xmalloc((size_t)np * sizeof *x), *y = kt__xmalloc((size_t)np * sizeof *y);
    double *wt = kt__xmalloc((size_t)np * sizeof *wt);
    long u = isotonic_decreasing(p, np, x, y, wt);
    int held = n;
    for (int k = 0; k < n; k++) {
      if (held == n && stop < times[n - 1] && times[k] > stop) held = k;
      long i = round_even(fit_at(x, y, u, times[held < n ? held : k]));
      out[k] = d.v[i < 0 ? 0 : i > d.n - 1 ? d.n - 1 : i];
    }
    free(x);
    free(y);
    free(wt);
  }
  free(p);
  dist_free(&d);
  return rc;
}

int kt__method_score_traces(const kt__recorded *r, const kt__method_window *w, const kt__method_trace *traces,
                            int ntraces, double *score, kt__errbuf *eb) {
  enum { N = KT__METHOD_RESOLUTION };
  double *times = kt__xmalloc(N * sizeof *times), *rnd = kt__xmalloc(N * sizeof *rnd);
  double *strat = kt__xmalloc(N * sizeof *strat);
  for (int k = 0; k < N; k++) times[k] = w->t_start + (w->t_end - w->t_start) * k / (N - 1);
  kt__method_random_curve(r, w, times, N, rnd);
  int rc = kt__method_strategy_curve(r, traces, ntraces, times, N, strat, eb);
  double sum = 0;
  for (int k = 0; rc == KT_OK && k < N; k++) {
    if (rnd[k] == w->optimum)
      rc = kt__err(eb, KT_INVALID, "random search is expected at the optimum at %g s", times[k]);
    else sum += (strat[k] - rnd[k]) / (w->optimum - rnd[k]);
  }
  *score = sum / N;
  free(times);
  free(rnd);
  free(strat);
  return rc;
}

/* ---- replay ---- */

typedef struct trace_buf {
  double *time, *best;
  long n, cap;
} trace_buf;

static void trace_push(trace_buf *b, double t, double best) {
  if (b->n == b->cap) {
    b->cap = b->cap ? 2 * b->cap : 256;
    b->time = kt__xreallocarray(b->time, (size_t)b->cap, sizeof *b->time);
    b->best = kt__xreallocarray(b->best, (size_t)b->cap, sizeof *b->best);
  }
  b->time[b->n] = t;
  b->best[b->n++] = best;
}

/* One repeat, one configuration at a time until the cumulative cost passes
 * LIMIT or the strategy has nothing left; the strategy is told what each
 * evaluation cost and the time left before LIMIT, as kt_tune tells it under
 * a time budget. */
static int replay_timed(const kt__recorded *r, const kt__strategy_ops *ops, long planned, uint64_t seed, double limit,
                        trace_buf *b, kt__errbuf *eb) {
  const kt__space *space = kt__recorded_space(r);
  kt__strategy *st = kt__strategy_create(ops, space, seed, planned);
  KT__RETURN_IF(!st, eb, KT_INTERNAL, "strategy %s could not start", ops->name);
  kt__u64map seen = {0};
  double spent = 0, best = INFINITY;
  uint64_t index;
  int rc = KT_OK;
  while (spent < limit && kt__strategy_ask(st, &index, 1) == 1) {
    if (!kt__u64map_put(&seen, index, 0) || !kt__space_valid_index(space, index)) {
      rc = kt__err(eb, KT_INTERNAL, "strategy %s proposed a repeated or invalid configuration", ops->name);
      break;
    }
    double t, cost = kt__recorded_cost(r, index);
    kt__status status = kt__recorded_lookup(r, index, &t);
    spent += isnan(cost) ? 0 : cost;
    if (t < best) best = t;
    trace_push(b, spent, isfinite(best) ? best : NAN);
    kt__strategy_tell(st, index, status, t);
    if (!isnan(cost)) kt__strategy_spent(st, index, cost, limit - spent);
  }
  kt__u64map_free(&seen);
  kt__strategy_free(st);
  return rc;
}

int kt__method_traces(const kt__recorded *r, const kt__strategy_ops *ops, int repeats, uint64_t seed,
                      kt__method_trace **out, int *n, kt__errbuf *eb) {
  *out = NULL;
  *n = 0;
  KT__RETURN_IF(repeats < 1 || !ops, eb, KT_INVALID, "a strategy and at least one repeat expected");
  kt__method_window w;
  KT__FORWARD(kt__method_window_of(r, KT__METHOD_CUTOFF, KT__METHOD_CUTOFF_START, &w, eb));
  double limit = w.t_end * 1.1;
  long planned = (long)ceil(limit / w.cost_per_feval);
  kt__method_trace *traces = kt__xcalloc((size_t)repeats, sizeof *traces);
  int rc = KT_OK;
  for (int i = 0; i < repeats && rc == KT_OK; i++) {
    trace_buf b = {0};
    rc = replay_timed(r, ops, planned, kt__replay_seed(seed, i), limit, &b, eb);
    traces[i] = (kt__method_trace){b.time, b.best, b.n};
  }
  if (rc != KT_OK) {
    kt__method_traces_free(traces, repeats);
    return rc;
  }
  *out = traces;
  *n = repeats;
  return KT_OK;
}

void kt__method_traces_free(kt__method_trace *traces, int n) {
  for (int i = 0; traces && i < n; i++) {
    free((double *)traces[i].time);
    free((double *)traces[i].best);
  }
  free(traces);
}

int kt__method_score(const kt__recorded *r, const kt__strategy_ops *ops, int repeats, uint64_t seed,
                     kt__method_result *out, kt__errbuf *eb) {
  *out = (kt__method_result){0};
  kt__method_trace *traces;
  int n;
  KT__FORWARD(kt__method_traces(r, ops, repeats, seed, &traces, &n, eb));
  int rc = kt__method_window_of(r, KT__METHOD_CUTOFF, KT__METHOD_CUTOFF_START, &out->window, eb);
  for (int i = 0; i < n; i++) out->evals_mean += (double)traces[i].n / n;
  if (rc == KT_OK) rc = kt__method_score_traces(r, &out->window, traces, n, &out->score, eb);
  kt__method_traces_free(traces, n);
  return rc;
}

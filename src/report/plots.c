/* The plots of one key (plots.h). Times are drawn on log axes: a space's
 * times span orders of magnitude, and ratios are what a tuning is about. */
#include "plots.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../config.h"
#include "sample.h"
#include "svg.h"

enum { WIDTH = 560, HEIGHT = 300, BINS = 30, MAX_STEPS = 1000, MAX_CATEGORIES = 40 };

void kt__key_view_init(kt__key_view *v, const kt__report_key *k, int max_points) {
  memset(v, 0, sizeof *v);
  v->k = k;
  v->sample = kt__xcalloc((size_t)k->n + 1, sizeof *v->sample);
  v->nsample = kt__report_sample(k, max_points, v->sample, &v->nok);
  v->tmin = INFINITY, v->tmax = 0;
  for (int i = 0; i < k->n; i++) {
    v->counts[k->points[i].status]++;
    if (k->points[i].status != KT__ST_OK) continue;
    v->tmin = fmin(v->tmin, k->points[i].seconds);
    v->tmax = fmax(v->tmax, k->points[i].seconds);
  }
  if (v->nok == 0) v->tmin = 1e-6, v->tmax = 1e-3;
}

void kt__key_view_free(kt__key_view *v) { free(v->sample); }

/* A log time axis around [LO, HI], widened so that no point sits on the frame. */
static kt__axis time_axis(double lo, double hi, const char *label) {
  return (kt__axis){.lo = lo / 1.25, .hi = hi * 1.25, .log = true, .unit = KT__UNIT_SECONDS, .label = label};
}

/* A point's hover label (its SVG <title>): "winner: A=1 B=2, 1.23 ms", or
 * without WHAT (NULL) the configuration and its time. */
static const char *point_tip(const kt__report_key *k, int i, const char *what, char *buf, size_t len) {
  kt__sbuf cfg = {0};
  char t[32];
  kt__config_format((const char *const *)k->names, &k->values[(size_t)i * (size_t)k->nnames], k->nnames, "", &cfg);
  kt__format_seconds(k->points[i].seconds, t, sizeof t);
  const kt__report_point *p = &k->points[i];
  char energy[48] = "";
  if (p->joules >= 0) snprintf(energy, sizeof energy, ", %.3g mJ", p->joules * 1e3);
  snprintf(buf, len, "%s%s%s, %s%s%s%s%s", what ? what : "", what ? ": " : "", cfg.s, t, energy,
           p->method ? " by " : "", p->method ? p->method : "", p->valid ? "" : " (not valid: disturbed)");
  kt__sbuf_free(&cfg);
  return buf;
}

/* ---- time against energy ---- */

static const kt__report_key *energy_subject;
static int by_time_then_energy(const void *a, const void *b) {
  const kt__report_point *x = &energy_subject->points[*(const int *)a], *y = &energy_subject->points[*(const int *)b];
  if (x->seconds != y->seconds) return x->seconds < y->seconds ? -1 : 1;
  return (x->joules > y->joules) - (x->joules < y->joules);
}

int kt__report_pareto(const kt__report_key *k, int *front) {
  int *order = kt__xcalloc((size_t)k->n + 1, sizeof *order), n = 0, nf = 0;
  for (int i = 0; i < k->n; i++)
    if (k->points[i].status == KT__ST_OK && k->points[i].joules >= 0) order[n++] = i;
  energy_subject = k; /* qsort has no user pointer; reports are made on one thread */
  qsort(order, (size_t)n, sizeof *order, by_time_then_energy);
  /* By time, each point that spends less energy than every faster one. */
  double least = INFINITY;
  for (int j = 0; j < n; j++)
    if (k->points[order[j]].joules < least) least = k->points[order[j]].joules, front[nf++] = order[j];
  free(order);
  return nf;
}

bool kt__plot_energy(kt__sbuf *b, const kt__key_view *v) {
  const kt__report_key *k = v->k;
  double jmin = INFINITY, jmax = 0;
  for (int i = 0; i < k->n; i++)
    if (k->points[i].status == KT__ST_OK && k->points[i].joules > 0)
      jmin = fmin(jmin, k->points[i].joules), jmax = fmax(jmax, k->points[i].joules);
  if (!(jmax > 0)) return false;
  int *front = kt__xcalloc((size_t)k->n + 1, sizeof *front);
  int nf = kt__report_pareto(k, front);
  kt__plot p;
  kt__axis x = time_axis(v->tmin, v->tmax, "time per launch (log scale)");
  kt__axis y = {.lo = jmin / 1.25, .hi = jmax * 1.25, .log = true, .label = "energy per launch, J (log scale)"};
  kt__plot_begin(&p, b, "Time against energy per launch, with the Pareto front", WIDTH, HEIGHT, x, y, NULL, 0);
  char tip[512];
  for (int j = 0; j < v->nsample; j++) {
    int i = v->sample[j];
    if (k->points[i].joules > 0)
      kt__plot_marker(&p, 0, k->points[i].seconds, k->points[i].joules, 4, "pt",
                      point_tip(k, i, NULL, tip, sizeof tip));
  }
  double *xs = kt__xcalloc((size_t)nf + 1, sizeof *xs), *ys = kt__xcalloc((size_t)nf + 1, sizeof *ys);
  for (int j = 0; j < nf; j++) {
    xs[j] = k->points[front[j]].seconds, ys[j] = k->points[front[j]].joules;
    kt__plot_marker(&p, 2, xs[j], ys[j], 6, "pt front", point_tip(k, front[j], "Pareto front", tip, sizeof tip));
  }
  kt__plot_line(&p, 2, xs, ys, nf, true, 1.5);
  if (k->winner >= 0 && k->points[k->winner].joules > 0)
    kt__plot_star(&p, k->points[k->winner].seconds, k->points[k->winner].joules, "pt winner",
                  point_tip(k, k->winner, "winner", tip, sizeof tip));
  const char *labels[] = {"valid configurations", "Pareto front (none both faster and cheaper)", "winner"};
  int styles[] = {0, 2, 0};
  kt__swatch kinds[] = {KT__SWATCH_MARKER, KT__SWATCH_LINE, KT__SWATCH_STAR};
  kt__plot_legend(&p, labels, styles, kinds, 3);
  kt__plot_end(&p);
  free(xs);
  free(ys);
  free(front);
  return true;
}

/* ---- the distribution of times, and the failures ---- */

static int bin_of(const kt__key_view *v, double s, double lo, double hi) {
  int b = hi > lo ? (int)((log10(s) - lo) / (hi - lo) * BINS) : 0;
  return b < 0 ? 0 : b >= BINS ? BINS - 1 : b;
}

void kt__plot_distribution(kt__sbuf *b, const kt__key_view *v) {
  const kt__report_key *k = v->k;
  double lo = log10(v->tmin / 1.05), hi = log10(v->tmax * 1.05);
  int count[BINS] = {0}, top = 1;
  for (int i = 0; i < k->n; i++)
    if (k->points[i].status == KT__ST_OK) count[bin_of(v, k->points[i].seconds, lo, hi)]++;
  for (int i = 0; i < BINS; i++) top = count[i] > top ? count[i] : top;
  kt__plot p;
  kt__axis x = time_axis(v->tmin, v->tmax, "time per launch (log scale)");
  kt__axis y = {.lo = 0, .hi = top * 1.15, .label = "configurations per bin"};
  kt__plot_begin(&p, b, "Distribution of the valid configurations' times", WIDTH, HEIGHT, x, y, NULL, 0);
  for (int i = 0; i < BINS; i++) {
    if (!count[i]) continue;
    char attrs[48];
    snprintf(attrs, sizeof attrs, "data-count='%d'", count[i]);
    double b0 = pow(10, lo + (hi - lo) * i / BINS), b1 = pow(10, lo + (hi - lo) * (i + 1) / BINS);
    kt__plot_bar(&p, 0, b0, 0, b1, count[i], attrs);
  }
  char tip[512];
  if (k->def >= 0 && k->points[k->def].status == KT__ST_OK) {
    double s = k->points[k->def].seconds;
    kt__plot_ring(&p, 1, s, count[bin_of(v, s, lo, hi)] + top * 0.05, 6, "pt default",
                  point_tip(k, k->def, "default", tip, sizeof tip));
  }
  if (k->winner >= 0) {
    double s = k->points[k->winner].seconds;
    kt__plot_star(&p, s, count[bin_of(v, s, lo, hi)] + top * 0.05, "pt winner",
                  point_tip(k, k->winner, "winner", tip, sizeof tip));
  }
  const char *labels[] = {"valid configurations", "winner", "default"};
  int styles[] = {0, 0, 1};
  kt__swatch kinds[] = {KT__SWATCH_BAR, KT__SWATCH_STAR, KT__SWATCH_RING};
  kt__plot_legend(&p, labels, styles, kinds, k->def >= 0 ? 3 : 2);
  kt__plot_end(&p);
}

/* The bar style of a status: OK solid, each failure its own pattern. */
static int status_style(kt__status s) {
  switch (s) {
  case KT__ST_OK: return 0;
  case KT__ST_COMPILE: return 1;
  case KT__ST_RUNTIME: return 3;
  case KT__ST_TIMEOUT: return 2;
  case KT__ST_CORRECTNESS: return 4;
  default: return 5;
  }
}

void kt__plot_statuses(kt__sbuf *b, const kt__key_view *v) {
  const char *names[KT__ST_COUNT];
  kt__status which[KT__ST_COUNT];
  int n = 0, top = 1;
  for (int s = 0; s < KT__ST_COUNT; s++) {
    if (!v->counts[s]) continue;
    which[n] = (kt__status)s;
    names[n++] = kt__status_name((kt__status)s);
    top = v->counts[s] > top ? v->counts[s] : top;
  }
  kt__plot p;
  kt__axis x = {.label = "status"}, y = {.lo = 0, .hi = top * 1.18, .label = "configurations"};
  kt__plot_begin(&p, b, "Configurations by status", 360, HEIGHT, x, y, names, n);
  for (int i = 0; i < n; i++) {
    char attrs[96], label[32];
    int c = v->counts[which[i]];
    snprintf(attrs, sizeof attrs, "data-status='%s' data-count='%d'", names[i], c);
    kt__plot_bar(&p, status_style(which[i]), i - 0.35, 0, i + 0.35, c, attrs);
    snprintf(label, sizeof label, "%d", c);
    kt__plot_text(&p, i, c + top * 0.03, "middle", label);
  }
  kt__plot_end(&p);
}

/* ---- each tuned name's effect ---- */

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The distinct values NAME takes among K's points, sorted, into a malloc'ed
 * array; returns how many. */
static int distinct_values(const kt__report_key *k, int name, int64_t **out) {
  int64_t *v = kt__xcalloc((size_t)k->n + 1, sizeof *v);
  for (int i = 0; i < k->n; i++) v[i] = k->values[(size_t)i * (size_t)k->nnames + (size_t)name];
  qsort(v, (size_t)k->n, sizeof *v, cmp_i64);
  int n = 0;
  for (int i = 0; i < k->n; i++)
    if (n == 0 || v[i] != v[n - 1]) v[n++] = v[i];
  *out = v;
  return n;
}

static int index_of(const int64_t *values, int n, int64_t v) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (values[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The median time of the OK points at each value, over every point (NAN
 * where none is OK). */
static void medians(const kt__report_key *k, int name, const int64_t *values, int nv, double *med) {
  int *count = kt__xcalloc((size_t)nv, sizeof *count), *at = kt__xcalloc((size_t)nv + 1, sizeof *at);
  int *slot = kt__xcalloc((size_t)k->n + 1, sizeof *slot);
  for (int i = 0; i < k->n; i++) {
    slot[i] = index_of(values, nv, k->values[(size_t)i * (size_t)k->nnames + (size_t)name]);
    if (k->points[i].status == KT__ST_OK) count[slot[i]]++;
  }
  for (int c = 0; c < nv; c++) at[c + 1] = at[c] + count[c];
  double *times = kt__xcalloc((size_t)at[nv] + 1, sizeof *times);
  int *fill = kt__xcalloc((size_t)nv, sizeof *fill);
  for (int i = 0; i < k->n; i++)
    if (k->points[i].status == KT__ST_OK) times[at[slot[i]] + fill[slot[i]]++] = k->points[i].seconds;
  for (int c = 0; c < nv; c++) {
    double *t = times + at[c];
    qsort(t, (size_t)count[c], sizeof *t, cmp_double);
    med[c] = count[c] == 0 ? NAN : count[c] % 2 ? t[count[c] / 2] : 0.5 * (t[count[c] / 2 - 1] + t[count[c] / 2]);
  }
  free(count), free(at), free(slot), free(times), free(fill);
}

/* A small deterministic offset within a category, so that points of one
 * value do not hide each other. */
static double jitter(int i) { return ((double)((unsigned)i * 2654435761u % 1000) / 1000 - 0.5) * 0.5; }

/* Where a value sits on the x axis: its category, or itself when the name
 * takes too many values to label each. */
static double x_of(const int64_t *values, int nv, int64_t v, bool categorical) {
  return categorical ? index_of(values, nv, v) : (double)v;
}

static void effect_points(kt__plot *p, const kt__key_view *v, int name, const int64_t *values, int nv, bool cat) {
  const kt__report_key *k = v->k;
  for (int j = 0; j < v->nsample; j++) {
    int i = v->sample[j];
    if (i == k->winner) continue;
    double x = x_of(values, nv, k->values[(size_t)i * (size_t)k->nnames + (size_t)name], cat);
    char tip[512];
    kt__plot_marker(p, 0, x + (cat ? jitter(i) : 0), k->points[i].seconds, 2.4, "pt",
                    point_tip(k, i, NULL, tip, sizeof tip));
  }
}

/* The marker style of a value that only failed: a cross (svg.c's style 4). */
enum { FAILED_STYLE = 4 };

/* A median marker's hover label: "median at TILE=16: 1.23 ms". */
static const char *median_tip(const char *name, int64_t value, double seconds, char *buf, size_t len) {
  char t[32];
  kt__format_seconds(seconds, t, sizeof t);
  snprintf(buf, len, "median at %s=%lld: %s", name, (long long)value, t);
  return buf;
}

/* The medians per value, a line through each run of values that have one:
 * a value whose every configuration failed has none, and the line stops
 * there rather than run across it. */
static void median_line(kt__plot *p, const char *name, const int64_t *values, int nv, const double *med, bool cat) {
  double *mx = kt__xcalloc((size_t)nv + 1, sizeof *mx), *my = kt__xcalloc((size_t)nv + 1, sizeof *my);
  int run = 0;
  for (int c = 0; c <= nv; c++) {
    if (c < nv && !isnan(med[c])) {
      mx[run] = cat ? c : (double)values[c], my[run++] = med[c];
      continue;
    }
    kt__plot_line(p, 1, mx, my, run, false, 2);
    run = 0;
  }
  for (int c = 0; c < nv; c++) {
    char tip[160];
    if (!isnan(med[c]))
      kt__plot_marker(p, 1, cat ? c : (double)values[c], med[c], 4, "median",
                      median_tip(name, values[c], med[c], tip, sizeof tip));
  }
  free(mx), free(my);
}

/* A value whose every configuration failed has no time to plot: a cross at
 * the top of the plot says it was tried. True when there was one. */
static bool failed_values(kt__plot *p, const kt__key_view *v, int name, const int64_t *values, int nv,
                          const double *med, bool cat) {
  const kt__report_key *k = v->k;
  bool any = false;
  for (int c = 0; c < nv; c++) {
    if (!isnan(med[c])) continue;
    int n = 0;
    for (int i = 0; i < k->n; i++) n += k->values[(size_t)i * (size_t)k->nnames + (size_t)name] == values[c];
    char tip[160];
    snprintf(tip, sizeof tip, "%s=%lld: every configuration failed (%d)", k->names[name], (long long)values[c], n);
    kt__plot_marker(p, FAILED_STYLE, cat ? c : (double)values[c], v->tmax, 4, "failed", tip);
    any = true;
  }
  return any;
}

void kt__plot_effect(kt__sbuf *b, const kt__key_view *v, int name) {
  const kt__report_key *k = v->k;
  int64_t *values;
  int nv = distinct_values(k, name, &values);
  bool cat = nv <= MAX_CATEGORIES;
  char **labels = kt__xcalloc((size_t)nv + 1, sizeof *labels);
  for (int c = 0; cat && c < nv; c++) {
    char t[32];
    snprintf(t, sizeof t, "%lld", (long long)values[c]);
    labels[c] = kt__xstrdup(t);
  }
  kt__plot p;
  char title[160];
  snprintf(title, sizeof title, "Time against %s, with the median per value", k->names[name]);
  kt__axis x = {.lo = (double)values[0], .hi = (double)values[nv - 1], .label = k->names[name]};
  if (x.hi <= x.lo) x.hi = x.lo + 1;
  kt__plot_begin(&p, b, title, WIDTH, HEIGHT, x, time_axis(v->tmin, v->tmax, "time per launch (log scale)"),
                 cat ? (const char *const *)labels : NULL, cat ? nv : 0);
  effect_points(&p, v, name, values, nv, cat);
  double *med = kt__xcalloc((size_t)nv, sizeof *med);
  medians(k, name, values, nv, med);
  median_line(&p, k->names[name], values, nv, med, cat);
  bool failed = failed_values(&p, v, name, values, nv, med, cat);
  char tip[512];
  if (k->winner >= 0)
    kt__plot_star(&p, x_of(values, nv, k->values[(size_t)k->winner * (size_t)k->nnames + (size_t)name], cat),
                  k->points[k->winner].seconds, "pt winner", point_tip(k, k->winner, "winner", tip, sizeof tip));
  const char *legend[] = {"configuration", "median per value", "winner", "every one failed"};
  int styles[] = {0, 1, 0, FAILED_STYLE};
  kt__swatch kinds[] = {KT__SWATCH_MARKER, KT__SWATCH_LINE, KT__SWATCH_STAR, KT__SWATCH_MARKER};
  kt__plot_legend(&p, legend, styles, kinds, failed ? 4 : 3);
  kt__plot_end(&p);
  for (int c = 0; c < nv; c++) free(labels[c]);
  free(labels), free(values), free(med);
}

/* ---- the search's progress ---- */

/* The improvements of the best time, in the x axis's order, as (x, best)
 * pairs ending at the last evaluation; x is the evaluation's number or its
 * time (WALL). At most MAX_STEPS: evenly spaced improvements are kept when
 * there are more, always with the last (the best). Returns how many. */
static const kt__report_key *by_wall_subject;
static int by_wall_time(const void *a, const void *b) {
  int i = *(const int *)a, j = *(const int *)b;
  double x = by_wall_subject->points[i].at_s, y = by_wall_subject->points[j].at_s;
  if (x != y && !isnan(x) && !isnan(y)) return (x > y) - (x < y);
  return (i > j) - (i < j);
}

/* The points' indices in the order of the x axis: evaluation order, or for
 * WALL the order of their times (a database's results are stored in
 * evaluation order, but a finalist carries its last round's timestamp). */
static int *x_order(const kt__report_key *k, bool wall) {
  int *order = kt__xcalloc((size_t)k->n + 1, sizeof *order);
  for (int i = 0; i < k->n; i++) order[i] = i;
  by_wall_subject = k; /* qsort has no user pointer; a report renders on one thread */
  if (wall) qsort(order, (size_t)k->n, sizeof *order, by_wall_time);
  return order;
}

static int best_steps(const kt__report_key *k, bool wall, double *xs, double *ys) {
  int n = 0;
  double best = INFINITY, last_x = 0;
  int *order = x_order(k, wall);
  for (int j = 0; j < k->n; j++) {
    int i = order[j];
    const kt__report_point *pt = &k->points[i];
    double x = wall ? pt->at_s : i + 1;
    if (isnan(x)) continue;
    last_x = fmax(last_x, x);
    if (pt->status != KT__ST_OK || !(pt->seconds < best)) continue;
    best = pt->seconds;
    xs[n] = x, ys[n++] = best;
  }
  free(order);
  if (n > MAX_STEPS) {
    int kept = 0;
    for (int j = 0; j < MAX_STEPS - 1; j++) {
      int at = (int)((long)j * (n - 1) / (MAX_STEPS - 1));
      xs[kept] = xs[at], ys[kept++] = ys[at];
    }
    xs[kept] = xs[n - 1], ys[kept++] = ys[n - 1];
    n = kept;
  }
  if (n) xs[n] = last_x, ys[n] = ys[n - 1], n++;
  return n;
}

static void progress_points(kt__plot *p, const kt__key_view *v, bool wall) {
  const kt__report_key *k = v->k;
  for (int j = 0; j < v->nsample; j++) {
    int i = v->sample[j];
    double x = wall ? k->points[i].at_s : i + 1;
    char tip[512];
    if (i != k->winner && !isnan(x))
      kt__plot_marker(p, 0, x, k->points[i].seconds, 2.2, "pt", point_tip(k, i, NULL, tip, sizeof tip));
  }
}

bool kt__plot_progress(kt__sbuf *b, const kt__key_view *v, bool wall) {
  const kt__report_key *k = v->k;
  double *xs = kt__xcalloc((size_t)k->n + 2, sizeof *xs), *ys = kt__xcalloc((size_t)k->n + 2, sizeof *ys);
  int n = best_steps(k, wall, xs, ys);
  if (n < 2 || (wall && !(xs[n - 1] > 0))) {
    free(xs), free(ys);
    return false;
  }
  kt__plot p;
  kt__axis x = {.lo = wall ? 0 : 1,
                .hi = xs[n - 1] * 1.02,
                .label = wall ? "wall time since the first result (s)" : "evaluations (configurations measured)"};
  if (x.hi <= x.lo) x.hi = x.lo + 1;
  kt__plot_begin(&p, b, wall ? "Best time so far against wall time" : "Best time so far against evaluations", WIDTH,
                 HEIGHT, x, time_axis(v->tmin, v->tmax, "time per launch (log scale)"), NULL, 0);
  progress_points(&p, v, wall);
  kt__plot_line(&p, 0, xs, ys, n, true, 2.5);
  char tip[512];
  double wx = k->winner >= 0 ? (wall ? k->points[k->winner].at_s : k->winner + 1) : NAN;
  if (!isnan(wx))
    kt__plot_star(&p, wx, k->points[k->winner].seconds, "pt winner",
                  point_tip(k, k->winner, "winner", tip, sizeof tip));
  const char *labels[] = {"best so far", "a configuration", "winner"};
  int styles[] = {0, 0, 0};
  kt__swatch kinds[] = {KT__SWATCH_LINE, KT__SWATCH_MARKER, KT__SWATCH_STAR};
  kt__plot_legend(&p, labels, styles, kinds, 3);
  kt__plot_end(&p);
  free(xs), free(ys);
  return true;
}

/* At most MAX_STEPS evenly spaced evaluations of a curve, always the last. */
static int thin_curve(const kt__report_curve *c, double *xs, double *ys) {
  long step = c->n > MAX_STEPS ? (c->n + MAX_STEPS - 1) / MAX_STEPS : 1;
  int n = 0;
  for (long i = 0; i < c->n; i += step) xs[n] = (double)(i + 1), ys[n++] = c->best[i];
  if (xs[n - 1] != (double)c->n) xs[n] = (double)c->n, ys[n++] = c->best[c->n - 1];
  return n;
}

void kt__plot_curves(kt__sbuf *b, const kt__key_view *v) {
  const kt__report_key *k = v->k;
  long len = 1;
  for (int c = 0; c < k->ncurves; c++) len = k->curves[c].n > len ? k->curves[c].n : len;
  kt__plot p;
  kt__axis x = {.lo = 1, .hi = (double)len, .log = len >= 20, .label = "evaluations (log scale)"};
  if (!x.log) x.label = "evaluations";
  if (x.hi <= x.lo) x.hi = 2;
  kt__axis y = {.lo = 0, .hi = 1.05, .unit = KT__UNIT_PERCENT, .label = "best found, fraction of the optimum's speed"};
  kt__plot_begin(&p, b, "Search progress of every strategy, mean over the repeats", WIDTH + 120, HEIGHT + 60, x, y,
                 NULL, 0);
  double *xs = kt__xcalloc(MAX_STEPS + 2, sizeof *xs), *ys = kt__xcalloc(MAX_STEPS + 2, sizeof *ys);
  const char **labels = kt__xcalloc((size_t)k->ncurves + 1, sizeof *labels);
  int *styles = kt__xcalloc((size_t)k->ncurves + 1, sizeof *styles);
  kt__swatch *kinds = kt__xcalloc((size_t)k->ncurves + 1, sizeof *kinds);
  for (int c = 0, other = 0; c < k->ncurves; c++) {
    styles[c] = k->curves[c].baseline ? KT__STYLE_BASELINE : other++ % KT__STYLE_BASELINE;
    labels[c] = k->curves[c].label;
    kinds[c] = KT__SWATCH_LINE;
    if (k->curves[c].n < 1) continue;
    int n = thin_curve(&k->curves[c], xs, ys);
    kt__plot_line(&p, styles[c], xs, ys, n, false, k->curves[c].baseline ? 3.5 : 2);
  }
  kt__plot_legend(&p, labels, styles, kinds, k->ncurves);
  kt__plot_end(&p);
  free(xs), free(ys), free(labels), free(styles), free(kinds);
}

/* ---- the winner against the default ---- */

bool kt__plot_winner_default(kt__sbuf *b, const kt__key_view *v) {
  const kt__report_key *k = v->k;
  if (k->winner < 0 || k->def < 0 || k->points[k->def].status != KT__ST_OK) return false;
  double w = k->points[k->winner].seconds, d = k->points[k->def].seconds;
  const char *names[] = {"default", "winner"};
  kt__plot p;
  kt__axis x = {.label = "configuration"};
  kt__axis y = {.lo = 0, .hi = fmax(w, d) * 1.2, .unit = KT__UNIT_SECONDS, .label = "time per launch"};
  kt__plot_begin(&p, b, "The winner against the default", 360, HEIGHT, x, y, names, 2);
  char t[32], label[64];
  kt__plot_bar(&p, 1, -0.3, 0, 0.3, d, "data-role='default'");
  kt__plot_bar(&p, 0, 0.7, 0, 1.3, w, "data-role='winner'");
  kt__format_seconds(d, t, sizeof t);
  kt__plot_text(&p, 0, d + y.hi * 0.03, "middle", t);
  kt__format_seconds(w, t, sizeof t);
  snprintf(label, sizeof label, "%s (%.2fx)", t, d / w);
  kt__plot_text(&p, 1, w + y.hi * 0.03, "middle", label);
  kt__plot_end(&p);
  return true;
}

/* ---- the timeline ---- */

/* Stacks SEGMENTS (seconds) into one bar at category X. */
static void stack(kt__plot *p, double x, const double *seg, const int *styles, const char *const *names, int n) {
  double at = 0;
  for (int i = 0; i < n; i++) {
    char attrs[96];
    snprintf(attrs, sizeof attrs, "data-part='%s' data-seconds='%.6g'", names[i], seg[i]);
    if (seg[i] > 0) kt__plot_bar(p, styles[i], x - 0.3, at, x + 0.3, at + seg[i], attrs);
    at += fmax(seg[i], 0);
  }
}

void kt__plot_timeline(kt__sbuf *b, const kt__key_view *v) {
  const kt__report_timeline *t = &v->k->timeline;
  char compile[64];
  snprintf(compile, sizeof compile, "compiling (%d threads)", t->compile_threads);
  const char *names[] = {"device", compile};
  kt__plot p;
  kt__axis x = {.label = "where the wall time went"};
  kt__axis y = {.lo = 0, .hi = fmax(t->wall_s, 1e-3) * 1.25, .unit = KT__UNIT_SECONDS, .label = "wall time"};
  kt__plot_begin(&p, b, "Timeline: device busy, compile busy and idle", WIDTH, HEIGHT, x, y, names, 2);
  double device[] = {t->load_s, t->verify_s, t->measure_s, fmax(t->wall_s - t->device_busy_s, 0)};
  int dstyles[] = {2, 3, 0, 4};
  const char *dnames[] = {"load", "verify", "measure", "idle"};
  stack(&p, 0, device, dstyles, dnames, 4);
  double per_thread = t->compile_threads > 0 ? t->compile_busy_s / t->compile_threads : t->compile_busy_s;
  double comp[] = {per_thread, fmax(t->wall_s - per_thread, 0)};
  int cstyles[] = {1, 4};
  const char *cnames[] = {"compile", "idle"};
  stack(&p, 1, comp, cstyles, cnames, 2);
  const char *labels[] = {"device: load", "device: verify", "device: measure", "compile busy (per thread)", "idle"};
  int styles[] = {2, 3, 0, 1, 4};
  kt__swatch kinds[] = {KT__SWATCH_BAR, KT__SWATCH_BAR, KT__SWATCH_BAR, KT__SWATCH_BAR, KT__SWATCH_BAR};
  kt__plot_legend(&p, labels, styles, kinds, 5);
  kt__plot_end(&p);
}

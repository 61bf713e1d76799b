/* The report page: inline CSS and SVG, no script, nothing fetched (system
 * fonts only), readable offline and printable. Written whole or not at all. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../config.h"
#include "plots.h"
#include "report.h"
#include "svg.h"

/* What keeps 100,000 results under 5 MB: the points all scatter plots of the
 * page may draw together, the most one plot draws, and the keys that get a
 * section of their own (the rest are in the grid of winners). */
enum { PAGE_POINTS = 16000, PLOT_POINTS_MAX = 3000, PLOT_POINTS_MIN = 60, MAX_SECTIONS = 60, TOP_ROWS = 10 };

static const char css[] =
    "body{font-family:sans-serif;color:#111;background:#fff;margin:24px;max-width:1240px}"
    "h1{font-size:1.6em;margin:0 0 4px}h2{font-size:1.3em;border-bottom:2px solid #333;margin-top:32px}"
    "h3{font-size:1.05em;margin:18px 0 6px}p.note,p.origin{color:#444;margin:4px 0}"
    ".plots{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-end}"
    "svg{font-size:11px;background:#fff}svg text{fill:#111}svg text.axis{font-size:12px}"
    "svg .pt{fill-opacity:0.55}"
    "table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #999;padding:3px 8px;text-align:left;"
    "font-size:0.92em}th{background:#eee}td.num{text-align:right;font-variant-numeric:tabular-nums}"
    "code{font-size:0.95em}td.why{white-space:pre-wrap;font-family:monospace;font-size:0.85em}"
    "@media print{body{margin:0;max-width:none}section.key{break-before:page}h2,h3{break-after:avoid}"
    "svg,table{break-inside:avoid}}";

static void esc(kt__sbuf *b, const char *s) { kt__xml_escape(b, s); }

static void config_text(const kt__report_key *k, int i, kt__sbuf *out) {
  kt__config_format((const char *const *)k->names, &k->values[(size_t)i * (size_t)k->nnames], k->nnames, "", out);
}

static double speedup(const kt__report_key *k) {
  if (k->winner < 0 || k->def < 0 || k->points[k->def].status != KT__ST_OK) return NAN;
  return k->points[k->def].seconds / k->points[k->winner].seconds;
}

/* ---- across keys: the winners per shape and device ---- */

/* Distinct strings of the keys of KERNEL, in order of appearance. */
static int distinct(const kt__report *r, const char *kernel, bool devices, const char **out) {
  int n = 0;
  for (int i = 0; i < r->nkeys; i++) {
    if (strcmp(r->keys[i].kernel, kernel) != 0) continue;
    const char *s = devices ? r->keys[i].device : r->keys[i].sizes;
    int j = 0;
    while (j < n && strcmp(out[j], s) != 0) j++;
    if (j == n) out[n++] = s;
  }
  return n;
}

static const kt__report_key *key_at(const kt__report *r, const char *kernel, const char *device, const char *sizes) {
  const kt__report_key *found = NULL; /* the last: after a source edit, the newest */
  for (int i = 0; i < r->nkeys; i++)
    if (!strcmp(r->keys[i].kernel, kernel) && !strcmp(r->keys[i].device, device) && !strcmp(r->keys[i].sizes, sizes))
      found = &r->keys[i];
  return found;
}

static void grid_cell(kt__sbuf *b, const kt__report_key *k) {
  if (!k || k->winner < 0) {
    kt__sbuf_printf(b, "<td>%s</td>", k ? "no valid configuration" : "");
    return;
  }
  kt__sbuf cfg = {0};
  char t[32];
  config_text(k, k->winner, &cfg);
  kt__format_seconds(k->points[k->winner].seconds, t, sizeof t);
  kt__sbuf_printf(b, "<td><code>");
  esc(b, cfg.s);
  kt__sbuf_printf(b, "</code><br>%s", t);
  double s = speedup(k);
  if (!isnan(s)) kt__sbuf_printf(b, ", <b>%.2fx</b> the default", s);
  kt__sbuf_printf(b, "</td>");
  kt__sbuf_free(&cfg);
}

static void grid_of_kernel(kt__sbuf *b, const kt__report *r, const char *kernel) {
  const char **devices = kt__xcalloc((size_t)r->nkeys, sizeof *devices);
  const char **sizes = kt__xcalloc((size_t)r->nkeys, sizeof *sizes);
  int nd = distinct(r, kernel, true, devices), ns = distinct(r, kernel, false, sizes);
  kt__sbuf_printf(b, "<h3>");
  esc(b, kernel);
  kt__sbuf_printf(b, "</h3>\n<table class='grid'><tr><th>sizes \\ device</th>");
  for (int d = 0; d < nd; d++) {
    kt__sbuf_printf(b, "<th>");
    esc(b, devices[d]);
    kt__sbuf_printf(b, "</th>");
  }
  kt__sbuf_printf(b, "</tr>\n");
  for (int s = 0; s < ns; s++) {
    kt__sbuf_printf(b, "<tr><th>");
    esc(b, *sizes[s] ? sizes[s] : "(no sizes)");
    kt__sbuf_printf(b, "</th>");
    for (int d = 0; d < nd; d++) grid_cell(b, key_at(r, kernel, devices[d], sizes[s]));
    kt__sbuf_printf(b, "</tr>\n");
  }
  kt__sbuf_printf(b, "</table>\n");
  free(devices), free(sizes);
}

static void grid(kt__sbuf *b, const kt__report *r) {
  kt__sbuf_printf(b, "<h2 id='winners'>Winners across shapes and devices</h2>\n"
                     "<p class='note'>Each cell: the winning configuration, its time per launch and its speed-up over "
                     "the default configuration.</p>\n");
  const char **kernels = kt__xcalloc((size_t)r->nkeys, sizeof *kernels);
  int nk = 0;
  for (int i = 0; i < r->nkeys; i++) {
    int j = 0;
    while (j < nk && strcmp(kernels[j], r->keys[i].kernel) != 0) j++;
    if (j == nk) kernels[nk++] = r->keys[i].kernel;
  }
  for (int i = 0; i < nk; i++) grid_of_kernel(b, r, kernels[i]);
  free(kernels);
}

/* ---- one key ---- */

static void counts_line(kt__sbuf *b, const kt__key_view *v) {
  kt__sbuf_printf(b, "<p class='note counts' data-total='%d'>%d configurations:", v->k->n, v->k->n);
  for (int s = 0, first = 1; s < KT__ST_COUNT; s++)
    if (v->counts[s]) {
      kt__sbuf_printf(b, "%s %d %s", first ? "" : ",", v->counts[s], kt__status_name((kt__status)s));
      first = 0;
    }
  kt__sbuf_printf(b, ".");
  if (v->nsample < v->nok)
    kt__sbuf_printf(b,
                    " Scatter plots draw %d of the %d valid ones (the fastest, the winner and the default, and the "
                    "rest at evenly spaced ranks); counts, bins and medians use all of them.",
                    v->nsample, v->nok);
  kt__sbuf_printf(b, "</p>\n");
}

static void top_table(kt__sbuf *b, const kt__key_view *v) {
  const kt__report_key *k = v->k;
  int n = v->nok < TOP_ROWS ? v->nok : TOP_ROWS;
  kt__sbuf_printf(b, "<h3>The fastest configurations</h3>\n<table class='top'><tr><th>#</th><th>configuration</th>"
                     "<th>time per launch</th><th>speed against the winner</th><th>measured by</th>"
                     "<th>energy per launch</th></tr>\n");
  for (int j = 0; j < n; j++) {
    int i = v->sample[j]; /* the sample starts with the fastest, in order */
    kt__sbuf cfg = {0};
    char t[32];
    config_text(k, i, &cfg);
    kt__format_seconds(k->points[i].seconds, t, sizeof t);
    kt__sbuf_printf(b, "<tr><td class='num'>%d</td><td><code>", j + 1);
    esc(b, cfg.s);
    const kt__report_point *p = &k->points[i];
    char energy[32] = "-";
    if (p->joules >= 0) snprintf(energy, sizeof energy, "%.3g mJ", p->joules * 1e3);
    kt__sbuf_printf(b,
                    "</code>%s%s</td><td class='num'>%s</td><td class='num'>%.3f</td><td>%s%s</td>"
                    "<td class='num'>%s</td></tr>\n",
                    i == k->winner ? " (winner)" : "", i == k->def ? " (default)" : "", t,
                    k->winner >= 0 ? k->points[k->winner].seconds / p->seconds : 1.0, p->method ? p->method : "-",
                    p->valid ? "" : " (not valid: disturbed)", energy);
    kt__sbuf_free(&cfg);
  }
  kt__sbuf_printf(b, "</table>\n");
}

/* Why each configuration failed: the status alone does not say which
 * signal, element or constraint (the first KT__WHY_ROWS rows). */
enum { KT__WHY_ROWS = 50, KT__WHY_CHARS = 400 };
static void failures_section(kt__sbuf *b, const kt__report_key *k) {
  int failed = 0;
  for (int i = 0; i < k->n; i++) {
    const kt__report_point *p = &k->points[i];
    if (p->status == KT__ST_OK || p->status == KT__ST_PENDING) continue;
    if (failed++ == 0)
      kt__sbuf_printf(b, "<h3>Why configurations failed</h3>\n<table class='failures'><tr><th>configuration</th>"
                         "<th>status</th><th>why</th></tr>\n");
    if (failed > KT__WHY_ROWS) continue;
    kt__sbuf cfg = {0};
    config_text(k, i, &cfg);
    kt__sbuf_printf(b, "<tr><td><code>");
    esc(b, cfg.s);
    kt__sbuf_printf(b, "</code></td><td>%s</td><td class='why'>", kt__status_name(p->status));
    if (p->why) {
      char cut[KT__WHY_CHARS + 1];
      snprintf(cut, sizeof cut, "%s", p->why);
      esc(b, cut);
      if (strlen(p->why) > KT__WHY_CHARS) kt__sbuf_printf(b, "...");
    } else {
      kt__sbuf_printf(b, "(no reason recorded)");
    }
    kt__sbuf_printf(b, "</td></tr>\n");
    kt__sbuf_free(&cfg);
  }
  if (failed > KT__WHY_ROWS)
    kt__sbuf_printf(b, "<tr><td colspan='3'>... and %d more</td></tr>\n", failed - KT__WHY_ROWS);
  if (failed) kt__sbuf_printf(b, "</table>\n");
}

static void winner_section(kt__sbuf *b, const kt__key_view *v) {
  const kt__report_key *k = v->k;
  kt__sbuf_printf(b, "<h3>The winner against the default</h3>\n");
  kt__sbuf cfg = {0};
  if (k->winner >= 0) config_text(k, k->winner, &cfg);
  kt__sbuf_printf(b, "<p class='note'>Winner: <code>");
  esc(b, k->winner >= 0 ? cfg.s : "none (no configuration was valid)");
  kt__sbuf_printf(b, "</code>");
  kt__sbuf_free(&cfg);
  if (k->def >= 0) {
    config_text(k, k->def, &cfg);
    kt__sbuf_printf(b, "; default: <code>");
    esc(b, cfg.s);
    kt__sbuf_printf(b, "</code> (%s)", kt__status_name(k->points[k->def].status));
    kt__sbuf_free(&cfg);
  }
  double s = speedup(k);
  if (!isnan(s)) kt__sbuf_printf(b, "; the winner is <b class='speedup'>%.2fx</b> the speed of the default", s);
  kt__sbuf_printf(b, ".</p>\n");
  if (!kt__plot_winner_default(b, v) && k->ncurves)
    kt__sbuf_printf(b, "<p class='note'>A recorded space has no default configuration to compare with.</p>\n");
}

static void progress_section(kt__sbuf *b, const kt__key_view *v) {
  kt__sbuf_printf(b, "<h3>Search progress</h3>\n<div class='plots'>");
  if (v->k->ncurves) {
    kt__plot_curves(b, v); /* a recorded space's points are in no search's order */
  } else {
    kt__plot_progress(b, v, false);
    if (!kt__plot_progress(b, v, true))
      kt__sbuf_printf(b, "<p class='note'>No times of measurement: no progress against wall time.</p>");
  }
  kt__sbuf_printf(b, "</div>\n");
}

static void timeline_section(kt__sbuf *b, const kt__key_view *v) {
  const kt__report_timeline *t = &v->k->timeline;
  kt__sbuf_printf(b, "<h3>Timeline</h3>\n");
  if (!t->known && v->k->ncurves) {
    kt__sbuf_printf(b, "<p class='note'>A replay runs nothing: it has no timeline.</p>\n");
    return;
  }
  if (!t->known) {
    kt__sbuf_printf(b, "<p class='note'>The results database keeps no timeline; <code>ktune tune ... --report "
                       "FILE</code> draws it.</p>\n");
    return;
  }
  kt__sbuf_printf(
      b,
      "<p class='note'>Wall %.3g s; device busy %.3g s (load %.3g, verify %.3g, measure %.3g), idle %.3g s; "
      "compile busy %.3g s over %d threads.</p>\n",
      t->wall_s, t->device_busy_s, t->load_s, t->verify_s, t->measure_s, fmax(t->wall_s - t->device_busy_s, 0),
      t->compile_busy_s, t->compile_threads);
  kt__plot_timeline(b, v);
}

/* Whether tuned name I takes more than one value among K's points. */
static bool varies(const kt__report_key *k, int name) {
  for (int i = 1; i < k->n; i++)
    if (k->values[(size_t)i * (size_t)k->nnames + (size_t)name] != k->values[(size_t)name]) return true;
  return false;
}

/* One plot per name that varies; the constant ones (pinned, or one choice)
 * in a line. */
static void effect_section(kt__sbuf *b, const kt__key_view *v) {
  const kt__report_key *k = v->k;
  kt__sbuf_printf(b, "<h3>Effect of each tuned name</h3>\n<div class='plots'>");
  kt__sbuf constant = {0};
  for (int i = 0; i < k->nnames; i++) {
    if (varies(k, i)) {
      kt__plot_effect(b, v, i);
      continue;
    }
    kt__sbuf_printf(&constant, "%s%s=%lld", constant.s ? ", " : "", k->names[i], (long long)k->values[i]);
  }
  kt__sbuf_printf(b, "</div>\n");
  if (constant.s) {
    kt__sbuf_printf(b, "<p class='note'>The same in every configuration: ");
    esc(b, constant.s);
    kt__sbuf_printf(b, ".</p>\n");
  }
  kt__sbuf_free(&constant);
}

static void key_heading(kt__sbuf *b, const kt__report_key *k, int index) {
  kt__sbuf_printf(b, "<section class='key' id='key-%d'>\n<h2>", index);
  esc(b, k->kernel);
  kt__sbuf_printf(b, " on ");
  esc(b, k->device);
  kt__sbuf_printf(b, " (");
  esc(b, k->backend);
  kt__sbuf_printf(b, "), ");
  esc(b, *k->sizes ? k->sizes : "no sizes");
  kt__sbuf_printf(b, "</h2>\n");
  if (k->note) {
    kt__sbuf_printf(b, "<p class='note'>");
    esc(b, k->note);
    kt__sbuf_printf(b, "</p>\n");
  }
}

static void key_section(kt__sbuf *b, const kt__report_key *k, int index, int max_points) {
  kt__key_view v;
  kt__key_view_init(&v, k, max_points);
  key_heading(b, k, index);
  kt__sbuf_printf(b, "<h3>Times of all configurations</h3>\n");
  counts_line(b, &v);
  kt__sbuf_printf(b, "<div class='plots'>");
  if (v.nok) kt__plot_distribution(b, &v);
  kt__plot_statuses(b, &v);
  if (v.nok) kt__plot_energy(b, &v);
  kt__sbuf_printf(b, "</div>\n");
  if (v.nok && k->nnames) effect_section(b, &v);
  if (v.nok) progress_section(b, &v);
  winner_section(b, &v);
  if (v.nok) top_table(b, &v);
  failures_section(b, k);
  timeline_section(b, &v);
  kt__sbuf_printf(b, "</section>\n");
  kt__key_view_free(&v);
}

/* The points one scatter plot may draw: the page's share of each plot. */
static int plot_points(const kt__report *r, int sections) {
  long plots = 0;
  for (int i = 0; i < sections; i++) plots += r->keys[i].nnames + 2;
  long share = plots ? PAGE_POINTS / plots : PLOT_POINTS_MAX;
  return share > PLOT_POINTS_MAX ? PLOT_POINTS_MAX : share < PLOT_POINTS_MIN ? PLOT_POINTS_MIN : (int)share;
}

void kt__report_html(const kt__report *r, kt__sbuf *b) {
  kt__sbuf_printf(b,
                  "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n<title>ktune report</title>\n"
                  "<style>%s</style>\n</head>\n<body>\n<h1>ktune report</h1>\n<p class='origin'>",
                  css);
  esc(b, r->origin);
  kt__sbuf_printf(b, "</p>\n");
  grid(b, r);
  int sections = r->nkeys < MAX_SECTIONS ? r->nkeys : MAX_SECTIONS;
  if (sections < r->nkeys)
    kt__sbuf_printf(b,
                    "<p class='note'>%d keys: the first %d have a section below; choose others with --kernel and "
                    "--key.</p>\n",
                    r->nkeys, sections);
  int max_points = plot_points(r, sections);
  for (int i = 0; i < sections; i++) key_section(b, &r->keys[i], i, max_points);
  kt__sbuf_printf(b, "</body>\n</html>\n");
}

/* ---- writing ---- */

static int write_all(int fd, const char *s, size_t n) {
  while (n) {
    ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    s += w, n -= (size_t)w;
  }
  return 0;
}

int kt__report_write(const kt__report *r, const char *path, kt__errbuf *eb) {
  KT__RETURN_IF(!path || !*path, eb, KT_INVALID, "no report file given (-o FILE or --report FILE)");
  struct stat st;
  KT__RETURN_IF(stat(path, &st) == 0 && S_ISDIR(st.st_mode), eb, KT_INVALID,
                "%s: is a directory; give the report a file name, e.g. %s/report.html", path, path);
  kt__sbuf tmp = {0}, page = {0};
  kt__sbuf_printf(&tmp, "%s.tmp-XXXXXX", path);
  int fd = mkstemp(tmp.s);
  if (fd < 0) {
    int rc = kt__err(eb, KT_INVALID, "%s: cannot write the report there (%s); choose a writable path", path,
                     strerror(errno));
    kt__sbuf_free(&tmp);
    return rc;
  }
  kt__report_html(r, &page);
  mode_t mask = umask(0); /* mkstemp makes 0600; the report is as readable as any new file */
  umask(mask);
  int err = write_all(fd, page.s, page.len) != 0 || fchmod(fd, 0666 & ~mask) != 0 ? errno : 0;
  if (close(fd) != 0 && !err) err = errno;
  if (!err && rename(tmp.s, path) != 0) err = errno;
  int rc = KT_OK;
  if (err) {
    unlink(tmp.s);
    /* An output path that cannot take the report is the caller's to change (exit 2), as an unwritable one. */
    rc = kt__err(eb, KT_INVALID, "%s: the report could not be written (%s); nothing was left there", path,
                 strerror(err));
  }
  kt__sbuf_free(&tmp);
  kt__sbuf_free(&page);
  return rc;
}

/* The report (src/report/): which points a plot draws, what the page says,
 * writing whole or not at all, the replay's progress curve, and where a
 * legend goes. */
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/plots.h"
#include "report/report.h"
#include "report/sample.h"
#include "report/svg.h"
#include "search/replay.h"
#include "search/strategy.h"

static const char *const names[] = {"A", "B"};

/* N points: every 7th a compile failure, the rest ok with scrambled times;
 * the default is the first point, the winner the fastest. */
static kt__report_key *generated(kt__report *r, int n) {
  kt__report_key *k = kt__report_add_key(r, "gen", "cpu", "Test CPU", "N=1", names, 2);
  for (int i = 0; i < n; i++) {
    int64_t v[2] = {i % 10, i / 10};
    double s = 1e-4 * (1 + (double)((unsigned)i * 2654435761u % 100000) / 1000);
    kt__report_add_point(k, v, i % 7 == 3 ? KT__ST_COMPILE : KT__ST_OK, s, i * 0.01);
  }
  k->def = 0;
  k->winner = kt__report_fastest(k);
  return k;
}

static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

TEST(sample_keeps_fastest_winner_and_default) {
  kt__report r = {0};
  kt__report_key *k = generated(&r, 10000);
  int *out = calloc((size_t)k->n, sizeof *out), total;
  int n = kt__report_sample(k, 200, out, &total);
  ASSERT_TRUE(n <= 200 && n > 150);
  ASSERT_EQ(total, 10000 - 10000 / 7 - (10000 % 7 > 3));
  ASSERT_EQ(out[0], k->winner);
  bool def = false;
  for (int i = 0; i < n; i++) def |= out[i] == k->def;
  ASSERT_TRUE(def);
  /* The first quarter are the 50 fastest, in order. */
  for (int i = 1; i < 50; i++) ASSERT_TRUE(k->points[out[i - 1]].seconds <= k->points[out[i]].seconds);
  /* The slowest is drawn too: the range stays. */
  double slowest = 0, drawn = 0;
  for (int i = 0; i < k->n; i++)
    if (k->points[i].status == KT__ST_OK) slowest = fmax(slowest, k->points[i].seconds);
  for (int i = 0; i < n; i++) drawn = fmax(drawn, k->points[out[i]].seconds);
  ASSERT_EQ(drawn, slowest);
  free(out);
  kt__report_free(&r);
}

TEST(page_counts_every_point_however_many_are_drawn) {
  kt__report r = {0};
  kt__report_key *k = generated(&r, 5000);
  r.origin = strdup("a test");
  kt__sbuf b = {0};
  kt__report_html(&r, &b);
  int compile = 5000 / 7 + (5000 % 7 > 3);
  char want[128];
  snprintf(want, sizeof want, "data-status='compile' data-count='%d'", compile);
  ASSERT_CONTAINS(b.s, want);
  snprintf(want, sizeof want, "data-status='ok' data-count='%d'", 5000 - compile);
  ASSERT_CONTAINS(b.s, want);
  ASSERT_CONTAINS(b.s, "data-total='5000'");
  ASSERT_CONTAINS(b.s, "Scatter plots draw");
  ASSERT_TRUE(!strstr(b.s, "<script"));
  /* One star per plot that draws the winner: the distribution, two names, two progress plots. */
  ASSERT_EQ(count_of(b.s, "class='pt winner'"), 5);
  ASSERT_EQ(count_of(b.s, "<svg"), count_of(b.s, "</svg>"));
  (void)k;
  kt__sbuf_free(&b);
  kt__report_free(&r);
}

/* The number in attribute NAME of the first element after ANCHOR in S (NAN: none). */
static double attr_after(const char *s, const char *anchor, const char *name) {
  const char *at = strstr(s, anchor);
  char key[64];
  snprintf(key, sizeof key, " %s='", name);
  at = at ? strstr(at, key) : NULL;
  return at ? strtod(at + strlen(key), NULL) : NAN;
}

/* A legend covers no data wherever the data is: it is measured and laid out
 * (rows when it is wide) in a band above the plotting area, and the picture
 * grows by the band. Before, it was drawn inside the frame's top right corner,
 * over a point there. */
TEST(legend_is_laid_out_above_the_plotting_area) {
  kt__sbuf b = {0};
  kt__plot p;
  kt__axis x = {.lo = 0, .hi = 1, .label = "x"}, y = {.lo = 0, .hi = 1, .label = "y"};
  kt__plot_begin(&p, &b, "a plot", 360, 300, x, y, NULL, 0);
  kt__plot_marker(&p, 0, 1, 1, 3, "pt", "the top right corner");
  const char *labels[] = {"the first long label", "the second long label", "a third", "and a fourth one"};
  int styles[] = {0, 1, 2, 3};
  kt__swatch kinds[] = {KT__SWATCH_MARKER, KT__SWATCH_LINE, KT__SWATCH_BAR, KT__SWATCH_STAR};
  kt__plot_legend(&p, labels, styles, kinds, 4);
  kt__plot_end(&p);
  double top = attr_after(b.s, "<g class='legend'", "y"), height = attr_after(b.s, "<g class='legend'", "height");
  double left = attr_after(b.s, "<g class='legend'", "x"), width = attr_after(b.s, "<g class='legend'", "width");
  double shift = NAN, frame = attr_after(b.s, "class='frame'", "y");
  const char *t = strstr(b.s, "translate(0 ");
  if (t) shift = strtod(t + strlen("translate(0 "), NULL);
  ASSERT_TRUE(t != NULL);
  ASSERT_TRUE(height >= 2 * 16); /* four entries do not fit one row of a 360 px picture */
  ASSERT_TRUE(top + height < shift + frame);
  ASSERT_TRUE(left + width <= attr_after(b.s, "<svg", "width"));
  ASSERT_EQ(attr_after(b.s, "<svg", "height"), ceil(300 + shift));
  /* The title stays the picture's first child: its accessible name. */
  ASSERT_TRUE(strstr(b.s, "role='img'><title>a plot</title>") != NULL);
  kt__sbuf_free(&b);
}

TEST(write_is_whole_or_nothing) {
  kt__report r = {0};
  generated(&r, 50);
  r.origin = strdup("a test");
  char dir[] = "/tmp/kt_test_report_XXXXXX";
  ASSERT_TRUE(mkdtemp(dir) != NULL);
  char path[256], missing[256];
  snprintf(path, sizeof path, "%s/r.html", dir);
  snprintf(missing, sizeof missing, "%s/no/r.html", dir);
  kt__errbuf eb;
  ASSERT_EQ(kt__report_write(&r, path, &eb), KT_OK);
  struct stat st;
  ASSERT_EQ(stat(path, &st), 0);
  ASSERT_TRUE(st.st_size > 1000);
  ASSERT_EQ(kt__report_write(&r, missing, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "cannot write the report there");
  ASSERT_EQ(kt__report_write(&r, dir, &eb), KT_INVALID);
  ASSERT_CONTAINS(eb.msg, "is a directory");
  ASSERT_EQ(unlink(path), 0);
  ASSERT_EQ(rmdir(dir), 0); /* nothing else was left there */
  kt__report_free(&r);
}

TEST(replay_curve_rises_to_the_replays_score) {
  kt__errbuf eb;
  kt__recorded *rec;
  ASSERT_EQ(kt__recorded_load(KTUNE_SOURCE_DIR "/tests/data/t4/convolution_A4000.json.gz", &rec, &eb), KT_OK);
  enum { LEN = 40 };
  double curve[LEN];
  kt__replay_stats st;
  ASSERT_EQ(kt__replay_run_curve(rec, kt__strategy_find("random"), 30, 4, 7, NULL, 0, &st, curve, LEN, &eb), KT_OK);
  for (int i = 1; i < LEN; i++) ASSERT_GE(curve[i], curve[i - 1]);
  ASSERT_NEAR(curve[29], st.mean, 1e-9);
  ASSERT_NEAR(curve[LEN - 1], st.mean, 1e-9); /* after the budget, the last score stays */
  ASSERT_TRUE(curve[0] > 0 && curve[0] <= 1);
  kt__replay_stats plain;
  ASSERT_EQ(kt__replay_run(rec, kt__strategy_find("random"), 30, 4, 7, NULL, 0, &plain, &eb), KT_OK);
  ASSERT_EQ(plain.mean, st.mean); /* the curve changes nothing of the replay */
  kt__recorded_free(rec);
}

/* A failed configuration's reason (its signal, first differing element,
 * constraint) is on the page, in its key's failures table. */
TEST(page_says_why_each_configuration_failed) {
  kt__report r = {0};
  kt__report_key *k = kt__report_add_key(&r, "gen", "cpu", "Test CPU", "N=1", names, 2);
  int64_t ok[2] = {1, 1}, crash[2] = {2, 1}, wrong[2] = {3, 1};
  kt__report_add_point(k, ok, KT__ST_OK, 1e-3, 0);
  kt__report_set_why(k, kt__report_add_point(k, crash, KT__ST_RUNTIME, NAN, 1), "worker crashed: SIGSEGV");
  kt__report_set_why(k, kt__report_add_point(k, wrong, KT__ST_CORRECTNESS, NAN, 2), "y[7]: got 2 & 3, want <1>");
  k->def = 0;
  k->winner = 0;
  r.origin = strdup("a test");
  kt__sbuf b = {0};
  kt__report_html(&r, &b);
  ASSERT_CONTAINS(b.s, "Why configurations failed");
  ASSERT_CONTAINS(b.s, "<code>A=2 B=1</code></td><td>runtime</td><td class='why'>worker crashed: SIGSEGV</td>");
  ASSERT_CONTAINS(b.s, "<td>correctness</td><td class='why'>y[7]: got 2 &amp; 3, want &lt;1&gt;</td>");
  kt__sbuf_free(&b);
  kt__report_free(&r);
}

/* The best time against wall time never goes back: results stored in
 * evaluation order whose timestamps are not (a finalist stored at its last
 * round) are drawn in the order of their times. */
TEST(best_against_wall_time_runs_forward_in_time) {
  kt__report r = {0};
  kt__report_key *k = kt__report_add_key(&r, "gen", "cpu", "Test CPU", "N=1", names, 2);
  const double secs[4] = {4e-3, 2e-3, 3e-3, 1e-3}, at[4] = {0, 9, 2, 5}; /* the second stored last */
  for (int i = 0; i < 4; i++) {
    int64_t v[2] = {i, 0};
    kt__report_add_point(k, v, KT__ST_OK, secs[i], at[i]);
  }
  k->def = 0;
  k->winner = 3;
  kt__key_view v;
  kt__key_view_init(&v, k, 100);
  kt__sbuf b = {0};
  ASSERT_TRUE(kt__plot_progress(&b, &v, true));
  const char *d = strstr(b.s, "class='series'");
  ASSERT_TRUE(d != NULL);
  d = strstr(d, " d='M");
  ASSERT_TRUE(d != NULL);
  double x = strtod(d + 5, NULL), last = x;
  for (const char *h = strchr(d + 5, 'H'); h && h < strchr(d + 5, '\''); h = strchr(h + 1, 'H')) {
    x = strtod(h + 1, NULL);
    ASSERT_TRUE(x >= last);
    last = x;
  }
  kt__key_view_free(&v);
  kt__sbuf_free(&b);
  kt__report_free(&r);
}

/* Every point a plot draws has a hover label (an SVG <title>) naming its
 * configuration and time; the medians name their value. */
TEST(every_point_has_a_hover_label) {
  kt__report r = {0};
  generated(&r, 40);
  r.origin = strdup("a test");
  kt__sbuf b = {0};
  kt__report_html(&r, &b);
  ASSERT_TRUE(count_of(b.s, "<g class='pt'") > 0);
  /* Each point's <g> holds its title. */
  for (const char *g = strstr(b.s, "<g class='pt'"); g; g = strstr(g + 1, "<g class='pt'")) {
    const char *end = strstr(g, "</g>"), *title = strstr(g, "<title>A=");
    ASSERT_TRUE(title != NULL && title < end);
  }
  ASSERT_CONTAINS(b.s, "<title>median at A=");
  kt__sbuf_free(&b);
  kt__report_free(&r);
}

/* A value whose every configuration failed stays on the effect plot (a
 * cross naming it), and the median line stops there instead of running
 * across it: A=1 and A=3 have times, A=2 only failures. */
TEST(effect_plot_shows_values_that_only_failed) {
  kt__report r = {0};
  kt__report_key *k = kt__report_add_key(&r, "gen", "cpu", "Test CPU", "N=1", names, 2);
  for (int i = 0; i < 6; i++) {
    int64_t v[2] = {1 + i % 3, i / 3};
    kt__report_add_point(k, v, v[0] == 2 ? KT__ST_CONSTRAINT : KT__ST_OK, 1e-3 * (1 + i), i);
  }
  k->def = 0;
  k->winner = 0;
  kt__key_view v;
  kt__key_view_init(&v, k, 100);
  kt__sbuf b = {0};
  kt__plot_effect(&b, &v, 0);
  ASSERT_CONTAINS(b.s, "<title>A=2: every configuration failed (2)</title>");
  ASSERT_CONTAINS(b.s, "every one failed");
  /* Two median lines of one point each (A=1, A=3): none joins them. */
  ASSERT_EQ(count_of(b.s, "<path class='series'"), 2);
  ASSERT_EQ(count_of(b.s, "class='median'"), 2);
  kt__key_view_free(&v);
  kt__sbuf_free(&b);
  kt__report_free(&r);
}

/* Points with energy: the Pareto front is the ones no other is both faster
 * and cheaper than, fastest first; the page draws time against energy with
 * it, and the table says how each was measured and what it cost. */
TEST(energy_plot_has_the_pareto_front_and_the_table_the_method) {
  kt__report r = {0};
  kt__report_key *k = kt__report_add_key(&r, "e", "cuda", "Test GPU", "N=1", names, 2);
  static const struct { double s, j; } pts[] = {{1e-3, 5e-3}, {2e-3, 3e-3}, {1.5e-3, 6e-3}, {3e-3, 1e-3}, {4e-3, 2e-3}};
  for (int i = 0; i < 5; i++) {
    int64_t v[2] = {i, 0};
    int at = kt__report_add_point(k, v, KT__ST_OK, pts[i].s, i);
    kt__report_set_measurement(k, at, i == 0 ? "graph" : "events", pts[i].j, i != 4);
  }
  k->def = 1;
  k->winner = 0;
  int front[5];
  ASSERT_EQ(kt__report_pareto(k, front), 3);
  ASSERT_EQ(front[0], 0); /* the fastest */
  ASSERT_EQ(front[1], 1); /* slower, cheaper */
  ASSERT_EQ(front[2], 3); /* the cheapest; 2 and 4 are dominated */
  kt__sbuf b = {0};
  kt__report_html(&r, &b);
  ASSERT_CONTAINS(b.s, "Time against energy per launch, with the Pareto front");
  ASSERT_EQ(count_of(b.s, "class='pt front'"), 3);
  ASSERT_CONTAINS(b.s, "<th>measured by</th>");
  ASSERT_CONTAINS(b.s, "<td>graph</td><td class='num'>5 mJ</td>");
  ASSERT_CONTAINS(b.s, "events (not valid: disturbed)");
  kt__sbuf_free(&b);
  kt__report_free(&r);
}

/* Without energy there is no such plot, and the table says "-". */
TEST(no_energy_no_energy_plot) {
  kt__report r = {0};
  generated(&r, 20);
  kt__sbuf b = {0};
  kt__report_html(&r, &b);
  ASSERT_TRUE(strstr(b.s, "Time against energy") == NULL);
  kt__sbuf_free(&b);
  kt__report_free(&r);
}

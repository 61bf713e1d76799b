/* Plots as inline SVG (svg.h). Coordinates are written with one decimal:
 * enough for a screen or a printer, and it keeps large plots small. */
#include "svg.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Colours of distinct lightness (they stay apart in grey-scale), each with
 * its own marker, dash pattern and bar fill pattern. */
static const struct {
  const char *colour, *dash;
} styles[KT__STYLES] = {
    {"#1f4e9c", ""},    {"#d95f02", "7 3"},  {"#1b9e77", "2 2"}, {"#7a3e9d", "9 3 2 3"},
    {"#8c6d1f", "1 3"}, {"#c2185b", "12 4"}, {"#000", ""},
};

static const char *colour(int style) { return styles[style % KT__STYLES].colour; }

void kt__xml_escape(kt__sbuf *b, const char *s) {
  for (const char *p = s ? s : ""; *p; p++) {
    switch (*p) {
    case '<': kt__sbuf_printf(b, "&lt;"); break;
    case '>': kt__sbuf_printf(b, "&gt;"); break;
    case '&': kt__sbuf_printf(b, "&amp;"); break;
    case '"': kt__sbuf_printf(b, "&quot;"); break;
    case '\'': kt__sbuf_printf(b, "&#39;"); break;
    default:
      /* Control characters are not allowed in XML 1.0. */
      if ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t') kt__sbuf_printf(b, "?");
      else kt__sbuf_append(b, p, 1);
    }
  }
}

void kt__format_seconds(double s, char *buf, size_t len) {
  if (!(s > 0) || !isfinite(s)) snprintf(buf, len, "-");
  else if (s < 1e-6) snprintf(buf, len, "%.3g ns", s * 1e9);
  else if (s < 1e-3) snprintf(buf, len, "%.3g us", s * 1e6);
  else if (s < 1) snprintf(buf, len, "%.3g ms", s * 1e3);
  else snprintf(buf, len, "%.3g s", s);
}

static void tick_label(const kt__axis *a, double v, char *buf, size_t len) {
  if (a->unit == KT__UNIT_SECONDS) kt__format_seconds(v, buf, len);
  else if (a->unit == KT__UNIT_PERCENT) snprintf(buf, len, "%.0f%%", v * 100);
  else snprintf(buf, len, "%.4g", v);
  if (a->unit == KT__UNIT_SECONDS && v == 0) snprintf(buf, len, "0");
}

/* Position of V along A as a fraction of its length (0 at lo). */
static double frac(const kt__axis *a, double v) {
  double lo = a->log ? log10(a->lo) : a->lo, hi = a->log ? log10(a->hi) : a->hi;
  double x = a->log ? log10(v > 0 ? v : a->lo) : v;
  double f = hi > lo ? (x - lo) / (hi - lo) : 0.5;
  return f < 0 ? 0 : f > 1 ? 1 : f;
}

double kt__plot_px(const kt__plot *p, double x) { return p->x0 + frac(&p->x, x) * (p->x1 - p->x0); }
double kt__plot_py(const kt__plot *p, double y) { return p->y1 - frac(&p->y, y) * (p->y1 - p->y0); }

/* Tick values of A into T (at most MAX): decades (with 2 and 5 when the
 * range is short) on a log axis, steps of 1, 2 or 5 times a power of ten on
 * a linear one. */
static int ticks(const kt__axis *a, double *t, int max) {
  int n = 0;
  if (a->log) {
    int d0 = (int)floor(log10(a->lo)), d1 = (int)ceil(log10(a->hi));
    static const double steps[] = {1, 2, 5};
    int nsteps = log10(a->hi) - log10(a->lo) < 2.5 ? 3 : 1;
    for (int d = d0; d <= d1; d++)
      for (int s = 0; s < nsteps; s++) {
        double v = steps[s] * pow(10, d);
        if (v >= a->lo * 0.999 && v <= a->hi * 1.001 && n < max) t[n++] = v;
      }
    return n;
  }
  double span = a->hi - a->lo, raw = span / 5, mag = pow(10, floor(log10(raw > 0 ? raw : 1)));
  double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
  for (double v = ceil(a->lo / step) * step; v <= a->hi + step * 1e-9 && n < max; v += step)
    t[n++] = fabs(v) < step * 1e-9 ? 0 : v;
  return n;
}

/* Fill patterns for bars, one per style: solid, hatched, dotted, crossed,
 * striped, barred, back-hatched. */
static void patterns(kt__plot *p) {
  static const char *const shapes[KT__STYLES] = {
      "",
      "<path d='M0 6L6 0M-1 1L1 -1M5 7L7 5' stroke='%s' stroke-width='1.6'/>",
      "<circle cx='3' cy='3' r='1.4' fill='%s'/>",
      "<path d='M0 0L6 6M6 0L0 6' stroke='%s' stroke-width='1.2'/>",
      "<path d='M0 3H6' stroke='%s' stroke-width='1.6'/>",
      "<path d='M3 0V6' stroke='%s' stroke-width='1.6'/>",
      "<path d='M0 0L6 6M-1 5L1 7M5 -1L7 1' stroke='%s' stroke-width='1.6'/>",
  };
  kt__sbuf_printf(&p->head, "<defs>");
  for (int s = 1; s < KT__STYLES; s++) {
    kt__sbuf_printf(&p->head,
                    "<pattern id='k%ds%d' width='6' height='6' patternUnits='userSpaceOnUse'>"
                    "<rect width='6' height='6' fill='#fff'/>",
                    p->id, s);
    kt__sbuf_printf(&p->head, shapes[s], colour(s));
    kt__sbuf_printf(&p->head, "</pattern>");
  }
  kt__sbuf_printf(&p->head, "</defs>\n");
}

static void axis_x(kt__plot *p) {
  char label[64];
  double t[64];
  int n = 0;
  if (p->categories) {
    int every = p->ncategories > 16 ? (p->ncategories + 15) / 16 : 1;
    for (int i = 0; i < p->ncategories; i += every) {
      double x = kt__plot_px(p, i);
      kt__sbuf_printf(p->b, "<text x='%.1f' y='%.1f' text-anchor='middle'>", x, p->y1 + 16);
      kt__xml_escape(p->b, p->categories[i]);
      kt__sbuf_printf(p->b, "</text>");
    }
  } else {
    n = ticks(&p->x, t, 64);
  }
  for (int i = 0; i < n; i++) {
    double x = kt__plot_px(p, t[i]);
    tick_label(&p->x, t[i], label, sizeof label);
    kt__sbuf_printf(p->b,
                    "<path class='grid' stroke='#ccc' stroke-width='0.6' d='M%.1f %.1fV%.1f'/><text x='%.1f' y='%.1f' "
                    "text-anchor='middle'>%s</text>",
                    x, p->y0, p->y1 + 4, x, p->y1 + 16, label);
  }
  kt__sbuf_printf(p->b, "<text class='axis' x='%.1f' y='%.1f' text-anchor='middle'>", (p->x0 + p->x1) / 2, p->h - 6);
  kt__xml_escape(p->b, p->x.label);
  kt__sbuf_printf(p->b, "</text>\n");
}

static void axis_y(kt__plot *p) {
  char label[64];
  double t[64];
  int n = ticks(&p->y, t, 64);
  for (int i = 0; i < n; i++) {
    double y = kt__plot_py(p, t[i]);
    tick_label(&p->y, t[i], label, sizeof label);
    kt__sbuf_printf(p->b,
                    "<path class='grid' stroke='#ccc' stroke-width='0.6' d='M%.1f %.1fH%.1f'/><text x='%.1f' y='%.1f' "
                    "text-anchor='end'>%s</text>",
                    p->x0 - 4, y, p->x1, p->x0 - 6, y + 4, label);
  }
  double cy = (p->y0 + p->y1) / 2;
  kt__sbuf_printf(p->b, "<text class='axis' x='14' y='%.1f' text-anchor='middle' transform='rotate(-90 14 %.1f)'>", cy,
                  cy);
  kt__xml_escape(p->b, p->y.label);
  kt__sbuf_printf(p->b, "</text>\n");
}

void kt__plot_begin(kt__plot *p, kt__sbuf *b, const char *title, int w, int h, kt__axis x, kt__axis y,
                    const char *const *categories, int ncategories) {
  static int next_id;
  *p = (kt__plot){.page = b, .id = next_id++, .w = w, .h = h, .x = x, .y = y};
  p->b = &p->body;
  p->categories = categories;
  p->ncategories = ncategories;
  if (categories) p->x = (kt__axis){.lo = -0.5, .hi = ncategories - 0.5, .label = x.label};
  p->x0 = 74, p->y0 = 12, p->x1 = w - 14, p->y1 = h - 44;
  kt__sbuf_printf(&p->head, "<title>");
  kt__xml_escape(&p->head, title);
  kt__sbuf_printf(&p->head, "</title>\n");
  patterns(p);
  kt__sbuf_printf(p->b,
                  "<rect class='frame' fill='none' stroke='#333' x='%.1f' y='%.1f' width='%.1f' height='%.1f'/>\n",
                  p->x0, p->y0, p->x1 - p->x0, p->y1 - p->y0);
  axis_x(p);
  axis_y(p);
}

static void append(kt__sbuf *to, const kt__sbuf *from) {
  if (from->len) kt__sbuf_append(to, from->s, from->len);
}

void kt__plot_end(kt__plot *p) {
  int w = (int)ceil(p->w), h = (int)ceil(p->h + p->legend_h);
  kt__sbuf_printf(p->page,
                  "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' viewBox='0 0 %d %d' role='img'>", w,
                  h, w, h);
  append(p->page, &p->head);
  append(p->page, &p->legend);
  if (p->legend_h > 0) kt__sbuf_printf(p->page, "<g transform='translate(0 %.1f)'>\n", p->legend_h);
  append(p->page, &p->body);
  if (p->legend_h > 0) kt__sbuf_printf(p->page, "</g>\n");
  kt__sbuf_printf(p->page, "</svg>\n");
  kt__sbuf_free(&p->head), kt__sbuf_free(&p->body), kt__sbuf_free(&p->legend);
}

/* The shape of STYLE's marker centred at (X, Y) pixels, R its half size. */
static void shape(kt__sbuf *b, int style, double x, double y, double r, const char *fill, const char *cls,
                  const char *tip) {
  const char *c = colour(style);
  kt__sbuf_printf(b, "<g class='%s' fill='%s' stroke='%s'>", cls, fill ? fill : c, c);
  switch (style % KT__STYLES) {
  case 0: kt__sbuf_printf(b, "<circle cx='%.1f' cy='%.1f' r='%.1f'/>", x, y, r); break;
  case 1: kt__sbuf_printf(b, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f'/>", x - r, y - r, 2 * r, 2 * r); break;
  case 2: kt__sbuf_printf(b, "<path d='M%.1f %.1fl%.1f %.1fh%.1fz'/>", x, y - r, r, 2 * r, -2 * r); break;
  case 3:
    kt__sbuf_printf(b, "<path d='M%.1f %.1fl%.1f %.1fl%.1f %.1fl%.1f %.1fz'/>", x, y - r, r, r, -r, r, -r, -r);
    break;
  case 4:
    kt__sbuf_printf(b, "<path stroke-width='2' d='M%.1f %.1fl%.1f %.1fm0 %.1fl%.1f %.1f'/>", x - r, y - r, 2 * r, 2 * r,
                    -2 * r, -2 * r, 2 * r);
    break;
  default:
    kt__sbuf_printf(b, "<path stroke-width='2' d='M%.1f %.1fh%.1fm%.1f %.1fv%.1f'/>", x - r, y, 2 * r, -r, -r, 2 * r);
  }
  if (tip) {
    kt__sbuf_printf(b, "<title>");
    kt__xml_escape(b, tip);
    kt__sbuf_printf(b, "</title>");
  }
  kt__sbuf_printf(b, "</g>");
}

void kt__plot_marker(kt__plot *p, int style, double x, double y, double size, const char *cls, const char *tip) {
  shape(p->b, style, kt__plot_px(p, x), kt__plot_py(p, y), size, NULL, cls, tip);
}

void kt__plot_ring(kt__plot *p, int style, double x, double y, double size, const char *cls, const char *tip) {
  shape(p->b, style, kt__plot_px(p, x), kt__plot_py(p, y), size, "#fff", cls, tip);
}

static void star_pixels(kt__sbuf *b, double x, double y, double r, const char *cls, const char *tip) {
  kt__sbuf_printf(b, "<path class='%s' data-x='%.1f' data-y='%.1f' fill='#000' stroke='#fff' stroke-width='0.8' d='",
                  cls, x, y);
  for (int i = 0; i < 10; i++) {
    double a = -M_PI / 2 + i * M_PI / 5, rr = i % 2 ? r * 0.45 : r;
    kt__sbuf_printf(b, "%c%.1f %.1f", i ? 'L' : 'M', x + rr * cos(a), y + rr * sin(a));
  }
  kt__sbuf_printf(b, "Z'>");
  if (tip) {
    kt__sbuf_printf(b, "<title>");
    kt__xml_escape(b, tip);
    kt__sbuf_printf(b, "</title>");
  }
  kt__sbuf_printf(b, "</path>\n");
}

void kt__plot_star(kt__plot *p, double x, double y, const char *cls, const char *tip) {
  star_pixels(p->b, kt__plot_px(p, x), kt__plot_py(p, y), 8, cls, tip);
}

void kt__plot_line(kt__plot *p, int style, const double *xs, const double *ys, int n, bool step, double width) {
  if (n < 1) return;
  kt__sbuf_printf(p->b, "<path class='series' fill='none' stroke='%s' stroke-width='%.1f' stroke-dasharray='%s' d='",
                  colour(style), width, styles[style % KT__STYLES].dash);
  for (int i = 0; i < n; i++) {
    double x = kt__plot_px(p, xs[i]), y = kt__plot_py(p, ys[i]);
    if (i == 0) kt__sbuf_printf(p->b, "M%.1f %.1f", x, y);
    else if (step) kt__sbuf_printf(p->b, "H%.1fV%.1f", x, y);
    else kt__sbuf_printf(p->b, "L%.1f %.1f", x, y);
  }
  kt__sbuf_printf(p->b, "'/>\n");
}

/* CLS: "bar" (data) or "swatch" (a legend's entry). */
static void bar_pixels(kt__sbuf *b, int id, int style, double x0, double y0, double x1, double y1, const char *cls,
                       const char *attrs) {
  char fill[32];
  if (style % KT__STYLES == 0) snprintf(fill, sizeof fill, "%s", colour(style));
  else snprintf(fill, sizeof fill, "url(#k%ds%d)", id, style % KT__STYLES);
  kt__sbuf_printf(b, "<rect class='%s' x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s' stroke='%s' %s/>", cls,
                  fmin(x0, x1), fmin(y0, y1), fabs(x1 - x0), fabs(y1 - y0), fill, colour(style), attrs ? attrs : "");
}

void kt__plot_bar(kt__plot *p, int style, double x0, double y0, double x1, double y1, const char *attrs) {
  bar_pixels(p->b, p->id, style, kt__plot_px(p, x0), kt__plot_py(p, y0), kt__plot_px(p, x1), kt__plot_py(p, y1), "bar",
             attrs);
  kt__sbuf_printf(p->b, "\n");
}

void kt__plot_text(kt__plot *p, double x, double y, const char *anchor, const char *text) {
  kt__sbuf_printf(p->b, "<text x='%.1f' y='%.1f' text-anchor='%s'>", kt__plot_px(p, x), kt__plot_py(p, y), anchor);
  kt__xml_escape(p->b, text);
  kt__sbuf_printf(p->b, "</text>\n");
}

/* The legend's layout: its font size (set on it, so that the page's CSS
 * cannot make its text wider than measured), rows, and an entry's parts. */
enum { LEGEND_FONT_PX = 11, LEGEND_ROW = 16, LEGEND_PAD = 6, LEGEND_TOP = 4, LEGEND_GAP = 4 };
static const double SWATCH_W = 22, ENTRY_GAP = 14;

/* The width of S in the legend's font, from the advance widths (in em) of the
 * widest common sans-serifs' glyph classes (DejaVu Sans, Liberation Sans,
 * Arial), rounded up, so that a box laid out around it holds it. */
static double text_width(const char *s) {
  double em = 0;
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if ((*c & 0xC0) == 0x80) continue; /* a UTF-8 continuation byte: counted with its lead */
    if (strchr(" .,:;'!|()[]ijlft", *c)) em += 0.40;
    else if (strchr("mwMW%@", *c)) em += 1.00;
    else if (*c >= 'A' && *c <= 'Z') em += 0.78;
    else em += 0.66;
  }
  return em * LEGEND_FONT_PX;
}

/* Where each of the N entries goes: rows filled left to right within the
 * plotting area's width (an entry wider than that alone in a row), from the
 * box's left edge LEFT; into X and ROW. Returns the box's width. */
static double legend_rows(const kt__plot *p, const char *const *labels, int n, double left, double *x, int *row) {
  double at = left + LEGEND_PAD, right = left, limit = p->x1;
  int r = 0;
  for (int i = 0; i < n; i++) {
    double w = SWATCH_W + text_width(labels[i]);
    if (i > 0 && at + w > limit - LEGEND_PAD) r++, at = left + LEGEND_PAD;
    x[i] = at, row[i] = r;
    right = fmax(right, at + w + LEGEND_PAD);
    at += w + ENTRY_GAP;
  }
  return right - left;
}

/* A legend entry's swatch (KIND, in style S), centred 8 px right of X at height CY. */
static void swatch(kt__plot *p, kt__swatch kind, int s, double x, double cy) {
  kt__sbuf *b = &p->legend;
  double cx = x + 8;
  if (kind == KT__SWATCH_MARKER) shape(b, s, cx, cy, 4, NULL, "swatch", NULL);
  else if (kind == KT__SWATCH_RING) shape(b, 1, cx, cy, 5, "#fff", "swatch", NULL);
  else if (kind == KT__SWATCH_STAR) star_pixels(b, cx, cy, 7, "swatch", NULL);
  else if (kind == KT__SWATCH_BAR) bar_pixels(b, p->id, s, cx - 8, cy - 5, cx + 8, cy + 5, "swatch", NULL);
  else
    kt__sbuf_printf(b, "<path stroke='%s' stroke-width='2.5' stroke-dasharray='%s' d='M%.1f %.1fh18'/>", colour(s),
                    styles[s % KT__STYLES].dash, cx - 9, cy);
}

void kt__plot_legend(kt__plot *p, const char *const *labels, const int *styles_of, const kt__swatch *kinds, int n) {
  assert(p->legend_h == 0); /* one legend per picture: a second would need a band of its own */
  if (n < 1) return;
  double *x = kt__xcalloc((size_t)n, sizeof *x);
  int *row = kt__xcalloc((size_t)n, sizeof *row);
  double left = p->x0, w = legend_rows(p, labels, n, left, x, row);
  /* Rows 16 px apart; a row's text is 12 px tall, so the last row needs 4 px less below it. */
  double h = 2 * LEGEND_PAD + LEGEND_ROW * (row[n - 1] + 1) - 4;
  p->w = fmax(p->w, left + w + 4); /* an entry wider than the picture widens it */
  kt__sbuf_printf(&p->legend,
                  "<g class='legend' font-size='%d'><rect class='bg' fill='#fff' stroke='#999' x='%.1f' y='%d' "
                  "width='%.1f' height='%.1f'/>",
                  LEGEND_FONT_PX, left, LEGEND_TOP, w, h);
  for (int i = 0; i < n; i++) {
    double cy = LEGEND_TOP + LEGEND_PAD + 6 + LEGEND_ROW * row[i]; /* the middle of the row's 12 px */
    swatch(p, kinds[i], styles_of[i], x[i], cy);
    kt__sbuf_printf(&p->legend, "<text x='%.1f' y='%.1f'>", x[i] + SWATCH_W, cy + 4);
    kt__xml_escape(&p->legend, labels[i]);
    kt__sbuf_printf(&p->legend, "</text>");
  }
  kt__sbuf_printf(&p->legend, "</g>\n");
  p->legend_h = LEGEND_TOP + h + LEGEND_GAP;
  free(x), free(row);
}

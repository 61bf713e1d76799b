/* Drawing plots as inline SVG: a frame with axes (linear or log, ticks with
 * units, labels), markers, lines, bars and a legend. Every series has a
 * colour, a marker shape and a dash pattern of its own, so that plots read
 * in grey-scale print as well. */
#ifndef KT_REPORT_SVG_H
#define KT_REPORT_SVG_H

#include "../common.h"

/* How an axis labels its ticks. */
typedef enum kt__axis_unit {
  KT__UNIT_NONE,    /* plain numbers */
  KT__UNIT_SECONDS, /* "10 us", "1 ms" */
  KT__UNIT_PERCENT  /* fractions as "50%" */
} kt__axis_unit;

typedef struct kt__axis {
  double lo, hi; /* data range */
  bool log;      /* log10 scale (lo > 0) */
  kt__axis_unit unit;
  const char *label; /* the quantity and its unit */
} kt__axis;

typedef struct kt__plot {
  kt__sbuf *page;        /* where kt__plot_end puts the picture */
  kt__sbuf head;         /* the title and the fill patterns */
  kt__sbuf body;         /* the frame, the axes and the data, drawn as if the picture had no legend */
  kt__sbuf legend;       /* kt__plot_legend's, in a band above the body */
  kt__sbuf *b;           /* &body: what the drawing functions write to */
  int id;                /* unique in the page: pattern ids */
  double w, h;           /* the picture without the legend's band */
  double legend_h;       /* the legend's band: the body is drawn that much lower */
  double x0, y0, x1, y1; /* the plotting area, in pixels (y0 top), in the body */
  kt__axis x, y;
  const char *const *categories; /* NULL, or x tick labels at 0, 1, ... */
  int ncategories;
} kt__plot;

/* The last style, black and solid, is a baseline's (random search's curve). */
enum { KT__STYLES = 7, KT__STYLE_BASELINE = KT__STYLES - 1 };

/* Starts a picture of W x H pixels (taller by its legend's band) titled TITLE
 * (its accessible name) with the axes drawn; X may be categorical (CATEGORIES,
 * N of them: x runs 0..N-1). Nothing reaches B before kt__plot_end, which
 * writes the <svg> whole once its legend's size is known. */
void kt__plot_begin(kt__plot *p, kt__sbuf *b, const char *title, int w, int h, kt__axis x, kt__axis y,
                    const char *const *categories, int ncategories);
void kt__plot_end(kt__plot *p);
/* Data to pixels (clamped to the area). */
double kt__plot_px(const kt__plot *p, double x);
double kt__plot_py(const kt__plot *p, double y);

/* A marker of series STYLE at data (X, Y); CLS is its class ("pt",
 * "pt winner"), TIP a tooltip or NULL. */
void kt__plot_marker(kt__plot *p, int style, double x, double y, double size, const char *cls, const char *tip);
/* The same, hollow (white inside): the default configuration. */
void kt__plot_ring(kt__plot *p, int style, double x, double y, double size, const char *cls, const char *tip);
/* A black star at data (X, Y): the winner, in every plot. */
void kt__plot_star(kt__plot *p, double x, double y, const char *cls, const char *tip);
/* A line through N points of series STYLE; STEP draws a staircase (best so far). */
void kt__plot_line(kt__plot *p, int style, const double *xs, const double *ys, int n, bool step, double width);
/* A bar from data (X0, Y0) to (X1, Y1), filled with series STYLE's colour
 * and pattern; ATTRS goes into the element (data-* attributes) or is NULL. */
void kt__plot_bar(kt__plot *p, int style, double x0, double y0, double x1, double y1, const char *attrs);
/* A label at data (X, Y); ANCHOR "start", "middle" or "end". */
void kt__plot_text(kt__plot *p, double x, double y, const char *anchor, const char *text);
/* The legend: one swatch (marker, line or bar) per label, KT__SWATCH_STAR and
 * _RING whatever the style. Its entries are measured and laid out in rows in a
 * band above the plotting area, outside it, so that it covers no data whatever
 * the plot draws; the picture grows by the band (kt__plot_end). */
typedef enum kt__swatch {
  KT__SWATCH_MARKER,
  KT__SWATCH_LINE,
  KT__SWATCH_BAR,
  KT__SWATCH_STAR,
  KT__SWATCH_RING
} kt__swatch;
void kt__plot_legend(kt__plot *p, const char *const *labels, const int *styles, const kt__swatch *kinds, int n);

/* Text escaped for HTML and SVG. */
void kt__xml_escape(kt__sbuf *b, const char *s);
/* "1.23 ms": three significant digits in the unit that reads best. */
void kt__format_seconds(double s, char *buf, size_t len);

#endif

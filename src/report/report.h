/* The HTML report of tunings (`ktune report`, `tune --report`, `replay
 * --report`): one self-contained page of inline SVG and CSS. What it shows
 * is a kt__report, made from the results database, from a tuning's result
 * or from a replay, so that every source gets the same pictures. */
#ifndef KT_REPORT_H
#define KT_REPORT_H

#include "../common.h"

/* One evaluated configuration; its values are in kt__report_key.values. */
typedef struct kt__report_point {
  kt__status status;
  double seconds; /* the time it is judged by; NAN unless OK */
  double at_s;    /* when it was settled, seconds after the key's first; NAN: unknown */
  char *why;      /* why it failed (its message, owned), or NULL */
  /* How it was measured (kt__report_set_measurement): the method ("graph",
   * "events", "profiling", "clock"; a static string, NULL: unknown), its
   * energy per launch (NAN: none measured), and whether every sample kept
   * was undisturbed. */
  const char *method;
  double joules;
  bool valid;
} kt__report_point;

/* A search's progress over recorded spaces (replays): best[i] is the mean
 * fraction of the optimum found after i+1 evaluations. */
typedef struct kt__report_curve {
  char *label;
  double *best;
  long n;
  bool baseline; /* random search, the curve the others are read against */
} kt__report_curve;

/* Where a tuning's wall time went (known only for a tuning just run). */
typedef struct kt__report_timeline {
  bool known;
  double wall_s, compile_busy_s, device_busy_s;
  double load_s, verify_s, measure_s; /* device busy, split */
  int compile_threads;
} kt__report_timeline;

/* One key: a kernel on a device at one set of sizes, and what was measured. */
typedef struct kt__report_key {
  char *kernel, *backend, *device, *sizes;
  char **names; /* tuned names, in the order of each point's values */
  int nnames;
  kt__report_point *points; /* in evaluation order */
  int64_t *values;          /* points[i]'s values at values[i * nnames] */
  int n, cap;
  int winner, def; /* point indices, -1 when none */
  kt__report_timeline timeline;
  kt__report_curve *curves;
  int ncurves;
  const char *note; /* a line under the key's heading (where its data came from), or NULL */
} kt__report_key;

typedef struct kt__report {
  char *origin; /* what it was made from, for the page's first line */
  kt__report_key *keys;
  int nkeys, cap;
} kt__report;

/* ---- building (model.c) ---- */

/* A new key; the strings and NAMES are copied. */
kt__report_key *kt__report_add_key(kt__report *r, const char *kernel, const char *backend, const char *device,
                                   const char *sizes, const char *const *names, int nnames);
/* Appends a point (VALUES: nnames of them); returns its index. */
int kt__report_add_point(kt__report_key *k, const int64_t *values, kt__status status, double seconds, double at_s);
/* How point AT was measured: METHOD (static, or NULL), JOULES per launch
 * (NAN: none), VALID (no disturbed sample kept). */
void kt__report_set_measurement(kt__report_key *k, int at, const char *method, double joules, bool valid);
/* Point AT failed for this reason (NULL or "": none given); kept in a copy. */
void kt__report_set_why(kt__report_key *k, int at, const char *why);
/* Adds an empty curve of N evaluations labelled LABEL; its best[] is zeroed. */
kt__report_curve *kt__report_add_curve(kt__report_key *k, const char *label, long n, bool baseline);
void kt__report_free(kt__report *r);
/* The fastest OK point (-1 when none): the winner when a source has none. */
int kt__report_fastest(const kt__report_key *k);

/* ---- rendering (html.c) ---- */

/* The page, appended to OUT. */
void kt__report_html(const kt__report *r, kt__sbuf *out);
/* Renders R and writes it to PATH whole or not at all: into a temporary
 * file beside it, renamed over PATH once complete. KT_INVALID, with a
 * message naming PATH, when it cannot be (no such folder, a directory, the
 * disk full, a file-size limit). */
int kt__report_write(const kt__report *r, const char *path, kt__errbuf *eb);

#endif

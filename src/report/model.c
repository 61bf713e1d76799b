/* Building a report's data: keys, points and curves. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

kt__report_key *kt__report_add_key(kt__report *r, const char *kernel, const char *backend, const char *device,
                                   const char *sizes, const char *const *names, int nnames) {
  if (r->nkeys == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 8;
    r->keys = kt__xreallocarray(r->keys, (size_t)r->cap, sizeof *r->keys);
  }
  kt__report_key *k = &r->keys[r->nkeys++];
  memset(k, 0, sizeof *k);
  k->kernel = kt__xstrdup(kernel ? kernel : "");
  k->backend = kt__xstrdup(backend ? backend : "");
  k->device = kt__xstrdup(device ? device : "");
  k->sizes = kt__xstrdup(sizes ? sizes : "");
  k->names = kt__xcalloc((size_t)nnames + 1, sizeof *k->names);
  for (int i = 0; i < nnames; i++) k->names[i] = kt__xstrdup(names[i]);
  k->nnames = nnames;
  k->winner = k->def = -1;
  return k;
}

int kt__report_add_point(kt__report_key *k, const int64_t *values, kt__status status, double seconds, double at_s) {
  if (k->n == k->cap) {
    k->cap = k->cap ? 2 * k->cap : 64;
    k->points = kt__xreallocarray(k->points, (size_t)k->cap, sizeof *k->points);
    k->values = kt__xreallocarray(k->values, (size_t)k->cap * (size_t)(k->nnames ? k->nnames : 1), sizeof *k->values);
  }
  bool ok = status == KT__ST_OK && seconds > 0 && isfinite(seconds);
  k->points[k->n] = (kt__report_point){
      ok || status != KT__ST_OK ? status : KT__ST_RUNTIME, ok ? seconds : NAN, at_s, NULL, NULL, NAN, true};
  memcpy(&k->values[(size_t)k->n * (size_t)k->nnames], values, (size_t)k->nnames * sizeof *values);
  return k->n++;
}

void kt__report_set_measurement(kt__report_key *k, int at, const char *method, double joules, bool valid) {
  kt__report_point *p = &k->points[at];
  p->method = method;
  p->joules = joules >= 0 ? joules : NAN;
  p->valid = valid;
}

void kt__report_set_why(kt__report_key *k, int at, const char *why) {
  free(k->points[at].why);
  k->points[at].why = why && *why ? kt__xstrdup(why) : NULL;
}

kt__report_curve *kt__report_add_curve(kt__report_key *k, const char *label, long n, bool baseline) {
  k->curves = kt__xreallocarray(k->curves, (size_t)k->ncurves + 1, sizeof *k->curves);
  kt__report_curve *c = &k->curves[k->ncurves++];
  c->label = kt__xstrdup(label);
  c->best = kt__xcalloc((size_t)(n > 0 ? n : 1), sizeof *c->best);
  c->n = n;
  c->baseline = baseline;
  return c;
}

int kt__report_fastest(const kt__report_key *k) {
  int best = -1;
  for (int i = 0; i < k->n; i++)
    if (k->points[i].status == KT__ST_OK && (best < 0 || k->points[i].seconds < k->points[best].seconds)) best = i;
  return best;
}

static void free_key(kt__report_key *k) {
  for (int i = 0; i < k->nnames; i++) free(k->names[i]);
  for (int i = 0; i < k->ncurves; i++) {
    free(k->curves[i].label);
    free(k->curves[i].best);
  }
  free(k->curves);
  free(k->names);
  for (int i = 0; i < k->n; i++) free(k->points[i].why);
  free(k->points);
  free(k->values);
  free(k->kernel);
  free(k->backend);
  free(k->device);
  free(k->sizes);
}

void kt__report_free(kt__report *r) {
  if (!r) return;
  for (int i = 0; i < r->nkeys; i++) free_key(&r->keys[i]);
  free(r->keys);
  free(r->origin);
  memset(r, 0, sizeof *r);
}

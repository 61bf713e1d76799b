/* A report of one tuning just run (`ktune tune ... --report FILE`). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../tuner/result.h"
#include "sources.h"

static const kt_result *order_subject;
static int by_settled(const void *a, const void *b) {
  const kt__trial *x = &order_subject->trials[*(const int *)a], *y = &order_subject->trials[*(const int *)b];
  if (x->done_s != y->done_s) return x->done_s < y->done_s ? -1 : 1;
  return *(const int *)a - *(const int *)b;
}

/* The settled trials, in the order they settled (the search's progress). */
static int settled_order(const kt_result *res, int *order) {
  int n = 0;
  for (int i = 0; i < res->ntrials; i++)
    if (res->trials[i].status != KT__ST_PENDING) order[n++] = i;
  order_subject = res; /* qsort has no user pointer; reports are made on one thread */
  qsort(order, (size_t)n, sizeof *order, by_settled);
  return n;
}

static void timeline(const kt_result *res, kt__report_timeline *t) {
  *t = (kt__report_timeline){.known = true,
                             .wall_s = res->wall_s,
                             .compile_busy_s = res->compile_busy_s,
                             .device_busy_s = res->device_busy_s,
                             .load_s = res->load_s,
                             .verify_s = res->verify_s,
                             .measure_s = res->measure_s,
                             .compile_threads = res->compile_threads};
}

void kt__report_from_result(const kt_result *res, kt__report *r) {
  kt__report_key *k = kt__report_add_key(r, res->kernel, res->device.backend, res->device.name, res->sizes,
                                         (const char *const *)res->names, res->nnames);
  int *order = kt__xcalloc((size_t)res->ntrials + 1, sizeof *order);
  int n = settled_order(res, order);
  for (int j = 0; j < n; j++) {
    const kt__trial *t = &res->trials[order[j]];
    int at = kt__report_add_point(k, t->values, t->status, kt__trial_seconds(t), t->done_s);
    if (t->status != KT__ST_OK) kt__report_set_why(k, at, t->message);
    if (t->status == KT__ST_OK && t->stats.timing != KT_TIMING_AUTO)
      kt__report_set_measurement(k, at, res->timings ? res->timings[t->stats.timing] : kt__timing_name(t->stats.timing),
                                 kt__seen_watts(&t->stats.seen) * kt__trial_seconds(t), kt__seen_valid(&t->stats.seen));
    if (order[j] == res->winner) k->winner = at;
    if (order[j] == res->default_trial) k->def = at;
  }
  free(order);
  timeline(res, &k->timeline);
  kt__sbuf origin = {0};
  kt__sbuf_printf(&origin, "A tuning of %s (kernel %s): %d configurations measured, strategy %s.", res->file,
                  res->kernel, n, res->strategy ? res->strategy : "-");
  r->origin = origin.s;
  k->note = "Times are medians per launch; the finalists' are those of their interleaved rounds, which decided.";
}

/* A report of what the results database holds (`ktune report`): one key per
 * stored tuning. The database keeps no flag for the default configuration:
 * it is the first result of a key, the reference every tuning measures and
 * stores first. Times of measurement come from the results' timestamps. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../config.h"
#include "../store/cache.h"
#include "sources.h"

/* "YYYY-MM-DDTHH:MM:SS.mmmZ" as seconds since the epoch; NAN when malformed. */
static double timestamp_s(const char *ts) {
  struct tm tm = {0};
  int ms = 0;
  if (!ts || sscanf(ts, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                    &tm.tm_sec, &ms) != 7)
    return NAN;
  tm.tm_year -= 1900, tm.tm_mon -= 1;
  return (double)timegm(&tm) + ms / 1000.0;
}

/* The names of a stored configuration, in its order, into NAMES (at most
 * KT__MAX_NAMES, pointing into a copy the caller frees as *TEXT). */
static int config_names(const char *config, const char **names, char **text) {
  *text = kt__xstrdup(config);
  int n = 0;
  const char *p = *text;
  kt__config_item it;
  while (n < KT__MAX_NAMES && kt__config_next(&p, &it)) {
    ((char *)it.text)[it.name_len] = 0; /* the copy is ours to cut */
    names[n++] = it.text;
  }
  return n;
}

static void values_of(const char *const *names, int n, const char *config, int64_t *values) {
  const char *p = config;
  kt__config_item it;
  memset(values, 0, (size_t)n * sizeof *values);
  while (kt__config_next(&p, &it)) {
    int i = kt__config_find(names, n, &it);
    if (i >= 0) kt__config_item_int(&it, &values[i]);
  }
}

static int add_key(void *ud, const kt__cache_key *ck, const kt__result_row *rows, int n) {
  kt__report *r = ud;
  if (n == 0) return KT_OK;
  const char *names[KT__MAX_NAMES];
  char *text;
  int nnames = config_names(rows[0].rec.config, names, &text);
  kt__report_key *k = kt__report_add_key(r, ck->kernel, ck->backend, ck->device, ck->sizes, names, nnames);
  int64_t values[KT__MAX_NAMES];
  double t0 = INFINITY; /* a finalist's timestamp is its last round's: the first may not be first */
  for (int i = 0; i < n; i++) t0 = fmin(t0, timestamp_s(rows[i].timestamp));
  for (int i = 0; i < n; i++) {
    const kt__record *rec = &rows[i].rec;
    values_of(names, nnames, rec->config, values);
    int at = kt__report_add_point(k, values, rec->status, rec->stats.median, timestamp_s(rows[i].timestamp) - t0);
    if (rec->status != KT__ST_OK) kt__report_set_why(k, at, rec->message);
    /* The store keeps the timing and the energy, not the validity (the measurement record's JSON has it). */
    if (rec->status == KT__ST_OK && rec->stats.timing != KT_TIMING_AUTO)
      kt__report_set_measurement(k, at, kt__timing_name(rec->stats.timing),
                                 kt__seen_watts(&rec->stats.seen) * rec->stats.median, true);
    if (ck->winner_config && strcmp(rec->config, ck->winner_config) == 0) k->winner = i;
  }
  free(text);
  k->def = 0;
  k->note = "Wall times are those of storing each result (a finalist's: its last round's).";
  if (k->winner < 0 || k->points[k->winner].status != KT__ST_OK) k->winner = kt__report_fastest(k);
  return KT_OK;
}

/* "--kernel matmul --key "M=384"": what the filter asked for, for messages. */
static void filter_text(const kt_cache_filter *f, kt__sbuf *b) {
  if (f && f->kernel) kt__sbuf_printf(b, " kernel %s", f->kernel);
  if (f && f->device) kt__sbuf_printf(b, " device %s", f->device);
  if (f && f->sizes) kt__sbuf_printf(b, " sizes \"%s\"", f->sizes);
}

int kt__report_from_store(const kt_options *o, const kt_cache_filter *f, kt__report *r, kt__errbuf *eb) {
  char path[4096];
  KT__FORWARD(kt__cache_path(o, path, sizeof path, eb));
  KT__FORWARD(kt__cache_each(o, f, add_key, r, eb));
  kt__sbuf origin = {0};
  kt__sbuf_printf(&origin, "From the results database %s", path);
  filter_text(f, &origin);
  kt__sbuf_printf(&origin, ": %d stored tuning%s.", r->nkeys, r->nkeys == 1 ? "" : "s");
  r->origin = origin.s;
  if (r->nkeys) return KT_OK;
  kt__sbuf want = {0};
  filter_text(f, &want);
  int rc = want.s ? kt__err(eb, KT_NOTFOUND,
                            "%s: no stored tuning matches%s; `ktune cache list --db %s` shows what it holds", path,
                            want.s, path)
                  : kt__err(eb, KT_NOTFOUND,
                            "%s: the database holds no results yet; tune a kernel first (ktune tune "
                            "FILE --db %s)",
                            path, path);
  kt__sbuf_free(&want);
  return rc;
}

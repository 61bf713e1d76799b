/* Export of stored tunings: ktune's own JSON document (read back by
 * import.c, so it carries every column), the FAIR benchmark hub's T4
 * results format (schema 1.0.0, as in tests/data/t4) for other tools, and
 * CSV for spreadsheets and data frames. */
#include "export.h"

#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../config.h"
#include "db.h"
#include "select.h"
#include "store.h"

/* JSON has no NaN or infinity: NaN (a statistic never measured) is null and
 * infinities are the strings "inf"/"-inf", which import reads back. */
static json_object *json_real(double v) {
  if (isnan(v)) return NULL;
  if (isinf(v)) return json_object_new_string(v > 0 ? "inf" : "-inf");
  return json_object_new_double(v);
}

static void add_str(json_object *o, const char *k, const char *v) {
  json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

/* Runs a sequence of reads as one snapshot, so that a writer committing
 * between two of them cannot make the export inconsistent. */
static int read_begin(kt__store *s, kt__errbuf *eb) {
  int rc = sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL);
  return rc == SQLITE_OK ? KT_OK : kt__store_fail(s, rc, "exporting", eb);
}

static void read_end(kt__store *s) {
  if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
}

static int write_doc(json_object *doc, FILE *out, kt__errbuf *eb) {
  const char *text = json_object_to_json_string_ext(
      doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
  bool ok = fputs(text, out) >= 0 && fputc('\n', out) != EOF && fflush(out) == 0;
  return ok ? KT_OK : kt__err(eb, KT_IO, "cannot write the export: output error");
}

/* ---- ktune's own document ---- */

static json_object *key_to_json(const kt__key_row *k) {
  json_object *o = json_object_new_object();
  add_str(o, "kernel", k->kernel);
  add_str(o, "source_hash", k->source_hash);
  add_str(o, "backend", k->backend);
  add_str(o, "device", k->device);
  add_str(o, "arch", k->arch);
  json_object_object_add(o, "memory", json_object_new_int64(k->memory));
  add_str(o, "driver_version", k->driver_version);
  add_str(o, "toolchain_version", k->toolchain_version);
  add_str(o, "method_version", k->method_version);
  add_str(o, "sizes", k->sizes);
  add_str(o, "created", k->created);
  json_object *w = NULL;
  if (k->winner_config) {
    w = json_object_new_object();
    add_str(w, "config", k->winner_config);
    json_object_object_add(w, "seconds", json_real(k->winner_s));
    add_str(w, "timestamp", k->winner_ts);
  }
  json_object_object_add(o, "winner", w);
  return o;
}

static json_object *result_to_json(const kt__result_row *row) {
  const kt__record *r = &row->rec;
  json_object *o = json_object_new_object();
  add_str(o, "config", r->config);
  add_str(o, "status", kt__status_name(r->status));
  json_object_object_add(o, "median", json_real(r->stats.median));
  json_object_object_add(o, "min", json_real(r->stats.min));
  json_object_object_add(o, "max", json_real(r->stats.max));
  json_object_object_add(o, "mean", json_real(r->stats.mean));
  json_object_object_add(o, "stddev", json_real(r->stats.stddev));
  json_object_object_add(o, "nsamples", json_object_new_int(r->stats.nsamples));
  json_object_object_add(o, "reps", json_object_new_int(r->stats.reps));
  json_object_object_add(o, "stopped_early", json_object_new_boolean(r->stats.stopped_early));
  json_object_object_add(o, "compile_s", json_real(r->compile_s));
  add_str(o, "message", r->message);
  if (r->outside) add_str(o, "cause", "outside");
  add_str(o, "timestamp", row->timestamp);
  return o;
}

static int key_results_json(kt__store *s, const kt__key_row *k, json_object *jk, kt__errbuf *eb) {
  kt__result_row *rows;
  int n;
  KT__FORWARD(kt__store_results_of(s, k->id, &rows, &n, eb));
  json_object *arr = json_object_new_array_ext(n);
  for (int i = 0; i < n; i++) json_object_array_add(arr, result_to_json(&rows[i]));
  json_object_object_add(jk, "results", arr);
  kt__result_rows_free(rows, n);
  return KT_OK;
}

static int build_json(kt__store *s, const kt_cache_filter *f, json_object *doc, kt__errbuf *eb) {
  kt__key_row *keys;
  int n;
  char ts[32];
  kt__store_timestamp(ts);
  json_object_object_add(doc, "format", json_object_new_string(KT__EXPORT_FORMAT));
  json_object_object_add(doc, "format_version", json_object_new_int(KT__EXPORT_VERSION));
  json_object_object_add(doc, "ktune_version", json_object_new_string(KTUNE_VERSION_STRING));
  json_object_object_add(doc, "schema_version", json_object_new_int(KT__SCHEMA_VERSION));
  json_object_object_add(doc, "exported", json_object_new_string(ts));
  KT__FORWARD(kt__store_select_some(s, f, &keys, &n, eb));
  json_object *arr = json_object_new_array_ext(n);
  json_object_object_add(doc, "keys", arr);
  int err = KT_OK;
  for (int i = 0; i < n && err == KT_OK; i++) {
    json_object *jk = key_to_json(&keys[i]);
    json_object_array_add(arr, jk);
    err = key_results_json(s, &keys[i], jk, eb);
  }
  kt__key_rows_free(keys, n);
  return err;
}

int kt__export_json(kt__store *s, const kt_cache_filter *f, FILE *out, kt__errbuf *eb) {
  json_object *doc = json_object_new_object();
  pthread_mutex_lock(&s->mu);
  int err = read_begin(s, eb);
  if (err == KT_OK) err = build_json(s, f, doc, eb);
  read_end(s);
  pthread_mutex_unlock(&s->mu);
  if (err == KT_OK) err = write_doc(doc, out, eb);
  json_object_put(doc);
  return err;
}

/* ---- T4 ---- */

/* T4's "invalidity" for each status; NULL: not exported (never measured). */
static const char *t4_invalidity(kt__status st) {
  switch (st) {
  case KT__ST_OK: return "correct";
  case KT__ST_COMPILE: return "compile";
  case KT__ST_RUNTIME: return "runtime";
  case KT__ST_TIMEOUT: return "timeout";
  case KT__ST_CORRECTNESS:
  case KT__ST_INPUT:
  case KT__ST_BOUNDS: return "correctness";
  case KT__ST_STATE: return "runtime";
  case KT__ST_CONSTRAINT: return "constraints";
  default: return NULL;
  }
}

/* The measurement value T4 files (after Kernel Tuner) give a failed configuration. */
static const char *t4_failure_value(kt__status st) {
  switch (st) {
  case KT__ST_COMPILE: return "CompilationFailedConfig";
  case KT__ST_RUNTIME:
  case KT__ST_STATE:
  case KT__ST_TIMEOUT: return "RuntimeFailedConfig";
  default: return "InvalidConfig";
  }
}

/* "2024-05-01T12:00:00.123Z" as the hub's files write it: "2024-05-01 12:00:00.123+00:00". */
static json_object *t4_timestamp(const char *ts) {
  char buf[48];
  snprintf(buf, sizeof buf, "%s", ts);
  char *t = strchr(buf, 'T'), *z = strrchr(buf, 'Z');
  if (t) *t = ' ';
  if (z && z[1] == 0) snprintf(z, sizeof buf - (size_t)(z - buf), "+00:00");
  return json_object_new_string(buf);
}

/* "A=1 B=2" as {"A": 1, "B": 2}; a value that is not an integer stays a string. */
static json_object *t4_configuration(const char *config) {
  json_object *o = json_object_new_object();
  kt__config_item it;
  for (const char *p = config; kt__config_next(&p, &it);) {
    if (!it.value) continue;
    char *name = kt__xstrndup(it.text, it.name_len);
    int64_t v;
    json_object *value = kt__config_item_int(&it, &v) ? json_object_new_int64(v)
                                                      : json_object_new_string_len(it.value, (int)it.value_len);
    json_object_object_add(o, name, value);
    free(name);
  }
  return o;
}

/* Seconds as T4's milliseconds; a time never measured counts as 0. */
static json_object *t4_ms(double seconds) { return json_object_new_double(isfinite(seconds) ? seconds * 1e3 : 0); }

static void add_measurement(json_object *arr, const char *name, json_object *value, const char *unit) {
  json_object *m = json_object_new_object();
  json_object_object_add(m, "name", json_object_new_string(name));
  json_object_object_add(m, "value", value);
  json_object_object_add(m, "unit", json_object_new_string(unit));
  json_object_array_add(arr, m);
}

/* One T4 result. ktune keeps statistics rather than every sample, so the
 * times carry no "runtimes" list; the statistics are measurements in ms. */
static json_object *t4_result(const kt__result_row *row) {
  const kt__record *r = &row->rec;
  bool ok = r->status == KT__ST_OK;
  json_object *o = json_object_new_object();
  json_object_object_add(o, "timestamp", t4_timestamp(row->timestamp));
  json_object_object_add(o, "configuration", t4_configuration(r->config));
  json_object *times = json_object_new_object();
  json_object_object_add(times, "compilation", t4_ms(r->compile_s));
  json_object_object_add(times, "framework", json_object_new_double(0));
  json_object_object_add(times, "search_algorithm", json_object_new_double(0));
  json_object_object_add(times, "validation", json_object_new_double(0));
  json_object_object_add(o, "times", times);
  json_object_object_add(o, "invalidity", json_object_new_string(t4_invalidity(r->status)));
  json_object_object_add(o, "correctness", json_object_new_int(ok));
  json_object *ms = json_object_new_array();
  if (ok && isfinite(r->stats.median)) {
    add_measurement(ms, "time", t4_ms(r->stats.median), "ms");
    add_measurement(ms, "time_min", t4_ms(r->stats.min), "ms");
    add_measurement(ms, "time_max", t4_ms(r->stats.max), "ms");
    add_measurement(ms, "time_mean", t4_ms(r->stats.mean), "ms");
    add_measurement(ms, "time_stddev", t4_ms(r->stats.stddev), "ms");
  } else {
    add_measurement(ms, "time", json_object_new_string(t4_failure_value(r->status)), "ms");
  }
  json_object_object_add(o, "measurements", ms);
  json_object *objectives = json_object_new_array();
  json_object_array_add(objectives, json_object_new_string("time"));
  json_object_object_add(o, "objectives", objectives);
  return o;
}

/* Exactly one key, or a message that lists the candidates. */
static int one_key(kt__store *s, const kt_cache_filter *f, kt__key_row **keys, int *n, kt__errbuf *eb) {
  KT__FORWARD(kt__store_select(s, f, keys, n, eb));
  if (*n == 1) return KT_OK;
  kt__sbuf list = {0};
  for (int i = 0; i < *n && i < 20; i++)
    kt__sbuf_printf(&list, "\n  %s on %s (%s) %s", (*keys)[i].kernel, (*keys)[i].device, (*keys)[i].backend,
                    (*keys)[i].sizes);
  int err = *n == 0 ? kt__err(eb, KT_NOTFOUND, "no stored tuning matches in %s", s->path)
                    : kt__err(eb, KT_INVALID,
                              "a T4 file holds one tuning, and %d match; narrow the choice "
                              "with the kernel, device or sizes:%s",
                              *n, list.s);
  kt__sbuf_free(&list);
  kt__key_rows_free(*keys, *n);
  *keys = NULL;
  *n = 0;
  return err;
}

static int build_t4(kt__store *s, const kt_cache_filter *f, json_object *doc, kt__errbuf *eb) {
  kt__key_row *keys;
  kt__result_row *rows;
  int n, nrows;
  KT__FORWARD(one_key(s, f, &keys, &n, eb));
  int err = kt__store_results_of(s, keys[0].id, &rows, &nrows, eb);
  if (err == KT_OK) {
    json_object_object_add(doc, "schema_version", json_object_new_string("1.0.0"));
    json_object *meta = json_object_new_object();
    /* Spelled as in the hub's own result files, which readers compare against. */
    json_object_object_add(meta, "timeunit", json_object_new_string("miliseconds"));
    json_object_object_add(meta, "ktune", key_to_json(&keys[0]));
    json_object_object_add(doc, "metadata", meta);
    json_object *arr = json_object_new_array_ext(nrows);
    for (int i = 0; i < nrows; i++)
      if (t4_invalidity(rows[i].rec.status)) json_object_array_add(arr, t4_result(&rows[i]));
    json_object_object_add(doc, "results", arr);
    kt__result_rows_free(rows, nrows);
  }
  kt__key_rows_free(keys, n);
  return err;
}

int kt__export_t4(kt__store *s, const kt_cache_filter *f, FILE *out, kt__errbuf *eb) {
  json_object *doc = json_object_new_object();
  pthread_mutex_lock(&s->mu);
  int err = read_begin(s, eb);
  if (err == KT_OK) err = build_t4(s, f, doc, eb);
  read_end(s);
  pthread_mutex_unlock(&s->mu);
  if (err == KT_OK) err = write_doc(doc, out, eb);
  json_object_put(doc);
  return err;
}

/* ---- CSV: a row per result, a column per configuration name ---- */

/* The configuration names across the selected keys, in first-seen order. */
typedef struct csv_names {
  char **name;
  int n;
} csv_names;

static int csv_name_index(const csv_names *c, const char *name, size_t len) {
  for (int i = 0; i < c->n; i++)
    if (strlen(c->name[i]) == len && strncmp(c->name[i], name, len) == 0) return i;
  return -1;
}

static void csv_names_add(csv_names *c, const char *config) {
  kt__config_item it;
  for (const char *p = config; kt__config_next(&p, &it);) {
    if (!it.value || csv_name_index(c, it.text, it.name_len) >= 0) continue;
    c->name = kt__xreallocarray(c->name, (size_t)c->n + 1, sizeof *c->name);
    char *name = kt__xmalloc(it.name_len + 1);
    memcpy(name, it.text, it.name_len);
    name[it.name_len] = 0;
    c->name[c->n++] = name;
  }
}

static void csv_names_free(csv_names *c) {
  for (int i = 0; i < c->n; i++) free(c->name[i]);
  free(c->name);
}

/* One field, quoted (RFC 4180) when it holds a comma, a quote or a line end. */
static void csv_field(FILE *out, const char *s, size_t len, bool first) {
  if (!first) fputc(',', out);
  bool quote = false;
  for (size_t i = 0; i < len; i++) quote |= s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
  if (!quote) {
    fwrite(s, 1, len, out);
    return;
  }
  fputc('"', out);
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '"') fputc('"', out);
    fputc(s[i], out);
  }
  fputc('"', out);
}

static void csv_text(FILE *out, const char *s) { csv_field(out, s ? s : "", s ? strlen(s) : 0, false); }

/* Seconds as a number; empty where never measured (NaN) or not a time. */
static void csv_seconds(FILE *out, double v) {
  if (isfinite(v)) fprintf(out, ",%.9g", v);
  else fputc(',', out);
}

static const char *const csv_key_columns[] = {"kernel", "backend", "device", "sizes"};
static const char *const csv_result_columns[] = {"status",   "winner",  "median_s",  "min_s",   "max_s",
                                                 "stddev_s", "samples", "compile_s", "message", "timestamp"};

static void csv_header(FILE *out, const csv_names *c) {
  for (size_t i = 0; i < sizeof csv_key_columns / sizeof *csv_key_columns; i++)
    csv_field(out, csv_key_columns[i], strlen(csv_key_columns[i]), i == 0);
  for (int i = 0; i < c->n; i++) csv_text(out, c->name[i]);
  for (size_t i = 0; i < sizeof csv_result_columns / sizeof *csv_result_columns; i++)
    csv_text(out, csv_result_columns[i]);
  fputc('\n', out);
}

static void csv_row(FILE *out, const csv_names *c, const kt__key_row *k, const kt__result_row *row) {
  const kt__record *r = &row->rec;
  csv_field(out, k->kernel, strlen(k->kernel), true);
  csv_text(out, k->backend);
  csv_text(out, k->device);
  csv_text(out, k->sizes);
  for (int i = 0; i < c->n; i++) { /* this configuration's value of name I, empty if it has none */
    kt__config_item it;
    const char *value = "";
    size_t len = 0;
    for (const char *p = r->config; kt__config_next(&p, &it);)
      if (it.value && strlen(c->name[i]) == it.name_len && strncmp(c->name[i], it.text, it.name_len) == 0)
        value = it.value, len = it.value_len;
    csv_field(out, value, len, false);
  }
  bool timed = r->status == KT__ST_OK || r->stats.nsamples > 0; /* as cache show's table */
  csv_text(out, kt__status_name(r->status));
  csv_text(out, k->winner_config && strcmp(k->winner_config, r->config) == 0 ? "1" : "0");
  csv_seconds(out, timed ? r->stats.median : NAN);
  csv_seconds(out, timed ? r->stats.min : NAN);
  csv_seconds(out, timed ? r->stats.max : NAN);
  csv_seconds(out, timed ? r->stats.stddev : NAN);
  fprintf(out, ",%d", r->stats.nsamples);
  csv_seconds(out, r->compile_s);
  csv_text(out, r->message);
  csv_text(out, row->timestamp);
  fputc('\n', out);
}

/* Pass 0 collects the names, pass 1 writes a row per result. */
static int csv_pass(kt__store *s, const kt__key_row *keys, int n, csv_names *c, int pass, FILE *out, kt__errbuf *eb) {
  for (int i = 0; i < n; i++) {
    kt__result_row *rows;
    int nrows;
    KT__FORWARD(kt__store_results_of(s, keys[i].id, &rows, &nrows, eb));
    for (int j = 0; j < nrows; j++)
      if (pass == 0) csv_names_add(c, rows[j].rec.config);
      else csv_row(out, c, &keys[i], &rows[j]);
    kt__result_rows_free(rows, nrows);
  }
  return KT_OK;
}

int kt__export_csv_held(kt__store *s, const kt_cache_filter *f, FILE *out, kt__errbuf *eb) {
  kt__key_row *keys;
  int n;
  KT__FORWARD(kt__store_select_some(s, f, &keys, &n, eb));
  csv_names names = {0};
  int err = csv_pass(s, keys, n, &names, 0, out, eb);
  if (err == KT_OK) csv_header(out, &names);
  if (err == KT_OK) err = csv_pass(s, keys, n, &names, 1, out, eb);
  csv_names_free(&names);
  kt__key_rows_free(keys, n);
  return err;
}

int kt__export_csv(kt__store *s, const kt_cache_filter *f, FILE *out, kt__errbuf *eb) {
  pthread_mutex_lock(&s->mu);
  int err = read_begin(s, eb);
  if (err == KT_OK) err = kt__export_csv_held(s, f, out, eb);
  read_end(s);
  pthread_mutex_unlock(&s->mu);
  if (err == KT_OK && (ferror(out) || fflush(out) != 0))
    err = kt__err(eb, KT_IO, "cannot write the export: output error");
  return err;
}

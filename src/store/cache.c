/* The cache commands behind kt_cache_* (context.c): list, show (as a
 * table, a header of #defines or -D flags), export, import, clear. Each call
 * opens the database, does one thing and closes it. */
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../config.h"
#include "cache.h"
#include "db.h"
#include "export.h"
#include "import.h"
#include "select.h"
#include "store.h"

/* ---- plumbing ---- */

/* Reading commands pass CREATE false: a missing file leaves *S NULL and
 * reads as an empty database. */
static int open_db(const kt_options *o, bool create, kt__store **s, kt__errbuf *eb) {
  int err = kt__store_open_ex(o->db_path, o->labels.db, create ? 0 : KT__STORE_NOCREATE, s, eb);
  if (err == KT_NOTFOUND && !create) {
    *s = NULL;
    return KT_OK;
  }
  return err;
}

/* Whether the database file (O's db_path, else the default) exists already. */
static bool db_exists(const kt_options *o) {
  char path[4096];
  struct stat sb;
  kt__errbuf ignored;
  if (kt__cache_path(o, path, sizeof path, &ignored) != KT_OK) return false;
  return stat(path, &sb) == 0;
}

static void remove_db(const char *path) {
  static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
  char buf[4096];
  for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
    snprintf(buf, sizeof buf, "%s%s", path, suffixes[i]);
    unlink(buf);
  }
}

/* Human time: "12.3 us". NaN (never measured) is "-". */
static const char *fmt_time(double s, char buf[32]) {
  if (isnan(s)) snprintf(buf, 32, "-");
  else if (isinf(s)) snprintf(buf, 32, "inf");
  else if (s < 1e-6) snprintf(buf, 32, "%.1f ns", s * 1e9);
  else if (s < 1e-3) snprintf(buf, 32, "%.2f us", s * 1e6);
  else if (s < 1) snprintf(buf, 32, "%.3f ms", s * 1e3);
  else snprintf(buf, 32, "%.3f s", s);
  return buf;
}

static bool valid_format(const char *format, const char *const *allowed) {
  for (; *allowed; allowed++)
    if (strcmp(format, *allowed) == 0) return true;
  return false;
}

int kt__cache_path(const kt_options *o, char *buf, size_t len, kt__errbuf *eb) {
  if (!o->db_path) return kt__store_default_path(buf, len, o->labels.db, eb);
  int n = snprintf(buf, len, "%s", o->db_path);
  KT__RETURN_IF(n < 0 || (size_t)n >= len, eb, KT_INVALID, "results database path is too long");
  return KT_OK;
}

/* ---- list ---- */

static json_object *list_entry_json(const kt__key_row *k) {
  json_object *o = json_object_new_object();
  json_object_object_add(o, "kernel", json_object_new_string(k->kernel));
  json_object_object_add(o, "backend", json_object_new_string(k->backend));
  json_object_object_add(o, "device", json_object_new_string(k->device));
  json_object_object_add(o, "arch", json_object_new_string(k->arch));
  json_object_object_add(o, "sizes", json_object_new_string(k->sizes));
  json_object_object_add(o, "source_hash", json_object_new_string(k->source_hash));
  json_object_object_add(o, "results", json_object_new_int64(k->nresults));
  json_object_object_add(o, "valid", json_object_new_int64(k->nok));
  json_object *w = NULL;
  if (k->winner_config) {
    w = json_object_new_object();
    json_object_object_add(w, "config", json_object_new_string(k->winner_config));
    json_object_object_add(w, "seconds", isfinite(k->winner_s) ? json_object_new_double(k->winner_s) : NULL);
  }
  json_object_object_add(o, "winner", w);
  json_object_object_add(o, "created", json_object_new_string(k->created));
  return o;
}

static void list_json(const char *path, const kt__key_row *keys, int n, FILE *out) {
  json_object *doc = json_object_new_object();
  json_object_object_add(doc, "database", json_object_new_string(path));
  json_object *arr = json_object_new_array_ext(n);
  for (int i = 0; i < n; i++) json_object_array_add(arr, list_entry_json(&keys[i]));
  json_object_object_add(doc, "keys", arr);
  fprintf(out, "%s\n",
          json_object_to_json_string_ext(
              doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(doc);
}

static void list_table(const char *path, const kt__key_row *keys, int n, FILE *out) {
  char t[32];
  fprintf(out, "# %s: %d stored tuning%s\n", path, n, n == 1 ? "" : "s");
  if (n == 0) return;
  fprintf(out, "%-20s %-28s %-24s %9s %-12s %s\n", "KERNEL", "DEVICE", "SIZES", "VALID/ALL", "TIME", "WINNER");
  for (int i = 0; i < n; i++) {
    const kt__key_row *k = &keys[i];
    char dev[300], counts[48];
    snprintf(dev, sizeof dev, "%s (%s)", k->device, k->backend);
    snprintf(counts, sizeof counts, "%ld/%ld", k->nok, k->nresults);
    fprintf(out, "%-20s %-28s %-24s %9s %-12s %s\n", k->kernel, dev, *k->sizes ? k->sizes : "-", counts,
            k->winner_config ? fmt_time(k->winner_s, t) : "-", k->winner_config ? k->winner_config : "(no winner yet)");
  }
}

int kt__cache_list(const kt_options *o, const kt_cache_filter *f, int json, FILE *out, kt__errbuf *eb) {
  kt__store *s;
  kt__key_row *keys = NULL;
  int n = 0;
  char path[4096];
  KT__FORWARD(kt__cache_path(o, path, sizeof path, eb));
  int rc = open_db(o, false, &s, eb);
  if (rc == KT_OK && s) {
    pthread_mutex_lock(&s->mu);
    rc = kt__store_select(s, f, &keys, &n, eb);
    pthread_mutex_unlock(&s->mu);
    kt__store_close(s);
  }
  if (rc == KT_OK) {
    if (json) list_json(path, keys, n, out);
    else list_table(path, keys, n, out);
  }
  kt__key_rows_free(keys, n);
  return rc;
}

/* ---- each: the keys with their results, for reports ---- */

static int each_key(kt__store *s, const kt__key_row *k,
                    int (*fn)(void *ud, const kt__cache_key *k, const kt__result_row *rows, int n), void *ud,
                    kt__errbuf *eb) {
  kt__result_row *rows;
  int n;
  KT__FORWARD(kt__store_results_of(s, k->id, &rows, &n, eb));
  kt__cache_key ck = {k->kernel, k->backend,     k->device,        k->arch,
                      k->sizes,  k->source_hash, k->winner_config, k->winner_s};
  int rc = fn(ud, &ck, rows, n);
  kt__result_rows_free(rows, n);
  return rc;
}

int kt__cache_each(const kt_options *o, const kt_cache_filter *f,
                   int (*fn)(void *ud, const kt__cache_key *k, const kt__result_row *rows, int n), void *ud,
                   kt__errbuf *eb) {
  char path[4096];
  KT__FORWARD(kt__cache_path(o, path, sizeof path, eb));
  kt__store *s;
  KT__FORWARD(open_db(o, false, &s, eb));
  KT__RETURN_IF(!s, eb, KT_NOTFOUND,
                "no results database at %s: tune a kernel first (ktune tune FILE), or name the "
                "database with %s",
                path, o->labels.db ? o->labels.db : "kt_options.db_path");
  kt__key_row *keys = NULL;
  int n = 0;
  pthread_mutex_lock(&s->mu);
  int rc = kt__store_select(s, f, &keys, &n, eb);
  for (int i = 0; rc == KT_OK && i < n; i++) rc = each_key(s, &keys[i], fn, ud, eb);
  pthread_mutex_unlock(&s->mu);
  kt__store_close(s);
  kt__key_rows_free(keys, n);
  return rc;
}

/* ---- show: table ---- */

/* Valid results first, fastest first; then failures by status and config. */
static int by_speed(const void *pa, const void *pb) {
  const kt__record *a = &((const kt__result_row *)pa)->rec, *b = &((const kt__result_row *)pb)->rec;
  bool oka = a->status == KT__ST_OK && !isnan(a->stats.median);
  bool okb = b->status == KT__ST_OK && !isnan(b->stats.median);
  if (oka != okb) return oka ? -1 : 1;
  if (oka && a->stats.median != b->stats.median) return a->stats.median < b->stats.median ? -1 : 1;
  if (a->status != b->status) return (int)a->status - (int)b->status;
  return strcmp(a->config, b->config);
}

static void show_key_header(const kt__key_row *k, FILE *out) {
  char t[32];
  fprintf(out, "%s on %s (%s, %s, %.1f GiB), %s\n", k->kernel, k->device, k->backend, k->arch,
          (double)k->memory / (1024.0 * 1024 * 1024), *k->sizes ? k->sizes : "no sizes");
  fprintf(out, "  source sha256 %s; driver %s; toolchain %s; method %s\n", k->source_hash, k->driver_version,
          k->toolchain_version, k->method_version);
  fprintf(out, "  %ld results (%ld valid), first stored %s; winner: %s%s%s\n", k->nresults, k->nok, k->created,
          k->winner_config ? k->winner_config : "none yet", k->winner_config ? ", " : "",
          k->winner_config ? fmt_time(k->winner_s, t) : "");
}

/* One line of a failure message, at most 100 characters: the first that
 * says "error" (compiler logs open with context), else the first. The whole
 * message is in `show --format json`. */
static void first_line(const char *msg, char *buf, size_t len) {
  const char *start = msg ? msg : "";
  const char *err = strstr(start, "error");
  if (err) {
    while (err > start && err[-1] != '\n') err--;
    start = err;
  }
  size_t n = strcspn(start, "\n");
  if (n >= len) n = len - 1;
  memcpy(buf, start, n);
  buf[n] = 0;
}

static void show_result_line(const kt__key_row *k, const kt__result_row *row, FILE *out) {
  const kt__record *r = &row->rec;
  char med[32], min[32], sd[32], comp[32], msg[101];
  bool win = k->winner_config && strcmp(k->winner_config, r->config) == 0;
  /* A failed configuration has no timing, whatever the statistics hold. */
  bool timed = r->status == KT__ST_OK || r->stats.nsamples > 0;
  first_line(r->message, msg, sizeof msg);
  fprintf(out, "  %c %-40s %-11s %11s %11s %11s %5d %10s  %s\n", win ? '*' : ' ', r->config, kt__status_name(r->status),
          timed ? fmt_time(r->stats.median, med) : "-", timed ? fmt_time(r->stats.min, min) : "-",
          timed ? fmt_time(r->stats.stddev, sd) : "-", r->stats.nsamples, fmt_time(r->compile_s, comp), msg);
}

static int show_table_key(kt__store *s, const kt__key_row *k, FILE *out, kt__errbuf *eb) {
  kt__result_row *rows;
  int n;
  KT__FORWARD(kt__store_results_of(s, k->id, &rows, &n, eb));
  qsort(rows, (size_t)n, sizeof *rows, by_speed);
  show_key_header(k, out);
  fprintf(out, "    %-40s %-11s %11s %11s %11s %5s %10s  %s\n", "CONFIG", "STATUS", "MEDIAN", "MIN", "STDDEV", "N",
          "COMPILE", "MESSAGE");
  for (int i = 0; i < n; i++) show_result_line(k, &rows[i], out);
  kt__result_rows_free(rows, n);
  return KT_OK;
}

static int show_table(kt__store *s, const kt__key_row *keys, int n, FILE *out, kt__errbuf *eb) {
  for (int i = 0; i < n; i++) {
    if (i) fputc('\n', out);
    KT__FORWARD(show_table_key(s, &keys[i], out, eb));
  }
  return KT_OK;
}

/* ---- show: the winner as #defines or -D flags ---- */

/* Keys with a winner among the matches; when they all describe the same
 * tuning (kernel, device, sizes) and differ only in source or toolchain
 * versions, the most recent winner is the one meant. */
static int pick_winner(const kt__key_row *keys, int n, const kt__key_row **pick, kt__errbuf *eb) {
  const kt__key_row *best = NULL;
  int nwin = 0;
  bool same = true;
  for (int i = 0; i < n; i++) {
    const kt__key_row *k = &keys[i];
    if (!k->winner_config) continue;
    nwin++;
    if (best && (strcmp(best->kernel, k->kernel) || strcmp(best->device, k->device) ||
                 strcmp(best->backend, k->backend) || strcmp(best->sizes, k->sizes)))
      same = false;
    if (!best || strcmp(k->winner_ts, best->winner_ts) > 0) best = k;
  }
  KT__RETURN_IF(nwin == 0, eb, KT_NOTFOUND, "%d stored tuning%s match, but none has a winner yet (tuning unfinished?)",
                n, n == 1 ? "" : "s");
  if (!same) {
    kt__sbuf list = {0};
    for (int i = 0; i < n && list.len < 4000; i++)
      if (keys[i].winner_config)
        kt__sbuf_printf(&list, "\n  %s on %s (%s) %s", keys[i].kernel, keys[i].device, keys[i].backend,
                        *keys[i].sizes ? keys[i].sizes : "(no sizes)");
    int rc = kt__err(eb, KT_INVALID, "%d stored winners match; choose one with the kernel, device or sizes:%s", nwin,
                     list.s);
    kt__sbuf_free(&list);
    return rc;
  }
  *pick = best;
  return KT_OK;
}

/* "KERNEL_NAME" upper-cased, other characters as '_', for an include guard. */
static void guard_name(const char *kernel, char *buf, size_t len) {
  size_t i = 0;
  for (const char *p = kernel; *p && i + 1 < len; p++, i++) {
    char c = *p;
    buf[i] = (c >= 'a' && c <= 'z')                               ? (char)(c - 'a' + 'A')
             : ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) ? c
                                                                  : '_';
  }
  buf[i] = 0;
}

/* Calls FN for each "NAME=VALUE" item of CONFIG. */
static void each_setting(const char *config, void (*fn)(void *ud, const kt__config_item *it), void *ud) {
  kt__config_item it;
  for (const char *p = config; kt__config_next(&p, &it);)
    if (it.value) fn(ud, &it);
}

static void print_define(void *ud, const kt__config_item *it) {
  fprintf((FILE *)ud, "#define %.*s %.*s\n", (int)it->name_len, it->text, (int)it->value_len, it->value);
}

static void show_defines(const char *path, const kt__key_row *k, FILE *out) {
  char guard[200], t[32];
  guard_name(k->kernel, guard, sizeof guard);
  fprintf(out,
          "/* Generated by ktune %s from %s.\n"
          " * Kernel %s on %s (%s, %s), %s: %s per launch.\n"
          " * Source sha256 %s, tuned %s. */\n",
          KTUNE_VERSION_STRING, path, k->kernel, k->device, k->backend, k->arch, *k->sizes ? k->sizes : "no sizes",
          fmt_time(k->winner_s, t), k->source_hash, k->winner_ts);
  fprintf(out, "#ifndef KTUNE_%s_CONFIG_H\n#define KTUNE_%s_CONFIG_H\n", guard, guard);
  each_setting(k->winner_config, print_define, out);
  fprintf(out, "#endif\n");
}

static void dflag_to(void *ud, const kt__config_item *it) {
  struct {
    FILE *out;
    int first;
  } *a = ud;
  fprintf(a->out, "%s-D%.*s", a->first ? "" : " ", (int)it->len, it->text);
  a->first = 0;
}

static void show_dflags(const kt__key_row *k, FILE *out) {
  struct {
    FILE *out;
    int first;
  } a = {out, 1};
  each_setting(k->winner_config, dflag_to, &a);
  fputc('\n', out);
}

static int show_selected(kt__store *s, const char *format, const kt_cache_filter *f, const kt__key_row *keys, int n,
                         FILE *out, kt__errbuf *eb) {
  if (strcmp(format, "table") == 0) return show_table(s, keys, n, out, eb);
  if (strcmp(format, "csv") == 0) return kt__export_csv_held(s, f, out, eb); /* the caller holds s->mu */
  const kt__key_row *k = NULL;
  KT__FORWARD(pick_winner(keys, n, &k, eb));
  if (strcmp(format, "defines") == 0) show_defines(s->path, k, out);
  else show_dflags(k, out);
  return KT_OK;
}

int kt__cache_show(const kt_options *o, const kt_cache_filter *f, const char *format, FILE *out, kt__errbuf *eb) {
  static const char *const formats[] = {"table", "defines", "dflags", "json", "csv", NULL};
  kt__store *s = NULL;
  if (!format) format = "table";
  KT__RETURN_IF(!valid_format(format, formats), eb, KT_INVALID,
                "unknown show format '%s' (table, defines, dflags, json or csv)", format);
  if (strcmp(format, "json") == 0) return kt__cache_export(o, f, "json", out, eb);
  int rc = open_db(o, false, &s, eb);
  if (rc == KT_OK && !s) {
    char path[4096];
    kt__errbuf ignored;
    if (kt__cache_path(o, path, sizeof path, &ignored) != KT_OK) snprintf(path, sizeof path, "(default)");
    rc = kt__err(eb, KT_NOTFOUND, "no results database at %s (nothing tuned yet)", path);
  }
  if (rc == KT_OK) {
    kt__key_row *keys;
    int n;
    pthread_mutex_lock(&s->mu);
    rc = kt__store_select_some(s, f, &keys, &n, eb);
    if (rc == KT_OK) {
      rc = show_selected(s, format, f, keys, n, out, eb);
      kt__key_rows_free(keys, n);
    }
    pthread_mutex_unlock(&s->mu);
  }
  kt__store_close(s);
  return rc;
}

/* ---- export, import, clear ---- */

/* An empty export document for a database that does not exist yet. */
static int export_missing(const kt_options *o, const kt_cache_filter *f, const char *format, FILE *out,
                          kt__errbuf *eb) {
  KT__RETURN_IF(strcmp(format, "t4") == 0, eb, KT_NOTFOUND, "no results database at %s (nothing tuned yet)",
                o->db_path ? o->db_path : "the default path");
  kt__store *mem;
  KT__FORWARD(kt__store_open(":memory:", o->labels.db, &mem, eb));
  int rc = strcmp(format, "csv") == 0 ? kt__export_csv(mem, f, out, eb) : kt__export_json(mem, f, out, eb);
  kt__store_close(mem);
  return rc;
}

int kt__cache_export(const kt_options *o, const kt_cache_filter *f, const char *format, FILE *out, kt__errbuf *eb) {
  static const char *const formats[] = {"json", "t4", "csv", NULL};
  kt__store *s = NULL;
  if (!format) format = "json";
  KT__RETURN_IF(!valid_format(format, formats), eb, KT_INVALID, "unknown export format '%s' (json, t4 or csv)", format);
  int rc = open_db(o, false, &s, eb);
  if (rc == KT_OK && !s) rc = export_missing(o, f, format, out, eb);
  else if (rc == KT_OK && strcmp(format, "t4") == 0) rc = kt__export_t4(s, f, out, eb);
  else if (rc == KT_OK && strcmp(format, "csv") == 0) rc = kt__export_csv(s, f, out, eb);
  else if (rc == KT_OK) rc = kt__export_json(s, f, out, eb);
  kt__store_close(s);
  return rc;
}

int kt__cache_import(const kt_options *o, const char *path, FILE *out, kt__errbuf *eb) {
  kt__store *s = NULL;
  long nkeys = 0, nresults = 0;
  json_object *doc = NULL;
  KT__RETURN_IF(!path, eb, KT_INVALID, "import: no file given");
  int rc = kt__import_load(path, &doc, eb);
  bool existed = rc == KT_OK && db_exists(o);
  if (rc == KT_OK) rc = open_db(o, true, &s, eb);
  if (rc == KT_OK) rc = kt__import_doc(s, path, doc, &nkeys, &nresults, eb);
  if (rc == KT_OK && out)
    fprintf(out, "imported %ld result%s under %ld key%s from %s into %s\n", nresults, nresults == 1 ? "" : "s", nkeys,
            nkeys == 1 ? "" : "s", path, kt__store_path(s));
  /* A malformed entry rolls the import back; a database that this import
   * created is then empty, and goes, so a failed import writes nothing. */
  if (rc != KT_OK && s && !existed) remove_db(kt__store_path(s));
  kt__store_close(s);
  json_object_put(doc);
  return rc;
}

typedef struct clear_args {
  const kt_cache_filter *f;
  long nkeys, nresults;
} clear_args;

/* Selects inside the write transaction, so a key stored meanwhile by another
 * process is either seen and removed or not touched. */
static int clear_body(kt__store *s, void *ud, kt__errbuf *eb) {
  clear_args *a = ud;
  kt__key_row *keys;
  int n;
  sqlite3_stmt *st;
  a->nkeys = a->nresults = 0;
  KT__FORWARD(kt__store_select_some(s, a->f, &keys, &n, eb));
  int rc = kt__store_prepare(s, "DELETE FROM keys WHERE id=?1", &st, "clearing", eb);
  for (int i = 0; i < n && rc == KT_OK; i++) {
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, keys[i].id);
    int sr = sqlite3_step(st);
    if (sr != SQLITE_DONE) rc = kt__store_fail(s, sr, "clearing", eb);
    a->nkeys++;
    a->nresults += keys[i].nresults;
  }
  sqlite3_finalize(st);
  kt__key_rows_free(keys, n);
  return rc;
}

int kt__cache_clear(const kt_options *o, const kt_cache_filter *f, FILE *out, kt__errbuf *eb) {
  kt__store *s = NULL;
  clear_args a = {f, 0, 0};
  int rc = open_db(o, false, &s, eb);
  if (rc == KT_OK && s) {
    pthread_mutex_lock(&s->mu);
    rc = kt__store_write(s, "clearing", clear_body, &a, eb);
    pthread_mutex_unlock(&s->mu);
  }
  if (rc == KT_OK && out)
    fprintf(out, "removed %ld tuning%s (%ld result%s)%s%s\n", a.nkeys, a.nkeys == 1 ? "" : "s", a.nresults,
            a.nresults == 1 ? "" : "s", s ? " from " : "", s ? kt__store_path(s) : "");
  kt__store_close(s);
  return rc;
}

/* Import of ktune's own export document (export.c). The whole file goes in
 * one write transaction: a malformed entry anywhere imports nothing. Of two
 * records of the same configuration under the same key the newer (by
 * timestamp) is kept, so importing the same file twice changes nothing; the
 * key's winner is then chosen on the merged results (decide_winner). */
#include "import.h"

#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../config.h"
#include "db.h"
#include "export.h"

/* ---- reading the file ---- */

static int read_all(const char *path, kt__sbuf *text, kt__errbuf *eb) {
  bool is_stdin = strcmp(path, "-") == 0;
  FILE *fp = is_stdin ? stdin : fopen(path, "rb");
  KT__RETURN_IF(!fp, eb, KT_INVALID, "%s: cannot open: %s", path, strerror(errno));
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, fp)) > 0) kt__sbuf_append(text, buf, n);
  bool failed = ferror(fp);
  if (!is_stdin) fclose(fp);
  KT__RETURN_IF(failed, eb, KT_INVALID, "%s: read error", path);
  if (!text->s) kt__sbuf_append(text, "", 0);
  return KT_OK;
}

static int parse(const char *path, const kt__sbuf *text, json_object **doc, kt__errbuf *eb) {
  json_tokener *tok = json_tokener_new();
  *doc = json_tokener_parse_ex(tok, text->s, (int)text->len);
  enum json_tokener_error jerr = json_tokener_get_error(tok);
  size_t at = json_tokener_get_parse_end(tok);
  json_tokener_free(tok);
  if (*doc && jerr == json_tokener_success) return KT_OK;
  json_object_put(*doc);
  *doc = NULL;
  if (jerr == json_tokener_continue) jerr = json_tokener_error_parse_eof;
  return kt__err(eb, KT_INVALID, "%s: not valid JSON (byte %zu): %s", path, at, json_tokener_error_desc(jerr));
}

/* The document is ours, in a version we read; a T4 file gets its own hint. */
static int check_header(const char *path, json_object *doc, kt__errbuf *eb) {
  json_object *fmt, *ver;
  KT__RETURN_IF(!json_object_is_type(doc, json_type_object), eb, KT_INVALID,
                "%s: not a ktune export (the document is not a JSON object)", path);
  if (!json_object_object_get_ex(doc, "format", &fmt)) {
    KT__RETURN_IF(json_object_object_get_ex(doc, "results", &fmt), eb, KT_INVALID,
                  "%s: this looks like a T4 results file; ktune imports only its own export "
                  "(the json format of the cache export)",
                  path);
    return kt__err(eb, KT_INVALID, "%s: not a ktune export (no \"format\" field)", path);
  }
  /* "format": null is a present field holding a NULL object. */
  KT__RETURN_IF(
      !json_object_is_type(fmt, json_type_string) || strcmp(json_object_get_string(fmt), KT__EXPORT_FORMAT) != 0, eb,
      KT_INVALID, "%s: not a ktune export (format %s, expected \"%s\")", path,
      fmt ? json_object_to_json_string(fmt) : "null", KT__EXPORT_FORMAT);
  KT__RETURN_IF(!json_object_object_get_ex(doc, "format_version", &ver) || json_object_get_int(ver) < 1 ||
                    json_object_get_int(ver) > KT__EXPORT_VERSION,
                eb, KT_INVALID, "%s: export format version %s is not one this ktune reads (1 to %d)", path,
                ver ? json_object_get_string(ver) : "(missing)", KT__EXPORT_VERSION);
  return KT_OK;
}

/* ---- typed field access with a path for messages ---- */

typedef struct importer {
  kt__store *s;
  const char *path;
  json_object *doc;
  long nkeys, nresults;
  char where[96]; /* "keys[3].results[7]", for messages */
} importer;

static int field(importer *im, json_object *o, const char *name, json_type type, bool nullable, json_object **out,
                 kt__errbuf *eb) {
  static const char *const tnames[] = {"null", "boolean", "number", "number", "object", "array", "string"};
  *out = NULL;
  bool present = json_object_object_get_ex(o, name, out);
  if (present && *out == NULL && nullable) return KT_OK;
  bool ok = present && *out &&
            (json_object_is_type(*out, type) || (type == json_type_double && json_object_is_type(*out, json_type_int)));
  KT__RETURN_IF(!ok, eb, KT_INVALID, "%s: %s: \"%s\" %s (expected %s)", im->path, im->where, name,
                present ? "has the wrong type" : "is missing", tnames[type]);
  return KT_OK;
}

static int get_str(importer *im, json_object *o, const char *name, bool nullable, const char **v, kt__errbuf *eb) {
  json_object *j;
  KT__FORWARD(field(im, o, name, json_type_string, nullable, &j, eb));
  *v = j ? json_object_get_string(j) : NULL;
  return KT_OK;
}

static int get_int(importer *im, json_object *o, const char *name, int64_t *v, kt__errbuf *eb) {
  json_object *j;
  KT__FORWARD(field(im, o, name, json_type_int, false, &j, eb));
  *v = json_object_get_int64(j);
  return KT_OK;
}

/* A real, or null (NaN), or "inf"/"-inf" as export writes infinities. */
static int get_real(importer *im, json_object *o, const char *name, double *v, kt__errbuf *eb) {
  json_object *j = NULL;
  if (json_object_object_get_ex(o, name, &j) && j && json_object_is_type(j, json_type_string)) {
    const char *t = json_object_get_string(j);
    KT__RETURN_IF(strcmp(t, "inf") != 0 && strcmp(t, "-inf") != 0, eb, KT_INVALID,
                  "%s: %s: \"%s\" is \"%s\", not a number", im->path, im->where, name, t);
    *v = t[0] == '-' ? -INFINITY : INFINITY;
    return KT_OK;
  }
  KT__FORWARD(field(im, o, name, json_type_double, true, &j, eb));
  *v = j ? json_object_get_double(j) : NAN;
  return KT_OK;
}

static void bind_real(sqlite3_stmt *st, int i, double v) {
  if (isnan(v)) sqlite3_bind_null(st, i);
  else sqlite3_bind_double(st, i, v);
}

static int step_done(importer *im, sqlite3_stmt *st, const char *what, kt__errbuf *eb) {
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? KT_OK : kt__store_fail(im->s, rc, what, eb);
}

/* ---- keys, results, winners ---- */

static const char *const key_text_fields[] = {"source_hash", "kernel",         "backend",           "device",
                                              "arch",        "driver_version", "toolchain_version", "method_version",
                                              "sizes",       "created"};
enum { NKEYTEXT = sizeof key_text_fields / sizeof key_text_fields[0] };

/* Inserts the key unless present; its id in *ID. */
static int import_key(importer *im, json_object *jk, int64_t *id, kt__errbuf *eb) {
  const char *text[NKEYTEXT];
  int64_t memory;
  sqlite3_stmt *st;
  for (int i = 0; i < NKEYTEXT; i++) KT__FORWARD(get_str(im, jk, key_text_fields[i], false, &text[i], eb));
  KT__FORWARD(get_int(im, jk, "memory", &memory, eb));
  KT__RETURN_IF(!*text[1], eb, KT_INVALID, "%s: %s: empty kernel name", im->path, im->where);
  KT__FORWARD(kt__store_prepare(im->s,
                                "INSERT INTO keys(source_hash, kernel, backend, device, arch, "
                                "driver_version, toolchain_version, method_version, sizes, created, "
                                "memory) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) "
                                "ON CONFLICT DO NOTHING",
                                &st, "importing a key", eb));
  for (int i = 0; i < NKEYTEXT; i++) sqlite3_bind_text(st, i + 1, text[i], -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 11, memory);
  KT__FORWARD(step_done(im, st, "importing a key", eb));
  KT__FORWARD(kt__store_prepare(im->s,
                                "SELECT id FROM keys WHERE source_hash=?1 AND kernel=?2 AND "
                                "backend=?3 AND device=?4 AND arch=?5 AND driver_version=?6 AND "
                                "toolchain_version=?7 AND method_version=?8 AND sizes=?9 AND memory=?11",
                                &st, "importing a key", eb));
  for (int i = 0; i < NKEYTEXT - 1; i++) sqlite3_bind_text(st, i + 1, text[i], -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 11, memory);
  int rc = sqlite3_step(st);
  *id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? KT_OK : kt__store_fail(im->s, rc, "importing a key", eb);
}

static const char *const result_real_fields[] = {"median", "min", "max", "mean", "stddev", "compile_s"};
enum { NRESREAL = sizeof result_real_fields / sizeof result_real_fields[0] };

static bool is_identifier(const char *text, size_t len) {
  if (len == 0 || !(isalpha((unsigned char)text[0]) || text[0] == '_')) return false;
  for (size_t i = 1; i < len; i++)
    if (!(isalnum((unsigned char)text[i]) || text[i] == '_')) return false;
  return true;
}

/* A configuration as ktune stores one: NAME=integer items, each name once.
 * Anything else ("V=1 -include /etc/shadow") is no configuration ktune made,
 * and would be shown, exported and offered to kt_launch as one. */
static int get_config(importer *im, json_object *o, const char **config, kt__errbuf *eb) {
  KT__FORWARD(get_str(im, o, "config", false, config, eb));
  kt__config_item it, seen[KT__MAX_NAMES];
  int n = 0;
  int64_t v;
  for (const char *p = *config; kt__config_next(&p, &it);) {
    KT__RETURN_IF(!it.value || !is_identifier(it.text, it.name_len) || !kt__config_item_int(&it, &v), eb, KT_INVALID,
                  "%s: %s: config \"%s\": \"%.*s\" is no NAME=integer; this is no configuration ktune stored, so "
                  "nothing is imported",
                  im->path, im->where, *config, (int)it.len, it.text);
    for (int j = 0; j < n; j++)
      KT__RETURN_IF(seen[j].name_len == it.name_len && memcmp(seen[j].text, it.text, it.name_len) == 0, eb, KT_INVALID,
                    "%s: %s: config \"%s\" gives %.*s twice; nothing is imported", im->path, im->where, *config,
                    (int)it.name_len, it.text);
    KT__RETURN_IF(n == KT__MAX_NAMES, eb, KT_INVALID, "%s: %s: config \"%s\" has more than %d names", im->path,
                  im->where, *config, KT__MAX_NAMES);
    seen[n++] = it;
  }
  return KT_OK;
}

static int import_result(importer *im, int64_t key, json_object *jr, kt__errbuf *eb) {
  static const char *const sql =
      "INSERT INTO results(key_id, config, status, median, min, max, mean, stddev, compile_s, "
      "nsamples, reps, stopped_early, message, timestamp, cause) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) "
      "ON CONFLICT(key_id, config) DO UPDATE SET status=excluded.status, "
      "median=excluded.median, min=excluded.min, max=excluded.max, mean=excluded.mean, "
      "stddev=excluded.stddev, compile_s=excluded.compile_s, nsamples=excluded.nsamples, "
      "reps=excluded.reps, stopped_early=excluded.stopped_early, message=excluded.message, "
      "timestamp=excluded.timestamp, cause=excluded.cause WHERE excluded.timestamp > results.timestamp";
  const char *config, *status, *message, *ts, *cause;
  double reals[NRESREAL];
  int64_t nsamples, reps;
  json_object *early;
  sqlite3_stmt *st;
  KT__FORWARD(get_config(im, jr, &config, eb));
  KT__FORWARD(get_str(im, jr, "status", false, &status, eb));
  KT__RETURN_IF(kt__status_from_name(status) < 0, eb, KT_INVALID, "%s: %s: unknown status \"%s\"", im->path, im->where,
                status);
  for (int i = 0; i < NRESREAL; i++) KT__FORWARD(get_real(im, jr, result_real_fields[i], &reals[i], eb));
  KT__FORWARD(get_int(im, jr, "nsamples", &nsamples, eb));
  KT__FORWARD(get_int(im, jr, "reps", &reps, eb));
  KT__FORWARD(field(im, jr, "stopped_early", json_type_boolean, false, &early, eb));
  KT__FORWARD(get_str(im, jr, "message", true, &message, eb));
  KT__FORWARD(get_str(im, jr, "timestamp", false, &ts, eb));
  json_object *jc;
  cause = NULL; /* absent before schema 2 */
  if (json_object_object_get_ex(jr, "cause", &jc)) KT__FORWARD(get_str(im, jr, "cause", true, &cause, eb));
  KT__FORWARD(kt__store_prepare(im->s, sql, &st, "importing a result", eb));
  sqlite3_bind_int64(st, 1, key);
  sqlite3_bind_text(st, 2, config, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 3, status, -1, SQLITE_TRANSIENT);
  for (int i = 0; i < NRESREAL; i++) bind_real(st, 4 + i, reals[i]);
  sqlite3_bind_int64(st, 10, nsamples);
  sqlite3_bind_int64(st, 11, reps);
  sqlite3_bind_int(st, 12, json_object_get_boolean(early));
  if (message) sqlite3_bind_text(st, 13, message, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 14, ts, -1, SQLITE_TRANSIENT);
  if (cause) sqlite3_bind_text(st, 15, cause, -1, SQLITE_TRANSIENT);
  KT__FORWARD(step_done(im, st, "importing a result", eb));
  im->nresults++;
  return KT_OK;
}

static int import_winner(importer *im, int64_t key, json_object *jw, kt__errbuf *eb) {
  const char *config, *ts;
  double seconds;
  sqlite3_stmt *st;
  KT__FORWARD(get_config(im, jw, &config, eb));
  KT__FORWARD(get_real(im, jw, "seconds", &seconds, eb));
  KT__FORWARD(get_str(im, jw, "timestamp", false, &ts, eb));
  KT__FORWARD(kt__store_prepare(im->s,
                                "INSERT INTO winners(key_id, config, seconds, timestamp) "
                                "VALUES(?1, ?2, ?3, ?4) ON CONFLICT(key_id, objective) DO UPDATE SET "
                                "config=excluded.config, seconds=excluded.seconds, "
                                "timestamp=excluded.timestamp "
                                "WHERE excluded.timestamp > winners.timestamp",
                                &st, "importing a winner", eb));
  sqlite3_bind_int64(st, 1, key);
  sqlite3_bind_text(st, 2, config, -1, SQLITE_TRANSIENT);
  bind_real(st, 3, seconds);
  sqlite3_bind_text(st, 4, ts, -1, SQLITE_TRANSIENT);
  return step_done(im, st, "importing a winner", eb);
}

/* The stored winner's configuration of KEY into *CONFIG (malloc'ed), NULL
 * when it has none. */
static int current_winner(importer *im, int64_t key, char **config, kt__errbuf *eb) {
  sqlite3_stmt *st;
  *config = NULL;
  KT__FORWARD(kt__store_prepare(im->s, "SELECT config FROM winners WHERE key_id=?1 AND objective='time'", &st,
                                "reading a winner", eb));
  sqlite3_bind_int64(st, 1, key);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) *config = kt__xstrdup((const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? KT_OK : kt__store_fail(im->s, rc, "reading a winner", eb);
}

/* With results of a key from two places (two hosts, two MPI ranks), the
 * winner is decided on the merged results: of the winner stored before
 * (BEFORE) and the one imported (IMPORTED), the configuration
 * whose merged result is valid and fastest, with that time. Each side's
 * winner came from its own tuning (its pins, its finalist rounds), so only
 * those two are candidates; a candidate whose newer record failed is out.
 * When neither is valid the newer winner stays. */
static int decide_winner(importer *im, int64_t key, const char *before, const char *imported, kt__errbuf *eb) {
  sqlite3_stmt *st;
  KT__FORWARD(
      kt__store_prepare(im->s,
                        "UPDATE winners SET (config, seconds) = (SELECT r.config, r.median FROM results r "
                        "WHERE r.key_id=?1 AND r.status='ok' AND r.median IS NOT NULL "
                        "AND (r.config=?2 OR r.config=?3) ORDER BY r.median, r.config LIMIT 1) "
                        "WHERE key_id=?1 AND objective='time' AND EXISTS (SELECT 1 FROM results r WHERE r.key_id=?1 "
                        "AND r.status='ok' AND r.median IS NOT NULL "
                        "AND (r.config=?2 OR r.config=?3))",
                        &st, "choosing the winner", eb));
  sqlite3_bind_int64(st, 1, key);
  if (before) sqlite3_bind_text(st, 2, before, -1, SQLITE_TRANSIENT);
  if (imported) sqlite3_bind_text(st, 3, imported, -1, SQLITE_TRANSIENT);
  return step_done(im, st, "choosing the winner", eb);
}

static int import_one_key(importer *im, size_t i, json_object *jk, kt__errbuf *eb) {
  int64_t id;
  json_object *results, *winner;
  snprintf(im->where, sizeof im->where, "keys[%zu]", i);
  KT__RETURN_IF(!json_object_is_type(jk, json_type_object), eb, KT_INVALID, "%s: %s is not an object", im->path,
                im->where);
  KT__FORWARD(import_key(im, jk, &id, eb));
  KT__FORWARD(field(im, jk, "results", json_type_array, false, &results, eb));
  KT__FORWARD(field(im, jk, "winner", json_type_object, true, &winner, eb));
  char *before = NULL;
  int err = current_winner(im, id, &before, eb);
  if (err == KT_OK && winner) err = import_winner(im, id, winner, eb);
  size_t n = json_object_array_length(results);
  for (size_t j = 0; err == KT_OK && j < n; j++) {
    json_object *jr = json_object_array_get_idx(results, j);
    snprintf(im->where, sizeof im->where, "keys[%zu].results[%zu]", i, j);
    if (!json_object_is_type(jr, json_type_object))
      err = kt__err(eb, KT_INVALID, "%s: %s is not an object", im->path, im->where);
    else err = import_result(im, id, jr, eb);
  }
  const char *imported = NULL;
  json_object *jc;
  if (winner && json_object_object_get_ex(winner, "config", &jc)) imported = json_object_get_string(jc);
  if (err == KT_OK) err = decide_winner(im, id, before, imported, eb);
  free(before);
  if (err == KT_OK) im->nkeys++;
  return err;
}

static int import_body(kt__store *s, void *ud, kt__errbuf *eb) {
  importer *im = ud;
  json_object *keys;
  im->nkeys = im->nresults = 0; /* the transaction may be retried */
  snprintf(im->where, sizeof im->where, "the document");
  KT__FORWARD(field(im, im->doc, "keys", json_type_array, false, &keys, eb));
  size_t n = json_object_array_length(keys);
  for (size_t i = 0; i < n; i++) KT__FORWARD(import_one_key(im, i, json_object_array_get_idx(keys, i), eb));
  return KT_OK;
}

int kt__import_load(const char *path, struct json_object **doc, kt__errbuf *eb) {
  kt__sbuf text = {0};
  *doc = NULL;
  int err = read_all(path, &text, eb);
  if (err == KT_OK) err = parse(path, &text, doc, eb);
  kt__sbuf_free(&text);
  if (err == KT_OK) err = check_header(path, *doc, eb);
  if (err != KT_OK) {
    json_object_put(*doc);
    *doc = NULL;
  }
  return err;
}

int kt__import_doc(kt__store *s, const char *path, struct json_object *doc, long *nkeys, long *nresults,
                   kt__errbuf *eb) {
  importer im = {.s = s, .path = path, .doc = doc};
  pthread_mutex_lock(&s->mu);
  int err = kt__store_write(s, "importing", import_body, &im, eb);
  pthread_mutex_unlock(&s->mu);
  *nkeys = im.nkeys;
  *nresults = im.nresults;
  return err;
}

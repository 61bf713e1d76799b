/* The key selection the cache commands share (select.h). */
#include "select.h"

#include "../config.h"

#include <stdlib.h>
#include <string.h>

/* Whether ITEM, as written, is among the items of LIST. */
static bool has_item(const char *list, const kt__config_item *item) {
  kt__config_item it;
  for (const char *p = list; kt__config_next(&p, &it);)
    if (it.len == item->len && memcmp(it.text, item->text, it.len) == 0) return true;
  return false;
}

bool kt__sizes_match(const char *have, const char *want) {
  if (!want) return true;
  kt__config_item it;
  for (const char *p = want; kt__config_next(&p, &it);)
    if (!has_item(have, &it)) return false;
  return true;
}

static bool device_matches(const kt__key_row *r, const char *device) {
  if (!device || !*device) return true;
  return strcasecmp(r->backend, device) == 0 || strcasestr(r->device, device) != NULL;
}

static void read_key_row(sqlite3_stmt *st, kt__key_row *r) {
  char **text[] = {&r->source_hash,       &r->kernel,         &r->backend, &r->device, &r->arch, &r->driver_version,
                   &r->toolchain_version, &r->method_version, &r->sizes,   &r->created};
  memset(r, 0, sizeof *r);
  r->id = sqlite3_column_int64(st, 0);
  for (int i = 0; i < 10; i++) *text[i] = kt__xstrdup(kt__col_text(st, 1 + i));
  r->memory = sqlite3_column_int64(st, 11);
  r->nresults = (long)sqlite3_column_int64(st, 12);
  r->nok = (long)sqlite3_column_int64(st, 13);
  if (sqlite3_column_type(st, 14) != SQLITE_NULL) {
    r->winner_config = kt__xstrdup(kt__col_text(st, 14));
    r->winner_s = kt__col_real(st, 15);
    r->winner_ts = kt__xstrdup(kt__col_text(st, 16));
  }
}

static void free_key_row(kt__key_row *r) {
  char *text[] = {r->source_hash,       r->kernel,         r->backend, r->device,  r->arch,          r->driver_version,
                  r->toolchain_version, r->method_version, r->sizes,   r->created, r->winner_config, r->winner_ts};
  for (size_t i = 0; i < sizeof text / sizeof text[0]; i++) free(text[i]);
}

void kt__key_rows_free(kt__key_row *rows, int n) {
  for (int i = 0; i < n; i++) free_key_row(&rows[i]);
  free(rows);
}

/* A sizes filter is a key's NAME=VALUE items; anything else ("1000",
 * "N=") would match nothing or everything, so it is refused. */
static int check_sizes_filter(const char *sizes, kt__errbuf *eb) {
  kt__config_item it;
  for (const char *p = sizes; p && kt__config_next(&p, &it);)
    KT__RETURN_IF(!it.value || it.name_len == 0 || it.value_len == 0, eb, KT_INVALID,
                  "key filter \"%s\": \"%.*s\" is no NAME=VALUE (a key is written as `ktune cache list` shows it: "
                  "\"N=4096 M=512\")",
                  sizes, (int)it.len, it.text);
  return KT_OK;
}

int kt__store_select(kt__store *s, const kt_cache_filter *f, kt__key_row **rows, int *n, kt__errbuf *eb) {
  static const char *const sql = "SELECT k.id, k.source_hash, k.kernel, k.backend, k.device, k.arch, k.driver_version, "
                                 "k.toolchain_version, k.method_version, k.sizes, k.created, k.memory, "
                                 "(SELECT count(*) FROM results r WHERE r.key_id=k.id), "
                                 "(SELECT count(*) FROM results r WHERE r.key_id=k.id AND r.status='ok'), "
                                 "w.config, w.seconds, w.timestamp "
                                 "FROM keys k LEFT JOIN winners w ON w.key_id=k.id AND w.objective='time' "
                                 "WHERE ?1 IS NULL OR k.kernel=?1 ORDER BY k.id";
  sqlite3_stmt *st;
  int rc, cap = 0;
  *rows = NULL;
  *n = 0;
  if (f) KT__FORWARD(check_sizes_filter(f->sizes, eb));
  KT__FORWARD(kt__store_prepare(s, sql, &st, "listing keys", eb));
  if (f && f->kernel && *f->kernel) sqlite3_bind_text(st, 1, f->kernel, -1, SQLITE_TRANSIENT);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) *rows = kt__xreallocarray(*rows, (size_t)(cap = cap ? 2 * cap : 16), sizeof **rows);
    kt__key_row *r = &(*rows)[*n];
    read_key_row(st, r);
    if (f && (!device_matches(r, f->device) || !kt__sizes_match(r->sizes, f->sizes))) free_key_row(r);
    else (*n)++;
  }
  sqlite3_finalize(st);
  if (rc == SQLITE_DONE) return KT_OK;
  kt__key_rows_free(*rows, *n);
  *rows = NULL;
  *n = 0;
  return kt__store_fail(s, rc, "listing keys", eb);
}

static bool filter_names_something(const kt_cache_filter *f) {
  return f && ((f->kernel && *f->kernel) || (f->device && *f->device) || (f->sizes && *f->sizes));
}

/* What the filter asked for, in the message that says nothing matched. */
static int no_match(const kt__store *s, const kt_cache_filter *f, kt__errbuf *eb) {
  kt__sbuf want = {0};
  if (f && f->kernel) kt__sbuf_printf(&want, " kernel %s", f->kernel);
  if (f && f->device) kt__sbuf_printf(&want, " device %s", f->device);
  if (f && f->sizes) kt__sbuf_printf(&want, " sizes \"%s\"", f->sizes);
  int rc = kt__err(eb, KT_NOTFOUND, "%s: no stored tuning matches%s; `ktune cache list --db %s` shows what it holds",
                   s->path, want.s ? want.s : "", s->path);
  kt__sbuf_free(&want);
  return rc;
}

int kt__store_select_some(kt__store *s, const kt_cache_filter *f, kt__key_row **rows, int *n, kt__errbuf *eb) {
  KT__FORWARD(kt__store_select(s, f, rows, n, eb));
  if (*n > 0 || !filter_names_something(f)) return KT_OK;
  kt__key_rows_free(*rows, *n);
  *rows = NULL;
  return no_match(s, f, eb);
}

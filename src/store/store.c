/* The results database's records API (store.h): opening (path,
 * directories, schema), and the per-key record and winner operations the
 * tuner and the runtime use. The connection and SQL plumbing live in db.c,
 * the schema in schema.c, the key selection of the cache commands in
 * select.c, the commands themselves in cache.c, export.c and import.c. */
#include "store.h"

#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../config.h"
#include "../envvars.h"
#include "db.h"
#include "schema.h"
#include "trust.h"

/* ---- paths ---- */

static int home_dir(const char **home) {
  const char *h = kt__envvar_text(KT__ENV_HOME);
  if (!h || !*h) {
    const struct passwd *pw = getpwuid(getuid());
    h = pw ? pw->pw_dir : NULL;
  }
  *home = h;
  return h && *h ? KT_OK : KT_INVALID;
}

int kt__store_default_path(char *buf, size_t len, const char *label, kt__errbuf *eb) {
  const char *env = kt__envvar_text(KT__ENV_DB);
  const char *xdg = kt__envvar_text(KT__ENV_XDG_CACHE_HOME);
  int n;
  if (env && *env) {
    n = snprintf(buf, len, "%s", env);
  } else if (xdg && xdg[0] == '/') { /* the XDG spec says to ignore relative paths */
    n = snprintf(buf, len, "%s/ktune/results.db", xdg);
  } else {
    const char *home;
    KT__RETURN_IF(home_dir(&home) != KT_OK, eb, KT_INVALID,
                  "no home directory for the results database: set KTUNE_DB or %s", label);
    n = snprintf(buf, len, "%s/.cache/ktune/results.db", home);
  }
  KT__RETURN_IF(n < 0 || (size_t)n >= len, eb, KT_INVALID, "results database path is too long");
  return KT_OK;
}

/* mkdir -p of PATH's directory; directories we create are private (0700):
 * the database reveals what a user tunes and on which machine. */
static int make_parent_dirs(const char *path, kt__errbuf *eb) {
  char *dir = kt__xstrdup(path);
  char *slash = strrchr(dir, '/');
  int rc = KT_OK;
  if (slash && slash != dir) {
    *slash = 0;
    for (char *p = dir + 1; rc == KT_OK; p++) {
      bool end = *p == 0;
      if (*p != '/' && !end) continue;
      *p = 0;
      if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        rc = kt__err(eb, KT_STORE, "cannot create directory %s for the results database: %s", dir, strerror(errno));
      if (end) break;
      *p = '/';
    }
  }
  free(dir);
  return rc;
}

/* ---- open and close ---- */

/* An open that created the file and then failed (a full disk fails the
 * schema's first write) would leave an empty database behind: the file and
 * its WAL companions are this open's own, and go. */
static void remove_created(const char *path) {
  static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
  for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
    char p[4200];
    if (snprintf(p, sizeof p, "%s%s", path, suffixes[i]) < (int)sizeof p) (void)unlink(p); /* most do not exist */
  }
}

int kt__store_open_ex(const char *path, const char *label, int flags, kt__store **out, kt__errbuf *eb) {
  char defpath[4096];
  *out = NULL;
  if (!path) {
    KT__FORWARD(kt__store_default_path(defpath, sizeof defpath, label, eb));
    path = defpath;
  }
  KT__RETURN_IF(!*path, eb, KT_INVALID, "empty results database path");
  bool memory = kt__db_is_memory(path);
  if (!memory && (flags & KT__STORE_NOCREATE)) {
    struct stat sb;
    KT__RETURN_IF(stat(path, &sb) != 0, eb, KT_NOTFOUND, "no results database at %s", path);
  }
  if (!memory) KT__FORWARD(make_parent_dirs(path, eb));
  if (!memory) KT__FORWARD(kt__store_check_trusted(path, label, eb));

  struct stat before;
  bool created = !memory && stat(path, &before) != 0;
  /* Looking needs no write: a database this user cannot write (a chmod 444
   * file, a folder of another's) is still listed and shown. */
  bool read_only = !memory && (flags & KT__STORE_NOCREATE) && !kt__store_writable(path);
  kt__store *s;
  int err = kt__db_open(path, label, read_only, &s, eb);
  if (err == KT_OK && (err = kt__schema_prepare(s, eb)) != KT_OK) kt__db_close(s);
  if (err != KT_OK) {
    if (created) remove_created(path);
    return err;
  }
  *out = s;
  return KT_OK;
}

int kt__store_open(const char *path, const char *label, kt__store **out, kt__errbuf *eb) {
  return kt__store_open_ex(path, label, 0, out, eb);
}

void kt__store_close(kt__store *s) { kt__db_close(s); }

const char *kt__store_path(const kt__store *s) { return s->path; }

/* ---- keys ---- */

/* The columns of a key, in the order bind_key binds them (?1 .. ?10). */
#define KEY_MATCH                                                                        \
  "source_hash=?1 AND kernel=?2 AND backend=?3 AND device=?4 AND arch=?5 AND memory=?6 " \
  "AND driver_version=?7 AND toolchain_version=?8 AND method_version=?9"

static const char *or_empty(const char *s) { return s ? s : ""; }

static int check_key(const kt__store_key *k, kt__errbuf *eb) {
  KT__RETURN_IF(!k || !k->device || !k->kernel || !*k->kernel || !k->source_hash, eb, KT_INVALID,
                "results key without kernel, source hash or device");
  return KT_OK;
}

/* The memory that identifies device D in a key. A device that runs on the
 * host's own cores reports no memory of its own: PoCL's CPU device gives as
 * its global memory a budget it derives from what the process finds free,
 * which differs from process to process (3.4, 4.0 and 10.8 GiB in three
 * processes on the H200 machine), so a result keyed on it would not be found
 * by the next run. The host's physical memory does not change. */
static uint64_t identity_memory(const kt__device_info *d) {
  if (!d->host_cpu) return d->memory_bytes;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : d->memory_bytes;
}

/* Binds everything but the sizes (?1..?9); sizes go to ?10 when WITH_SIZES. */
static void bind_key(sqlite3_stmt *st, const kt__store_key *k, bool with_sizes) {
  const kt__device_info *d = k->device;
  sqlite3_bind_text(st, 1, k->source_hash, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, k->kernel, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 3, d->backend, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 4, d->name, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 5, d->arch, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 6, (sqlite3_int64)identity_memory(d));
  sqlite3_bind_text(st, 7, d->driver_version, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 8, d->toolchain_version, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 9, k->method_version ? k->method_version : KT__METHOD_VERSION, -1, SQLITE_TRANSIENT);
  if (with_sizes) sqlite3_bind_text(st, 10, or_empty(k->sizes), -1, SQLITE_TRANSIENT);
}

/* The id of key K: 0 in *ID when it is not stored (and CREATE is false). */
static int key_id(kt__store *s, const kt__store_key *k, bool create, int64_t *id, kt__errbuf *eb) {
  static const char *const insert =
      "INSERT INTO keys(source_hash, kernel, backend, device, arch, memory, driver_version, "
      "toolchain_version, method_version, sizes, created) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) ON CONFLICT DO NOTHING";
  sqlite3_stmt *st;
  int rc;
  *id = 0;
  if (create) {
    char ts[32];
    kt__store_timestamp(ts);
    KT__FORWARD(kt__store_prepare(s, insert, &st, "adding a key", eb));
    bind_key(st, k, true);
    sqlite3_bind_text(st, 11, ts, -1, SQLITE_TRANSIENT);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return kt__store_fail(s, rc, "adding a key", eb);
  }
  KT__FORWARD(
      kt__store_prepare(s, "SELECT id FROM keys WHERE " KEY_MATCH " AND sizes=?10", &st, "looking up a key", eb));
  bind_key(st, k, true);
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) *id = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return kt__store_fail(s, rc, "looking up a key", eb);
  return KT_OK;
}

/* ---- records ---- */

static void bind_real(sqlite3_stmt *st, int i, double v) {
  /* SQLite keeps NaN as NULL; bind it so explicitly. */
  if (isnan(v)) sqlite3_bind_null(st, i);
  else sqlite3_bind_double(st, i, v);
}

typedef struct put_args {
  const kt__store_key *k;
  const kt__record *r;
} put_args;

static int put_body(kt__store *s, void *ud, kt__errbuf *eb) {
  static const char *const sql =
      "INSERT INTO results(key_id, config, status, median, min, max, mean, stddev, nsamples, "
      "reps, stopped_early, compile_s, message, timestamp, cause, timing, measurement, energy_j, energy_s) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19) "
      "ON CONFLICT(key_id, config) DO UPDATE SET status=excluded.status, "
      "median=excluded.median, min=excluded.min, max=excluded.max, mean=excluded.mean, "
      "stddev=excluded.stddev, nsamples=excluded.nsamples, reps=excluded.reps, "
      "stopped_early=excluded.stopped_early, compile_s=excluded.compile_s, "
      "message=excluded.message, timestamp=excluded.timestamp, cause=excluded.cause, timing=excluded.timing, "
      "measurement=excluded.measurement, energy_j=excluded.energy_j, energy_s=excluded.energy_s";
  const put_args *a = ud;
  const kt__record *r = a->r;
  int64_t id;
  char ts[32];
  sqlite3_stmt *st;
  KT__FORWARD(key_id(s, a->k, true, &id, eb));
  kt__store_timestamp(ts);
  KT__FORWARD(kt__store_prepare(s, sql, &st, "recording a result", eb));
  sqlite3_bind_int64(st, 1, id);
  sqlite3_bind_text(st, 2, r->config, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 3, kt__status_name(r->status), -1, SQLITE_STATIC);
  bind_real(st, 4, r->stats.median);
  bind_real(st, 5, r->stats.min);
  bind_real(st, 6, r->stats.max);
  bind_real(st, 7, r->stats.mean);
  bind_real(st, 8, r->stats.stddev);
  sqlite3_bind_int(st, 9, r->stats.nsamples);
  sqlite3_bind_int(st, 10, r->stats.reps);
  sqlite3_bind_int(st, 11, r->stats.stopped_early);
  bind_real(st, 12, r->compile_s);
  if (r->message) sqlite3_bind_text(st, 13, r->message, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 14, ts, -1, SQLITE_TRANSIENT);
  if (r->outside) sqlite3_bind_text(st, 15, "outside", -1, SQLITE_STATIC);
  kt__sbuf m = {0};
  if (r->status == KT__ST_OK && r->stats.timing != KT_TIMING_AUTO) {
    sqlite3_bind_text(st, 16, kt__timing_name(r->stats.timing), -1, SQLITE_STATIC);
    kt__measurement_json(&m, r->method, &r->stats);
    sqlite3_bind_text(st, 17, m.s, -1, SQLITE_TRANSIENT);
  }
  if (r->status == KT__ST_OK && r->stats.seen.energy_known) {
    bind_real(st, 18, r->stats.seen.energy_j);
    bind_real(st, 19, r->stats.seen.energy_s);
  }
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  kt__sbuf_free(&m);
  return rc == SQLITE_DONE ? KT_OK : kt__store_fail(s, rc, "recording a result", eb);
}

int kt__store_put(kt__store *s, const kt__store_key *k, const kt__record *r, kt__errbuf *eb) {
  KT__FORWARD(check_key(k, eb));
  KT__RETURN_IF(!r || !r->config, eb, KT_INVALID, "result without a configuration");
  put_args a = {k, r};
  pthread_mutex_lock(&s->mu);
  int err = kt__store_write(s, "recording a result", put_body, &a, eb);
  pthread_mutex_unlock(&s->mu);
  return err;
}

/* Result columns in the order read_result expects, prefixed by table alias r. */
#define RESULT_COLUMNS                                                                 \
  "r.config, r.status, r.median, r.min, r.max, r.mean, r.stddev, r.nsamples, r.reps, " \
  "r.stopped_early, r.compile_s, r.message, r.timestamp, r.cause, r.timing, r.energy_j, r.energy_s"

/* One row into OUT with its strings copied; false for a status this build
 * does not know (written by a newer ktune: skipped rather than misread). */
static bool read_result(sqlite3_stmt *st, kt__result_row *out) {
  int status = kt__status_from_name(kt__col_text(st, 1));
  if (status < 0) return false;
  kt__record *r = &out->rec;
  memset(out, 0, sizeof *out);
  r->config = kt__xstrdup(kt__col_text(st, 0));
  r->status = (kt__status)status;
  r->stats.median = kt__col_real(st, 2);
  r->stats.min = kt__col_real(st, 3);
  r->stats.max = kt__col_real(st, 4);
  r->stats.mean = kt__col_real(st, 5);
  r->stats.stddev = kt__col_real(st, 6);
  r->stats.nsamples = sqlite3_column_int(st, 7);
  r->stats.reps = sqlite3_column_int(st, 8);
  r->stats.stopped_early = sqlite3_column_int(st, 9) != 0;
  r->compile_s = kt__col_real(st, 10);
  r->message = sqlite3_column_type(st, 11) == SQLITE_NULL ? NULL : kt__xstrdup(kt__col_text(st, 11));
  out->timestamp = kt__xstrdup(kt__col_text(st, 12));
  r->outside = sqlite3_column_type(st, 13) != SQLITE_NULL && strcmp(kt__col_text(st, 13), "outside") == 0;
  r->stats.timing = kt__timing_from_name(sqlite3_column_type(st, 14) == SQLITE_NULL ? NULL : kt__col_text(st, 14));
  if (sqlite3_column_type(st, 15) != SQLITE_NULL && sqlite3_column_type(st, 16) != SQLITE_NULL) {
    r->stats.seen.energy_known = true;
    r->stats.seen.energy_j = sqlite3_column_double(st, 15);
    r->stats.seen.energy_s = sqlite3_column_double(st, 16);
  }
  return true;
}

/* Steps ST to the end, collecting result rows. */
static int collect_results(kt__store *s, sqlite3_stmt *st, kt__result_row **rows, int *n, kt__errbuf *eb) {
  int rc, cap = 0;
  *rows = NULL;
  *n = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (*n == cap) {
      cap = cap ? 2 * cap : 64;
      *rows = kt__xreallocarray(*rows, (size_t)cap, sizeof **rows);
    }
    if (read_result(st, &(*rows)[*n])) (*n)++;
  }
  if (rc == SQLITE_DONE) return KT_OK;
  kt__result_rows_free(*rows, *n);
  *rows = NULL;
  *n = 0;
  return kt__store_fail(s, rc, "reading results", eb);
}

void kt__result_rows_free(kt__result_row *rows, int n) {
  for (int i = 0; i < n; i++) {
    free((char *)rows[i].rec.config);
    free((char *)rows[i].rec.message);
    free((char *)rows[i].timestamp);
  }
  free(rows);
}

int kt__store_results_of(kt__store *s, int64_t key, kt__result_row **rows, int *n, kt__errbuf *eb) {
  sqlite3_stmt *st;
  KT__FORWARD(kt__store_prepare(s, "SELECT " RESULT_COLUMNS " FROM results r WHERE r.key_id=?1 ORDER BY r.rowid", &st,
                                "reading results", eb));
  sqlite3_bind_int64(st, 1, key);
  int err = collect_results(s, st, rows, n, eb);
  sqlite3_finalize(st);
  return err;
}

static int results_of_key(kt__store *s, const kt__store_key *k, kt__result_row **rows, int *n, kt__errbuf *eb) {
  sqlite3_stmt *st;
  KT__FORWARD(kt__store_prepare(s,
                                "SELECT " RESULT_COLUMNS " FROM results r JOIN keys k ON r.key_id=k.id "
                                "WHERE " KEY_MATCH " AND sizes=?10 ORDER BY r.rowid",
                                &st, "reading results", eb));
  bind_key(st, k, true);
  int err = collect_results(s, st, rows, n, eb);
  sqlite3_finalize(st);
  return err;
}

int kt__store_each(kt__store *s, const kt__store_key *k, void (*fn)(void *ud, const kt__record *r), void *ud,
                   kt__errbuf *eb) {
  KT__FORWARD(check_key(k, eb));
  kt__result_row *rows;
  int n;
  /* Rows are read under the lock and handed out after it is released, so FN
   * may itself use the store (record, set a winner) without deadlock. */
  pthread_mutex_lock(&s->mu);
  int err = results_of_key(s, k, &rows, &n, eb);
  pthread_mutex_unlock(&s->mu);
  if (err != KT_OK) return err;
  for (int i = 0; i < n; i++) fn(ud, &rows[i].rec);
  kt__result_rows_free(rows, n);
  return KT_OK;
}

int kt__store_count(kt__store *s, const kt__store_key *k, long *count, kt__errbuf *eb) {
  KT__FORWARD(check_key(k, eb));
  sqlite3_stmt *st;
  *count = 0;
  pthread_mutex_lock(&s->mu);
  int err = kt__store_prepare(s,
                              "SELECT count(*) FROM results r JOIN keys k ON r.key_id=k.id "
                              "WHERE " KEY_MATCH " AND sizes=?10",
                              &st, "counting results", eb);
  if (err == KT_OK) {
    bind_key(st, k, true);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *count = (long)sqlite3_column_int64(st, 0);
    else err = kt__store_fail(s, rc, "counting results", eb);
    sqlite3_finalize(st);
  }
  pthread_mutex_unlock(&s->mu);
  return err;
}

/* ---- winners ---- */

typedef struct winner_args {
  const kt__store_key *k;
  const char *objective;
  const char *config;
  double seconds;
} winner_args;

static int winner_body(kt__store *s, void *ud, kt__errbuf *eb) {
  const winner_args *a = ud;
  int64_t id;
  char ts[32];
  sqlite3_stmt *st;
  KT__FORWARD(key_id(s, a->k, true, &id, eb));
  kt__store_timestamp(ts);
  KT__FORWARD(kt__store_prepare(s,
                                "INSERT INTO winners(key_id, config, seconds, timestamp, objective) "
                                "VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(key_id, objective) DO UPDATE SET "
                                "config=excluded.config, seconds=excluded.seconds, "
                                "timestamp=excluded.timestamp",
                                &st, "recording the winner", eb));
  sqlite3_bind_int64(st, 1, id);
  sqlite3_bind_text(st, 2, a->config, -1, SQLITE_TRANSIENT);
  bind_real(st, 3, a->seconds);
  sqlite3_bind_text(st, 4, ts, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 5, a->objective, -1, SQLITE_STATIC);
  int rc = sqlite3_step(st);
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? KT_OK : kt__store_fail(s, rc, "recording the winner", eb);
}

int kt__store_set_winner(kt__store *s, const kt__store_key *k, kt_objective objective, const char *config,
                         double seconds, kt__errbuf *eb) {
  KT__FORWARD(check_key(k, eb));
  KT__RETURN_IF(!config, eb, KT_INVALID, "winner without a configuration");
  winner_args a = {k, kt__objective_name(objective), config, seconds};
  pthread_mutex_lock(&s->mu);
  int err = kt__store_write(s, "recording the winner", winner_body, &a, eb);
  pthread_mutex_unlock(&s->mu);
  return err;
}

int kt__store_winner(kt__store *s, const kt__store_key *k, kt_objective objective, char **config, double *seconds,
                     kt__errbuf *eb) {
  KT__FORWARD(check_key(k, eb));
  sqlite3_stmt *st;
  *config = NULL;
  pthread_mutex_lock(&s->mu);
  int err = kt__store_prepare(s,
                              "SELECT w.config, w.seconds FROM winners w JOIN keys k ON w.key_id=k.id "
                              "WHERE " KEY_MATCH " AND sizes=?10 AND w.objective=?11",
                              &st, "reading the winner", eb);
  if (err == KT_OK) {
    bind_key(st, k, true);
    sqlite3_bind_text(st, 11, kt__objective_name(objective), -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      *config = kt__xstrdup(kt__col_text(st, 0));
      if (seconds) *seconds = kt__col_real(st, 1);
    } else if (rc == SQLITE_DONE) {
      err = kt__err(eb, KT_NOTFOUND, "no stored %s winner for %s (%s)", kt__objective_name(objective), k->kernel,
                    or_empty(k->sizes));
    } else {
      err = kt__store_fail(s, rc, "reading the winner", eb);
    }
    sqlite3_finalize(st);
  }
  pthread_mutex_unlock(&s->mu);
  return err;
}

typedef struct winner_row {
  char *sizes, *config;
  double seconds;
} winner_row;

/* Winners whose key satisfies WHERE (bound by bind_key, sizes left out),
 * in key order, handed to FN once the lock is released. */
static int each_winner_where(kt__store *s, const kt__store_key *k, const char *where,
                             void (*fn)(void *ud, const char *sizes, const char *config, double seconds), void *ud,
                             kt__errbuf *eb) {
  KT__FORWARD(check_key(k, eb));
  sqlite3_stmt *st;
  winner_row *rows = NULL;
  int n = 0, cap = 0, rc = SQLITE_DONE;
  pthread_mutex_lock(&s->mu);
  kt__sbuf sql = {0};
  kt__sbuf_printf(&sql,
                  "SELECT k.sizes, w.config, w.seconds FROM winners w JOIN keys k ON w.key_id=k.id "
                  "WHERE w.objective='time' AND %s ORDER BY k.id",
                  where);
  int err = kt__store_prepare(s, sql.s, &st, "reading winners", eb);
  kt__sbuf_free(&sql);
  if (err == KT_OK) {
    bind_key(st, k, false);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      if (n == cap) rows = kt__xreallocarray(rows, (size_t)(cap = cap ? 2 * cap : 16), sizeof *rows);
      rows[n].sizes = kt__xstrdup(kt__col_text(st, 0));
      rows[n].config = kt__xstrdup(kt__col_text(st, 1));
      rows[n].seconds = kt__col_real(st, 2);
      n++;
    }
    if (rc != SQLITE_DONE) err = kt__store_fail(s, rc, "reading winners", eb);
    sqlite3_finalize(st);
  }
  pthread_mutex_unlock(&s->mu);
  for (int i = 0; i < n; i++) {
    if (err == KT_OK) fn(ud, rows[i].sizes, rows[i].config, rows[i].seconds);
    free(rows[i].sizes);
    free(rows[i].config);
  }
  free(rows);
  return err;
}

int kt__store_each_winner(kt__store *s, const kt__store_key *k,
                          void (*fn)(void *ud, const char *sizes, const char *config, double seconds), void *ud,
                          kt__errbuf *eb) {
  return each_winner_where(s, k, KEY_MATCH, fn, ud, eb);
}

/* The same source, kernel and backend; any other device (name, architecture,
 * memory, driver or toolchain differ), any method version (?9, which
 * bind_key binds, is not used): hints only. */
#define OTHER_DEVICE_MATCH                                                                    \
  "source_hash=?1 AND kernel=?2 AND backend=?3 AND NOT (device=?4 AND arch=?5 AND memory=?6 " \
  "AND driver_version=?7 AND toolchain_version=?8)"

int kt__store_each_winner_elsewhere(kt__store *s, const kt__store_key *k,
                                    void (*fn)(void *ud, const char *sizes, const char *config, double seconds),
                                    void *ud, kt__errbuf *eb) {
  return each_winner_where(s, k, OTHER_DEVICE_MATCH, fn, ud, eb);
}

int kt__store_check(kt__store *s, kt__errbuf *eb) {
  sqlite3_stmt *st;
  kt__sbuf report = {0};
  pthread_mutex_lock(&s->mu);
  int err = kt__store_prepare(s, "PRAGMA integrity_check", &st, "checking integrity", eb);
  if (err == KT_OK) {
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      const char *line = kt__col_text(st, 0);
      if (strcmp(line, "ok") != 0) kt__sbuf_printf(&report, "\n  %s", line);
    }
    if (rc != SQLITE_DONE) err = kt__store_fail(s, rc, "checking integrity", eb);
    sqlite3_finalize(st);
  }
  pthread_mutex_unlock(&s->mu);
  if (err == KT_OK && report.len)
    err = kt__err(eb, KT_STORE, "results database %s fails its integrity check:%s", s->path, report.s);
  kt__sbuf_free(&report);
  return err;
}

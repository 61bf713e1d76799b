/* The connection and SQL plumbing of the results database (db.h). */
#include "db.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trust.h"

bool kt__db_is_memory(const char *path) { return strcmp(path, ":memory:") == 0; }

/* ---- errors and transactions ---- */

static bool is_busy(int rc) {
  int primary = rc & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

int kt__store_fail(kt__store *s, int rc, const char *what, kt__errbuf *eb) {
  int primary = rc & 0xff;
  const char *detail = s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
  s->busy = is_busy(rc);
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB)
    return kt__err(eb, KT_STORE,
                   "results database %s: %s: %s.\n"
                   "The file is damaged or is not a ktune results database. Move it away "
                   "(mv '%s' '%s.broken') and ktune starts a fresh one, or choose another "
                   "file with %s or KTUNE_DB.",
                   s->path, what, detail, s->path, s->path, s->label);
  if (s->busy)
    return kt__err(eb, KT_STORE, "results database %s: %s: still locked by another process after %.0f s (%s)", s->path,
                   what, KT__STORE_BUSY_S, detail);
  if (primary == SQLITE_FULL || primary == SQLITE_IOERR)
    return kt__err(eb, KT_STORE,
                   "results database %s: %s: %s (free space on its disk, or choose another file with %s or "
                   "KTUNE_DB)",
                   s->path, what, detail, s->label);
  if (primary == SQLITE_CANTOPEN || primary == SQLITE_PERM || primary == SQLITE_READONLY)
    return kt__err(eb, KT_STORE,
                   "results database %s: %s: %s (check the file's permissions, or choose "
                   "another file with %s or KTUNE_DB)",
                   s->path, what, detail, s->label);
  return kt__err(eb, KT_STORE, "results database %s: %s: %s", s->path, what, detail);
}

int kt__store_prepare(kt__store *s, const char *sql, sqlite3_stmt **st, const char *what, kt__errbuf *eb) {
  int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
  return rc == SQLITE_OK ? KT_OK : kt__store_fail(s, rc, what, eb);
}

/* A short random pause, so that two waiting writers do not retry in step. */
static void backoff(kt__store *s, int attempt) {
  long us = 1000L << (attempt < 6 ? attempt : 6);
  us += rand_r(&s->seed) % 1000;
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

static void rollback(kt__store *s) {
  if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

/* SQLite keeps writing through its open descriptors when the file is
 * unlinked (its folder removed): every commit succeeds into a file nobody
 * will open again. A commit counts only while the path still names it. */
static int check_in_place(kt__store *s, const char *what, kt__errbuf *eb) {
  int moved = 0;
  if (kt__db_is_memory(s->path) || sqlite3_file_control(s->db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) != SQLITE_OK ||
      !moved)
    return KT_OK;
  return kt__err(eb, KT_STORE,
                 "results database %s: %s: the file was removed or moved while ktune used it (was its folder "
                 "deleted?), so what is written to it is lost; keep the database where it is, or choose another "
                 "file with %s or KTUNE_DB",
                 s->path, what, s->label);
}

int kt__store_write(kt__store *s, const char *what, kt__txn_body body, void *ud, kt__errbuf *eb) {
  double deadline = kt__now() + KT__STORE_BUSY_S;
  for (int attempt = 0;; attempt++) {
    /* IMMEDIATE takes the write lock up front: a deferred transaction that
     * read first could not upgrade under WAL and would fail without waiting. */
    int rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    int err;
    if (rc != SQLITE_OK) {
      err = kt__store_fail(s, rc, what, eb);
    } else {
      s->busy = false;
      err = body(s, ud, eb);
      if (err == KT_OK) {
        rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
        if (rc == SQLITE_OK) return check_in_place(s, what, eb);
        err = kt__store_fail(s, rc, what, eb);
      }
      rollback(s);
    }
    if (!s->busy || kt__now() > deadline) return err;
    backoff(s, attempt);
  }
}

void kt__store_timestamp(char out[32]) {
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  size_t n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(out + n, 32 - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

const char *kt__col_text(sqlite3_stmt *st, int col) {
  const unsigned char *t = sqlite3_column_text(st, col);
  return t ? (const char *)t : "";
}

double kt__col_real(sqlite3_stmt *st, int col) {
  return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

/* ---- open and close ---- */

/* Connection settings. WAL lets readers run beside one writer. With WAL,
 * synchronous=NORMAL writes every commit to the WAL before COMMIT returns, so
 * a committed record survives the process being killed at any moment (what
 * resuming needs; tests kill -9 a writer); only an OS crash or power cut may
 * lose the last commits, never the file's integrity. FULL would add an fsync
 * per record: 8 ms against 0.2 ms per put on an ext4 disk here. */
static int configure(kt__store *s, bool read_only, kt__errbuf *eb) {
  sqlite3_busy_timeout(s->db, 5000);
  sqlite3_extended_result_codes(s->db, 1);
  if (read_only) return KT_OK; /* a reader changes nothing, not even the journal mode */
  double deadline = kt__now() + KT__STORE_BUSY_S;
  int rc;
  /* Switching to WAL needs a moment of exclusive access; a second process
   * opening at the same time may see BUSY. */
  for (int attempt = 0;; attempt++) {
    rc = sqlite3_exec(s->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
    if (!is_busy(rc) || kt__now() > deadline) break;
    backoff(s, attempt);
  }
  if (rc != SQLITE_OK) return kt__store_fail(s, rc, "opening", eb);
  rc = sqlite3_exec(s->db, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON", NULL, NULL, NULL);
  if (rc != SQLITE_OK) return kt__store_fail(s, rc, "opening", eb);
  return KT_OK;
}

/* PATH as an SQLite URI that reads the file as it is: in a folder where
 * SQLite cannot make the -shm file that WAL readers share, only an immutable
 * open reads it (what a writer has not checkpointed yet is not seen). */
static char *immutable_uri(const char *path) {
  kt__sbuf u = {0};
  kt__sbuf_printf(&u, "file:");
  for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
    if (isalnum(*p) || strchr("/._-~", *p)) kt__sbuf_printf(&u, "%c", *p);
    else kt__sbuf_printf(&u, "%%%02X", *p);
  }
  kt__sbuf_printf(&u, "?immutable=1");
  return u.s;
}

static int open_connection(kt__store *s, bool read_only) {
  if (!read_only)
    return sqlite3_open_v2(s->path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL);
  kt__sbuf shm = {0};
  kt__sbuf_printf(&shm, "%s-shm", s->path);
  bool immutable = access(shm.s, F_OK) != 0 && !kt__store_folder_writable(s->path);
  kt__sbuf_free(&shm);
  char *uri = immutable ? immutable_uri(s->path) : NULL;
  int rc = sqlite3_open_v2(uri ? uri : s->path, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX,
                           NULL);
  free(uri);
  return rc;
}

int kt__db_open(const char *path, const char *label, bool read_only, kt__store **out, kt__errbuf *eb) {
  kt__store *s = kt__xcalloc(1, sizeof *s);
  s->path = kt__xstrdup(path);
  s->label = kt__xstrdup(label);
  s->seed = (unsigned)getpid() ^
            (unsigned)(uint64_t)(kt__now() *
                                 1e6); /* via 64 bits: the microseconds pass UINT_MAX after 71 minutes of uptime */
  pthread_mutex_init(&s->mu, NULL);
  int rc = open_connection(s, read_only);
  int err = rc == SQLITE_OK ? KT_OK : kt__store_fail(s, rc, "opening", eb);
  if (err == KT_OK) err = configure(s, read_only, eb);
  if (err != KT_OK) {
    kt__db_close(s);
    s = NULL;
  }
  *out = s;
  return err;
}

void kt__db_close(kt__store *s) {
  if (!s) return;
  sqlite3_close_v2(s->db);
  pthread_mutex_destroy(&s->mu);
  free(s->path);
  free(s->label);
  free(s);
}

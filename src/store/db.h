/* The results database's connection and its SQL plumbing: the handle,
 * statements, write transactions that survive contention, SQLite failures
 * said in words, and column reading. The records API (store.c), the schema
 * (schema.c) and the cache commands build on it. Only src/store/ includes
 * this. */
#ifndef KT_STORE_DB_H
#define KT_STORE_DB_H

#include <pthread.h>
#include <sqlite3.h>

#include "../common.h"

/* How long a writer waits for another process's write lock before giving up. */
#define KT__STORE_BUSY_S 120.0

/* One connection per handle; MU serialises the handle's users, so a tuner may
 * record from several threads. A handle must not cross fork(): the device
 * worker never touches the store. */
typedef struct kt__store {
  sqlite3 *db;
  char *path;
  char *label; /* what the caller calls that path (kt_labels.db), for advice */
  pthread_mutex_t mu;
  bool busy;     /* the last failure was SQLITE_BUSY/LOCKED: the write may be retried */
  unsigned seed; /* per process, so that waiting writers do not retry in step */
} kt__store;

/* Opens (creating) the SQLite file PATH, which the caller calls LABEL, with
 * ktune's connection settings; READ_ONLY: an existing file, only read (its
 * journal mode left as it is). On failure nothing stays open and *OUT is
 * NULL. */
int kt__db_open(const char *path, const char *label, bool read_only, kt__store **out, kt__errbuf *eb);
void kt__db_close(kt__store *s);
/* SQLite's in-memory database: no file, no folders. */
bool kt__db_is_memory(const char *path);

/* Sets a KT_STORE message naming the file, WHAT was being done and SQLite's
 * reason (with what to do about a damaged file); returns KT_STORE. */
int kt__store_fail(kt__store *s, int rc, const char *what, kt__errbuf *eb);

/* Runs BODY inside BEGIN IMMEDIATE ... COMMIT, retrying the whole transaction
 * while another writer holds the lock (up to KT__STORE_BUSY_S). BODY returns
 * a kt_err; on a SQLite failure it reports through kt__store_fail. The caller
 * holds s->mu. */
typedef int (*kt__txn_body)(kt__store *s, void *ud, kt__errbuf *eb);
int kt__store_write(kt__store *s, const char *what, kt__txn_body body, void *ud, kt__errbuf *eb);

/* Prepares SQL, reporting a failure as kt__store_fail(WHAT). */
int kt__store_prepare(kt__store *s, const char *sql, sqlite3_stmt **st, const char *what, kt__errbuf *eb);

/* UTC "YYYY-MM-DDTHH:MM:SS.mmmZ": sorts as text, as import relies on. */
void kt__store_timestamp(char out[32]);

/* Column text that may be NULL, as "" or a strdup. */
const char *kt__col_text(sqlite3_stmt *st, int col);
/* Column real; NULL (SQLite's storage of NaN) reads as NaN. */
double kt__col_real(sqlite3_stmt *st, int col);

#endif

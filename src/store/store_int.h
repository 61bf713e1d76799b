/* Inside the results database: the handle, SQLite error reporting, write
 * transactions with retry, and the key selection the cache commands share.
 * Only src/store/ includes this. */
#ifndef KT_STORE_INT_H
#define KT_STORE_INT_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>

#include "store.h"

/* PRAGMA application_id: "ktun". Tells our database from any other SQLite file. */
#define KT__APPLICATION_ID 0x6b74756e

/* How long a writer waits for another process's write lock before giving up. */
#define KT__STORE_BUSY_S 120.0

/* One connection per handle; MU serialises the handle's users, so a tuner may
 * record from several threads. A handle must not cross fork(): the device
 * worker never touches the store. */
struct kt__store {
  sqlite3 *db;
  char *path;
  pthread_mutex_t mu;
  bool busy; /* the last failure was SQLITE_BUSY/LOCKED: the write may be retried */
  unsigned seed; /* per process, so that waiting writers do not retry in step */
};

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

/* Creates or migrates the schema to KT__SCHEMA_VERSION (schema.c). */
int kt__schema_prepare(kt__store *s, kt__errbuf *eb);

/* UTC "YYYY-MM-DDTHH:MM:SS.mmmZ": sorts as text, as import relies on. */
void kt__store_timestamp(char out[32]);

/* Column text that may be NULL, as "" or a strdup. */
const char *kt__col_text(sqlite3_stmt *st, int col);
/* Column real; NULL (SQLite's storage of NaN) reads as NaN. */
double kt__col_real(sqlite3_stmt *st, int col);

/* One stored key with its counts and winner (cache commands, export). */
typedef struct kt__key_row {
  int64_t id;
  char *source_hash, *kernel, *backend, *device, *arch, *driver_version, *toolchain_version,
      *method_version, *sizes, *created;
  int64_t memory;
  long nresults, nok;
  char *winner_config, *winner_ts; /* NULL when no winner */
  double winner_s;
} kt__key_row;

/* The keys matching F (NULL: all), oldest first. The caller holds s->mu. */
int kt__store_select(kt__store *s, const kt_cache_filter *f, kt__key_row **rows, int *n, kt__errbuf *eb);
void kt__key_rows_free(kt__key_row *rows, int n);

/* One result of a key as stored, with its timestamp. */
typedef struct kt__result_row {
  kt__record rec;
  const char *timestamp;
} kt__result_row;

/* All results of key KEY_ID, in insertion order, into a malloc'ed array
 * (free with kt__result_rows_free). The caller holds s->mu. */
int kt__store_results_of(kt__store *s, int64_t key_id, kt__result_row **rows, int *n, kt__errbuf *eb);
void kt__result_rows_free(kt__result_row *rows, int n);

/* True when every "NAME=VALUE" token of WANT is among those of HAVE. */
bool kt__sizes_match(const char *have, const char *want);

/* ---- export.c / import.c ---- */

/* The identifying name of ktune's own export document, and its version. */
#define KT__EXPORT_FORMAT "ktune-results"
#define KT__EXPORT_VERSION 1

/* ktune's JSON document of the keys matching F, with every result. */
int kt__export_json(kt__store *s, const kt_cache_filter *f, FILE *out, kt__errbuf *eb);
/* The T4 results document of the one key matching F. */
int kt__export_t4(kt__store *s, const kt_cache_filter *f, FILE *out, kt__errbuf *eb);
/* Reads an export document from PATH ("-": stdin) and checks its header,
 * before any database is opened: a file that is not ours writes nothing. */
struct json_object;
int kt__import_load(const char *path, struct json_object **doc, kt__errbuf *eb);
/* Merges a loaded document in one transaction; counts what it read. */
int kt__import_doc(kt__store *s, const char *path, struct json_object *doc, long *nkeys, long *nresults,
                   kt__errbuf *eb);

#endif

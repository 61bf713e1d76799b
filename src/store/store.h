/* The results database (SQLite): every measured configuration, per key. The
 * key is (kernel source hash, kernel name, device identity, toolchain and
 * driver versions, measurement-method version, key sizes); a result is never
 * reused across any of them. */
#ifndef KT_STORE_H
#define KT_STORE_H

#include "../backend/backend.h"
#include "../measure/measure.h"
#include "schema.h" /* KT__SCHEMA_VERSION */

typedef struct kt__store kt__store;

/* Bump when the way ktune measures changes: old results are then not reused. */
#define KT__METHOD_VERSION "1"

typedef struct kt__store_key {
  const char *source_hash; /* hex digest of the kernel source text */
  const char *kernel;
  const kt__device_info *device;
  const char *sizes;          /* canonical "M=1024 N=2048" of the key sizes */
  const char *method_version; /* NULL: KT__METHOD_VERSION */
} kt__store_key;

typedef struct kt__record {
  const char *config; /* canonical "NAME=VALUE NAME=VALUE" */
  kt__status status;
  kt__stats stats;
  double compile_s;
  const char *message; /* reason for a failure, or NULL */
  bool outside;        /* a failure not of the kernel's own doing (its worker was
                               killed from outside): a later run measures it again */
  const char *method;  /* what the backend calls stats.timing (kt__backend.timings), or NULL */
} kt__record;

/* PATH NULL: $KTUNE_DB, else $XDG_CACHE_HOME/ktune/results.db, else
 * ~/.cache/ktune/results.db. Creates directories and migrates the schema.
 * LABEL is what the caller calls PATH (kt_labels.db): messages that advise
 * another file name it. */
int kt__store_open(const char *path, const char *label, kt__store **out, kt__errbuf *eb);
void kt__store_close(kt__store *s);
const char *kt__store_path(const kt__store *s);

/* Keeps one measured configuration (replaces an earlier one of the same
 * config under the same key). Durable when it returns: it survives the
 * process being killed at any moment (WAL, synchronous=NORMAL; see db.c). */
int kt__store_put(kt__store *s, const kt__store_key *k, const kt__record *r, kt__errbuf *eb);
/* Calls FN for every record under K. */
int kt__store_each(kt__store *s, const kt__store_key *k, void (*fn)(void *ud, const kt__record *r), void *ud,
                   kt__errbuf *eb);
/* Records the winner of a finished tuning for OBJECTIVE under K (SECONDS:
 * its time per launch, whatever the objective). */
int kt__store_set_winner(kt__store *s, const kt__store_key *k, kt_objective objective, const char *config,
                         double seconds, kt__errbuf *eb);
/* The winner for OBJECTIVE under K: KT_OK with *config malloc'ed, or
 * KT_NOTFOUND. */
int kt__store_winner(kt__store *s, const kt__store_key *k, kt_objective objective, char **config, double *seconds,
                     kt__errbuf *eb);

/* ---- Beside the records: the default path, opening read-only, winners,
 * counts, the integrity check, the rows the cache commands print ---- */

/* The default database path ($KTUNE_DB, $XDG_CACHE_HOME/ktune/results.db,
 * ~/.cache/ktune/results.db) into BUF. KT_INVALID when it does not fit or
 * no home directory is known (advising KTUNE_DB or LABEL, as kt__store_open). */
int kt__store_default_path(char *buf, size_t len, const char *label, kt__errbuf *eb);

/* As kt__store_open; with KT__STORE_NOCREATE a missing file is KT_NOTFOUND
 * (read-only commands use it so that looking does not create a database). */
enum { KT__STORE_NOCREATE = 1 };
int kt__store_open_ex(const char *path, const char *label, int flags, kt__store **out, kt__errbuf *eb);

/* Calls FN for the stored winner of every key that matches K in all but its
 * sizes (same source, kernel, device, toolchain, driver, method): what the
 * runtime's in-memory table and its nearest-size fallback need. */
int kt__store_each_winner(kt__store *s, const kt__store_key *k,
                          void (*fn)(void *ud, const char *sizes, const char *config, double seconds), void *ud,
                          kt__errbuf *eb);
/* The stored winners of the same kernel source on other devices (and other
 * drivers or toolchains), at any sizes: where a tuning on a new device starts
 * (warm start). */
int kt__store_each_winner_elsewhere(kt__store *s, const kt__store_key *k,
                                    void (*fn)(void *ud, const char *sizes, const char *config, double seconds),
                                    void *ud, kt__errbuf *eb);

/* Number of records under K (0 when the key is unknown). */
int kt__store_count(kt__store *s, const kt__store_key *k, long *count, kt__errbuf *eb);

/* PRAGMA integrity_check: KT_OK, or KT_STORE with SQLite's report. */
int kt__store_check(kt__store *s, kt__errbuf *eb);

/* One result of a key as stored, with its timestamp (the cache commands). */
typedef struct kt__result_row {
  kt__record rec;
  const char *timestamp;
} kt__result_row;

/* All results of the key with id KEY_ID (from kt__store_select, select.h), in
 * insertion order, into a malloc'ed array (free with kt__result_rows_free).
 * The caller holds the handle's lock. */
int kt__store_results_of(kt__store *s, int64_t key_id, kt__result_row **rows, int *n, kt__errbuf *eb);
void kt__result_rows_free(kt__result_row *rows, int n);

#endif

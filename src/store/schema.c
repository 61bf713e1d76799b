/* The schema of the results database and its migrations. The file carries a
 * header, as Lua's lundump checks one: PRAGMA application_id says the file
 * is ktune's, PRAGMA user_version says which schema it holds. A migration
 * function takes the file from version N-1 to N inside the same write
 * transaction that bumps user_version, so a crash leaves either version. */
#include "schema.h"

#include <stdio.h>
#include <string.h>

#include "db.h"

/* Version 1: keys, every measured configuration, and winners. A key is every
 * condition a measurement depends on; a result is never reused across any. */
static int migrate_to_1(kt__store *s, kt__errbuf *eb) {
  static const char *const sql = "CREATE TABLE keys ("
                                 "  id INTEGER PRIMARY KEY,"
                                 "  source_hash TEXT NOT NULL,"
                                 "  kernel TEXT NOT NULL,"
                                 "  backend TEXT NOT NULL,"
                                 "  device TEXT NOT NULL,"
                                 "  arch TEXT NOT NULL,"
                                 "  memory INTEGER NOT NULL,"
                                 "  driver_version TEXT NOT NULL,"
                                 "  toolchain_version TEXT NOT NULL,"
                                 "  method_version TEXT NOT NULL,"
                                 "  sizes TEXT NOT NULL,"
                                 "  created TEXT NOT NULL,"
                                 "  UNIQUE (source_hash, kernel, backend, device, arch, memory, driver_version,"
                                 "          toolchain_version, method_version, sizes));"
                                 "CREATE INDEX keys_by_kernel ON keys(kernel, device);"
                                 "CREATE TABLE results ("
                                 "  key_id INTEGER NOT NULL REFERENCES keys(id) ON DELETE CASCADE,"
                                 "  config TEXT NOT NULL,"
                                 "  status TEXT NOT NULL,"
                                 "  median REAL, min REAL, max REAL, mean REAL, stddev REAL,"
                                 "  nsamples INTEGER NOT NULL DEFAULT 0,"
                                 "  reps INTEGER NOT NULL DEFAULT 0,"
                                 "  stopped_early INTEGER NOT NULL DEFAULT 0,"
                                 "  compile_s REAL,"
                                 "  message TEXT,"
                                 "  timestamp TEXT NOT NULL,"
                                 "  UNIQUE (key_id, config));"
                                 "CREATE TABLE winners ("
                                 "  key_id INTEGER PRIMARY KEY REFERENCES keys(id) ON DELETE CASCADE,"
                                 "  config TEXT NOT NULL,"
                                 "  seconds REAL,"
                                 "  timestamp TEXT NOT NULL);";
  int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? KT_OK : kt__store_fail(s, rc, "creating the schema", eb);
}

/* Version 2: why a failure happened. cause 'outside' marks one that was not
 * the kernel's doing (its worker killed by a signal the tuner did not send:
 * the OOM killer, an operator); NULL is the kernel's own. */
static int migrate_to_2(kt__store *s, kt__errbuf *eb) {
  int rc = sqlite3_exec(s->db, "ALTER TABLE results ADD COLUMN cause TEXT;", NULL, NULL, NULL);
  return rc == SQLITE_OK ? KT_OK : kt__store_fail(s, rc, "adding the failure cause to the schema", eb);
}

/* Version 3: how each result was measured (issue 27): the timing method
 * ("graph", "events"; read back for the finalist rounds) and the whole
 * `measurement` record as JSON (kt__measurement_json). */
static int migrate_to_3(kt__store *s, kt__errbuf *eb) {
  int rc = sqlite3_exec(s->db,
                        "ALTER TABLE results ADD COLUMN timing TEXT; ALTER TABLE results ADD COLUMN measurement TEXT;",
                        NULL, NULL, NULL);
  return rc == SQLITE_OK ? KT_OK : kt__store_fail(s, rc, "adding the measurement columns", eb);
}

/* Version 4: energy and objectives (issue 27). Each result keeps the joules
 * its samples used and the seconds the counter's reads spanned (the
 * measurement's kt__seen energy, read back for ranking by energy); a key
 * has a winner per objective ("time", "energy", "edp"). SQLite cannot
 * change a primary key in place: the winners move to a table keyed by
 * (key, objective), the ones there so far as the time winners they were. */
static int migrate_to_4(kt__store *s, kt__errbuf *eb) {
  static const char *const sql = "ALTER TABLE results ADD COLUMN energy_j REAL;"
                                 "ALTER TABLE results ADD COLUMN energy_s REAL;"
                                 "CREATE TABLE winners_by_objective ("
                                 "  key_id INTEGER NOT NULL REFERENCES keys(id) ON DELETE CASCADE,"
                                 "  objective TEXT NOT NULL DEFAULT 'time',"
                                 "  config TEXT NOT NULL,"
                                 "  seconds REAL,"
                                 "  timestamp TEXT NOT NULL,"
                                 "  PRIMARY KEY (key_id, objective));"
                                 "INSERT INTO winners_by_objective(key_id, objective, config, seconds, timestamp) "
                                 "  SELECT key_id, 'time', config, seconds, timestamp FROM winners;"
                                 "DROP TABLE winners;"
                                 "ALTER TABLE winners_by_objective RENAME TO winners;";
  int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? KT_OK : kt__store_fail(s, rc, "adding energy and objectives to the schema", eb);
}

/* migrations[v - 1] takes the database from version v - 1 to v. */
static int (*const migrations[])(kt__store *, kt__errbuf *) = {migrate_to_1, migrate_to_2, migrate_to_3, migrate_to_4};
_Static_assert(sizeof migrations / sizeof migrations[0] == KT__SCHEMA_VERSION, "one migration per schema version");

static int pragma_int(kt__store *s, const char *sql, int *value, kt__errbuf *eb) {
  sqlite3_stmt *st;
  KT__FORWARD(kt__store_prepare(s, sql, &st, "reading the schema version", eb));
  int rc = sqlite3_step(st);
  *value = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? KT_OK : kt__store_fail(s, rc, "reading the schema version", eb);
}

/* True when the file holds no table at all: a new, empty database. */
static int is_empty(kt__store *s, bool *empty, kt__errbuf *eb) {
  int n;
  KT__FORWARD(pragma_int(s, "SELECT count(*) FROM sqlite_master", &n, eb));
  *empty = n == 0;
  return KT_OK;
}

static int refuse_newer(kt__store *s, int version, kt__errbuf *eb) {
  return kt__err(eb, KT_STORE,
                 "results database %s has schema version %d, but this ktune (%s) knows "
                 "versions up to %d: it was written by a newer ktune. Use that ktune, or "
                 "choose another file with %s or KTUNE_DB.",
                 s->path, version, KTUNE_VERSION_STRING, KT__SCHEMA_VERSION, s->label);
}

static int refuse_foreign(kt__store *s, kt__errbuf *eb) {
  return kt__err(eb, KT_STORE,
                 "%s is an SQLite database, but not a ktune results database. Choose another "
                 "file with %s or KTUNE_DB (or move it away: mv '%s' '%s.other').",
                 s->path, s->label, s->path, s->path);
}

/* Inside the write transaction: re-read the header (another process may have
 * migrated meanwhile), claim an empty file, and run the missing steps. */
static int migrate_body(kt__store *s, void *ud, kt__errbuf *eb) {
  (void)ud;
  int version, app;
  bool empty;
  KT__FORWARD(pragma_int(s, "PRAGMA user_version", &version, eb));
  KT__FORWARD(pragma_int(s, "PRAGMA application_id", &app, eb));
  if (app != KT__APPLICATION_ID) {
    KT__FORWARD(is_empty(s, &empty, eb));
    if (!empty || version != 0) return refuse_foreign(s, eb);
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA application_id=%d", KT__APPLICATION_ID);
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK) return kt__store_fail(s, rc, "creating the schema", eb);
  }
  if (version > KT__SCHEMA_VERSION) return refuse_newer(s, version, eb);
  for (int v = version; v < KT__SCHEMA_VERSION; v++) KT__FORWARD(migrations[v](s, eb));
  char sql[64];
  snprintf(sql, sizeof sql, "PRAGMA user_version=%d", KT__SCHEMA_VERSION);
  int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? KT_OK : kt__store_fail(s, rc, "updating the schema version", eb);
}

int kt__schema_prepare(kt__store *s, kt__errbuf *eb) {
  int version, app;
  /* The usual case reads two header fields and takes no write lock. */
  KT__FORWARD(pragma_int(s, "PRAGMA user_version", &version, eb));
  KT__FORWARD(pragma_int(s, "PRAGMA application_id", &app, eb));
  if (app == KT__APPLICATION_ID && version == KT__SCHEMA_VERSION) return KT_OK;
  if (app == KT__APPLICATION_ID && version > KT__SCHEMA_VERSION) return refuse_newer(s, version, eb);
  return kt__store_write(s, "creating the schema", migrate_body, NULL, eb);
}

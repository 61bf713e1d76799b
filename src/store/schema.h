/* The schema of the results database: the header fields that say a file is
 * ktune's and which version it holds, and the migrations (schema.c). */
#ifndef KT_STORE_SCHEMA_H
#define KT_STORE_SCHEMA_H

#include "../common.h"

/* PRAGMA application_id: "ktun". Tells our database from any other SQLite file. */
#define KT__APPLICATION_ID 0x6b74756e

/* The schema version this build writes (PRAGMA user_version). A database of
 * a newer version is refused with KT_STORE rather than misread. */
#define KT__SCHEMA_VERSION 4

typedef struct kt__store kt__store;

/* Creates or migrates the schema to KT__SCHEMA_VERSION. */
int kt__schema_prepare(kt__store *s, kt__errbuf *eb);

#endif

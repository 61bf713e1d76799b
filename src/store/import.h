/* Import of ktune's own export document (import.c). Only src/store/
 * includes this. */
#ifndef KT_STORE_IMPORT_H
#define KT_STORE_IMPORT_H

#include "../common.h"

typedef struct kt__store kt__store;

/* Reads an export document from PATH ("-": stdin) and checks its header,
 * before any database is opened: a file that is not ours writes nothing. */
struct json_object;
int kt__import_load(const char *path, struct json_object **doc, kt__errbuf *eb);
/* Merges a loaded document in one transaction; counts what it read. */
int kt__import_doc(kt__store *s, const char *path, struct json_object *doc, long *nkeys, long *nresults,
                   kt__errbuf *eb);

#endif

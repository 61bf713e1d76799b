/* ktune's export documents (export.c): its own JSON, read back by import.c,
 * and the T4 results format. Only src/store/ includes this. */
#ifndef KT_STORE_EXPORT_H
#define KT_STORE_EXPORT_H

#include <stdio.h>

#include "../common.h"

/* The identifying name of ktune's own export document, and its version. */
#define KT__EXPORT_FORMAT "ktune-results"
#define KT__EXPORT_VERSION 1

typedef struct kt__store kt__store;

/* ktune's JSON document of the keys matching F, with every result. */
int kt__export_json(kt__store *s, const kt_cache_filter *f, FILE *out, kt__errbuf *eb);
/* The T4 results document of the one key matching F. */
int kt__export_t4(kt__store *s, const kt_cache_filter *f, FILE *out, kt__errbuf *eb);
/* CSV: a header, then a row per stored result of the keys F matches (the
 * key's kernel, backend, device and sizes; a column per configuration name
 * across those keys, empty where a configuration has none; status, winner
 * 1/0, times in seconds, samples, compile seconds, message, timestamp). */
int kt__export_csv(kt__store *s, const kt_cache_filter *f, FILE *out, kt__errbuf *eb);
/* The same, for a caller that holds s->mu already (cache show). */
int kt__export_csv_held(kt__store *s, const kt_cache_filter *f, FILE *out, kt__errbuf *eb);

#endif

/* The cache commands (cache.c) behind the public kt_cache_* calls, which
 * context.c makes on a context: O is the context's options, whose db_path
 * is the database (NULL: the default) and labels.db what messages call it;
 * the detail of an error goes to EB. */
#ifndef KT_STORE_CACHE_H
#define KT_STORE_CACHE_H

#include <stdio.h>

#include "../common.h"
#include "store.h" /* kt__result_row */

int kt__cache_path(const kt_options *o, char *buf, size_t len, kt__errbuf *eb);
int kt__cache_list(const kt_options *o, const kt_cache_filter *f, int json, FILE *out, kt__errbuf *eb);
int kt__cache_show(const kt_options *o, const kt_cache_filter *f, const char *format, FILE *out, kt__errbuf *eb);
int kt__cache_export(const kt_options *o, const kt_cache_filter *f, const char *format, FILE *out, kt__errbuf *eb);
int kt__cache_import(const kt_options *o, const char *path, FILE *out, kt__errbuf *eb);
int kt__cache_clear(const kt_options *o, const kt_cache_filter *f, FILE *out, kt__errbuf *eb);

/* One stored key, as kt__cache_each shows it. */
typedef struct kt__cache_key {
  const char *kernel, *backend, *device, *arch, *sizes, *source_hash;
  const char *winner_config; /* NULL when no winner */
  double winner_s;
} kt__cache_key;

/* Calls FN with every key F matches (oldest first) and its results in the
 * order they were first stored (the default, the reference a tuning
 * measures first, leads). FN returning other than KT_OK stops the walk with
 * that code. A missing database file is KT_NOTFOUND, saying so. */
int kt__cache_each(const kt_options *o, const kt_cache_filter *f,
                   int (*fn)(void *ud, const kt__cache_key *k, const kt__result_row *rows, int n), void *ud,
                   kt__errbuf *eb);

#endif

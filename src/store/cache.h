/* The cache commands (cache.c) behind the public kt_cache_* calls, which
 * context.c makes on a context: O is the context's options, whose db_path
 * is the database (NULL: the default) and labels.db what messages call it;
 * the detail of an error goes to EB. */
#ifndef KT_STORE_CACHE_H
#define KT_STORE_CACHE_H

#include <stdio.h>

#include "../common.h"

int kt__cache_path(const kt_options *o, char *buf, size_t len, kt__errbuf *eb);
int kt__cache_list(const kt_options *o, const kt_cache_filter *f, int json, FILE *out, kt__errbuf *eb);
int kt__cache_show(const kt_options *o, const kt_cache_filter *f, const char *format, FILE *out, kt__errbuf *eb);
int kt__cache_export(const kt_options *o, const kt_cache_filter *f, const char *format, FILE *out, kt__errbuf *eb);
int kt__cache_import(const kt_options *o, const char *path, FILE *out, kt__errbuf *eb);
int kt__cache_clear(const kt_options *o, const kt_cache_filter *f, FILE *out, kt__errbuf *eb);

#endif

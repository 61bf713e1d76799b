/* The cache commands (cache.c) behind the public kt_cache_* calls, which
 * context.c makes on a context: DB_PATH is the context's kt_options.db_path
 * (NULL: the default database) and the detail of an error goes to EB. */
#ifndef KT_STORE_CACHE_H
#define KT_STORE_CACHE_H

#include <stdio.h>

#include "../common.h"

int kt__cache_path(const char *db_path, char *buf, size_t len, kt__errbuf *eb);
int kt__cache_list(const char *db_path, const kt_cache_filter *f, int json, FILE *out, kt__errbuf *eb);
int kt__cache_show(const char *db_path, const kt_cache_filter *f, const char *format, FILE *out, kt__errbuf *eb);
int kt__cache_export(const char *db_path, const kt_cache_filter *f, const char *format, FILE *out,
                     kt__errbuf *eb);
int kt__cache_import(const char *db_path, const char *path, FILE *out, kt__errbuf *eb);
int kt__cache_clear(const char *db_path, const kt_cache_filter *f, FILE *out, kt__errbuf *eb);

#endif

/* Which stored keys a cache command applies to: every key with its counts
 * and winner, filtered by kernel, device and sizes (kt_cache_filter). Only
 * src/store/ includes this. */
#ifndef KT_STORE_SELECT_H
#define KT_STORE_SELECT_H

#include "db.h"

/* One stored key with its counts and winner (cache commands, export). */
typedef struct kt__key_row {
  int64_t id;
  char *source_hash, *kernel, *backend, *device, *arch, *driver_version, *toolchain_version, *method_version, *sizes,
      *created;
  int64_t memory;
  long nresults, nok;
  char *winner_config, *winner_ts; /* NULL when no winner */
  double winner_s;
} kt__key_row;

/* The keys matching F (NULL: all), oldest first. The caller holds s->mu. */
int kt__store_select(kt__store *s, const kt_cache_filter *f, kt__key_row **rows, int *n, kt__errbuf *eb);
/* As kt__store_select, but a filter that names something (a kernel, a
 * device, sizes) and matches no key is KT_NOTFOUND, saying what it asked
 * for: show, export and clear act on what was named, never on nothing. */
int kt__store_select_some(kt__store *s, const kt_cache_filter *f, kt__key_row **rows, int *n, kt__errbuf *eb);
void kt__key_rows_free(kt__key_row *rows, int n);

/* True when every "NAME=VALUE" token of WANT is among those of HAVE. */
bool kt__sizes_match(const char *have, const char *want);

#endif

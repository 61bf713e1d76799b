/* Kept device allocations of a worker (devpool.h). */
#include "devpool.h"

#include <stdlib.h>

static void push(kt__devpool_entry **list, int *n, int *cap, kt__devpool_entry e) {
  if (*n == *cap) {
    *cap = *cap ? 2 * *cap : 8;
    *list = kt__xreallocarray(*list, (size_t)*cap, sizeof **list);
  }
  (*list)[(*n)++] = e;
}

static kt__devpool_entry take_at(kt__devpool_entry *list, int *n, int i) {
  kt__devpool_entry e = list[i];
  list[i] = list[--*n];
  return e;
}

/* The smallest of the first N entries of LIST of at least BYTES, or -1. */
static int best_fit(const kt__devpool_entry *list, int n, size_t bytes) {
  int fit = -1;
  for (int i = 0; i < n; i++)
    if (list[i].bytes >= bytes && (fit < 0 || list[i].bytes < list[fit].bytes)) fit = i;
  return fit;
}

int kt__devpool_take(kt__devpool *pool, const kt__backend *be, void *state, size_t bytes, void **buf, kt__errbuf *eb) {
  if (!pool) return kt__be_alloc(be, state, bytes, buf, eb);
  int fit = best_fit(pool->kept, pool->nkept, bytes);
  kt__devpool_entry e;
  if (fit >= 0) {
    e = take_at(pool->kept, &pool->nkept, fit);
    pool->reused++;
  } else {
    e.bytes = bytes;
    KT__FORWARD(kt__be_alloc(be, state, bytes, &e.buf, eb));
    pool->allocated++;
  }
  push(&pool->lent, &pool->nlent, &pool->caplent, e);
  *buf = e.buf;
  return KT_OK;
}

void kt__devpool_give(kt__devpool *pool, const kt__backend *be, void *state, void *buf) {
  if (!buf) return;
  if (!pool) {
    kt__be_release(be, state, buf);
    return;
  }
  for (int i = 0; i < pool->nlent; i++)
    if (pool->lent[i].buf == buf) {
      push(&pool->kept, &pool->nkept, &pool->capkept, take_at(pool->lent, &pool->nlent, i));
      return;
    }
  kt__be_release(be, state, buf); /* not the pool's: released as it would have been */
}

int kt__devpool_trim(kt__devpool *pool, const kt__backend *be, void *state, const size_t *spare, int n) {
  int spared = 0; /* the first SPARED kept entries are spared */
  for (int s = 0; s < n; s++) {
    int fit = best_fit(pool->kept + spared, pool->nkept - spared, spare[s]);
    if (fit < 0) continue;
    kt__devpool_entry e = pool->kept[spared + fit];
    pool->kept[spared + fit] = pool->kept[spared];
    pool->kept[spared++] = e;
  }
  int freed = pool->nkept - spared;
  for (int i = spared; i < pool->nkept; i++) kt__be_release(be, state, pool->kept[i].buf);
  pool->nkept = spared;
  return freed;
}

void kt__devpool_count_anew(kt__devpool *pool) { pool->reused = pool->allocated = 0; }

void kt__devpool_free(kt__devpool *pool, const kt__backend *be, void *state) {
  kt__devpool_trim(pool, be, state, NULL, 0);
  for (int i = 0; i < pool->nlent; i++) kt__be_release(be, state, pool->lent[i].buf);
  free(pool->kept);
  free(pool->lent);
  *pool = (kt__devpool){0};
}

/* The device allocations of a worker that outlives one tuning (a warm
 * helper's): what one tuning's buffers released is kept, and the next
 * tuning's buffers are taken from it where one is large enough, instead of
 * being freed and allocated again for every key of a kernel (issue 29: a
 * second key of 256 MB tensors on the H200 made five such buffers anew).
 * What the next tuning did not take is freed once its buffers are made, so
 * that the worker never holds more device memory than its largest tuning.
 * A pool belongs to one worker and one open device. */
#ifndef KT_DEVPOOL_H
#define KT_DEVPOOL_H

#include "../backend/backend.h"

typedef struct kt__devpool_entry {
  void *buf;
  size_t bytes; /* what was allocated: at least what was asked for */
} kt__devpool_entry;

typedef struct kt__devpool {
  kt__devpool_entry *kept; /* released, free to take */
  kt__devpool_entry *lent; /* taken and not given back */
  int nkept, nlent, capkept, caplent;
  int reused, allocated; /* takes served from the kept, and by a new allocation (the trace, the tests) */
} kt__devpool;

/* The smallest kept allocation of at least BYTES, else a new one of BYTES
 * (POOL NULL: always new, and kt__devpool_give releases it). */
int kt__devpool_take(kt__devpool *pool, const kt__backend *be, void *state, size_t bytes, void **buf, kt__errbuf *eb);
/* BUF (from kt__devpool_take; NULL: nothing) kept for a later take. */
void kt__devpool_give(kt__devpool *pool, const kt__backend *be, void *state, void *buf);
/* Frees every kept allocation (lent ones stay lent) but, for each of the
 * N sizes in SPARE, the one a take of that size would get next; returns how
 * many were freed. */
int kt__devpool_trim(kt__devpool *pool, const kt__backend *be, void *state, const size_t *spare, int n);
/* Counts the takes (REUSED, ALLOCATED) from zero again: a tuning's buffers
 * are counted apart from the last tuning's. */
void kt__devpool_count_anew(kt__devpool *pool);
/* Frees every allocation, kept or lent, and the pool's own memory. */
void kt__devpool_free(kt__devpool *pool, const kt__backend *be, void *state);

#endif

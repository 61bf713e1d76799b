/* Exhaustive search: every valid configuration, in index order. */
#include <stdlib.h>

#include "strategies.h"
#include "u64map.h"

typedef struct exhaustive {
  const kt__space *space;
  uint64_t next;   /* first index not yet looked at */
  kt__u64map told; /* results told before their turn (a warm start) */
} exhaustive;

static void *exhaustive_create(const kt__space *space, uint64_t seed, long budget) {
  exhaustive *e = kt__xcalloc(1, sizeof *e);
  e->space = space;
  return e;
}

static int exhaustive_ask(void *state, uint64_t *out, int max) {
  exhaustive *e = state;
  uint64_t size = kt__space_size(e->space);
  int n = 0;
  while (n < max && e->next < size) {
    uint64_t i = e->next++;
    if (!kt__u64map_has(&e->told, i) && kt__space_valid_index(e->space, i)) out[n++] = i;
  }
  return n;
}

static void exhaustive_tell(void *state, uint64_t index, kt__status status, double seconds) {
  exhaustive *e = state;
  if (index >= e->next) kt__u64map_put(&e->told, index, 0);
}

static void exhaustive_destroy(void *state) {
  exhaustive *e = state;
  kt__u64map_free(&e->told);
  free(e);
}

const kt__strategy_ops kt__strategy_exhaustive = {
    .name = "exhaustive",
    .summary = "every valid configuration, in index order",
    .create = exhaustive_create,
    .ask = exhaustive_ask,
    .tell = exhaustive_tell,
    .destroy = exhaustive_destroy,
};

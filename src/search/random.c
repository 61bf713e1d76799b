/* Random search: valid configurations drawn uniformly without replacement.
 * A lazy Fisher-Yates shuffle over [0, size) keeps only the swapped slots in
 * a hash map, so a 10^9-point space costs memory in proportion to the draws,
 * and the walk ends exactly when every configuration has been drawn. */
#include <stdlib.h>

#include "rng.h"
#include "strategies.h"
#include "u64map.h"

typedef struct random_search {
  const kt__space *space;
  kt__rng rng;
  kt__u64map swapped; /* slot -> index, where the shuffle moved things */
  uint64_t drawn;     /* slots [0, drawn) are settled */
  kt__u64map told;    /* every index told: skipped when drawn later */
} random_search;

static void *random_create(const kt__space *space, uint64_t seed, long budget) {
  random_search *r = kt__xcalloc(1, sizeof *r);
  r->space = space;
  kt__rng_seed(&r->rng, seed);
  return r;
}

static uint64_t slot_value(const random_search *r, uint64_t slot) {
  uint64_t v;
  return kt__u64map_get(&r->swapped, slot, &v) ? v : slot;
}

/* One Fisher-Yates step: the next index of the shuffled order. */
static uint64_t draw(random_search *r) {
  uint64_t size = kt__space_size(r->space);
  uint64_t i = r->drawn++;
  uint64_t j = i + kt__rng_below(&r->rng, size - i);
  uint64_t vi = slot_value(r, i), vj = slot_value(r, j);
  kt__u64map_put(&r->swapped, j, vi);
  return vj;
}

static int random_ask(void *state, uint64_t *out, int max) {
  random_search *r = state;
  int n = 0;
  while (n < max && r->drawn < kt__space_size(r->space)) {
    uint64_t index = draw(r);
    if (!kt__u64map_has(&r->told, index) && kt__space_valid_index(r->space, index)) out[n++] = index;
  }
  return n;
}

/* Told indices are remembered so that one told before it was drawn (a warm
 * start evaluates stored winners first) is not proposed again. */
static void random_tell(void *state, uint64_t index, kt__status status, double seconds) {
  random_search *r = state;
  kt__u64map_put(&r->told, index, 0);
}

static void random_destroy(void *state) {
  random_search *r = state;
  kt__u64map_free(&r->swapped);
  kt__u64map_free(&r->told);
  free(r);
}

const kt__strategy_ops kt__strategy_random = {
    .name = "random",
    .summary = "valid configurations uniformly at random, without repeats",
    .create = random_create,
    .ask = random_ask,
    .tell = random_tell,
    .destroy = random_destroy,
};

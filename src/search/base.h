/* What most strategies share: the space, a seeded generator, the set of
 * configurations already proposed (never propose twice), the costs told
 * back, the best so far, and ways to draw fresh valid configurations at
 * random or near a given one. Cost is log(seconds): ratios matter, not
 * differences; a failure costs INFINITY. */
#ifndef KT_SEARCH_BASE_H
#define KT_SEARCH_BASE_H

#include "../config.h" /* KT__MAX_NAMES: the most dims the buffers below hold */
#include "rng.h"
#include "strategy.h"
#include "u64map.h"

typedef struct kt__search_base {
  const kt__space *space;
  kt__rng rng;
  long budget;
  int ndims;
  int nfree; /* dims with more than one choice */
  int free_dims[KT__MAX_NAMES];
  kt__u64map seen; /* proposed: index -> 0 */
  kt__u64map cost; /* told: index -> cost bits */
  uint64_t best;   /* UINT64_MAX until an OK result */
  double best_cost;
  long proposed, told;
  bool exhausted; /* a full scan found nothing new */
} kt__search_base;

bool kt__base_init(kt__search_base *b, const kt__space *space, uint64_t seed, long budget);
void kt__base_free(kt__search_base *b);

double kt__base_cost_of(kt__status status, double seconds);
/* Records a result; returns its cost. */
double kt__base_tell(kt__search_base *b, uint64_t index, kt__status status, double seconds);

/* True (and INDEX marked as proposed) when INDEX is valid and new. */
bool kt__base_take(kt__search_base *b, uint64_t index);
/* The ask of a strategy that proposes one configuration at a time: up to MAX
 * calls of ONE(STATE, ...), each of which finds a valid new configuration or
 * returns false when none is left; each found is marked as proposed, so the
 * next call sees it as seen. Returns the count. */
int kt__base_ask(kt__search_base *b, bool (*one)(void *state, uint64_t *out), void *state, uint64_t *out, int max);
bool kt__base_fresh(const kt__search_base *b, uint64_t index);
/* A valid configuration never proposed, uniformly drawn when they are not
 * too rare; false when none is left. Does not mark it. */
bool kt__base_random(kt__search_base *b, uint64_t *out);
/* INDEX with K free dims changed: each to a neighbouring choice half of
 * the time, to any other choice otherwise. May be invalid or seen. */
uint64_t kt__base_mutate(kt__search_base *b, uint64_t index, int k);
/* A valid new configuration near INDEX (K changes, more when K's are
 * exhausted), else any random one; false when none is left. Does not mark. */
bool kt__base_near(kt__search_base *b, uint64_t index, int k, uint64_t *out);

/* Every configuration that differs from INDEX in exactly one dim (any other
 * choice), valid and new, shuffled; writes up to MAX, returns the count. */
int kt__base_hamming1(kt__search_base *b, uint64_t index, uint64_t *out, int max);

#endif

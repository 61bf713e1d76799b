/* A small reproducible PRNG for the search strategies: xoshiro256** seeded
 * through splitmix64, so that any 64-bit seed (0 included) gives a good
 * state and the same seed gives the same run on every platform. */
#ifndef KT_SEARCH_RNG_H
#define KT_SEARCH_RNG_H

#include <stdint.h>

typedef struct kt__rng {
  uint64_t s[4];
} kt__rng;

void kt__rng_seed(kt__rng *r, uint64_t seed);
uint64_t kt__rng_next(kt__rng *r);
/* Uniform in [0, n), unbiased; n > 0. */
uint64_t kt__rng_below(kt__rng *r, uint64_t n);
/* Uniform in [0, 1). */
double kt__rng_unit(kt__rng *r);
/* splitmix64 step: also a good 64-bit mixing function for hashing. */
uint64_t kt__splitmix64(uint64_t *state);

#endif

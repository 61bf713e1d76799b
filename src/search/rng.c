#include "rng.h"

#include <assert.h>

uint64_t kt__splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

void kt__rng_seed(kt__rng *r, uint64_t seed) {
  for (int i = 0; i < 4; i++) r->s[i] = kt__splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t kt__rng_next(kt__rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

/* Rejection from the largest multiple of n below 2^64 removes modulo bias. */
uint64_t kt__rng_below(kt__rng *r, uint64_t n) {
  assert(n > 0);
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do x = kt__rng_next(r);
  while (x >= limit);
  return x % n;
}

double kt__rng_unit(kt__rng *r) { return (double)(kt__rng_next(r) >> 11) * 0x1.0p-53; }

#include "base.h"

#include <math.h>
#include <string.h>

bool kt__base_init(kt__search_base *b, const kt__space *space, uint64_t seed, long budget) {
  memset(b, 0, sizeof *b);
  b->ndims = kt__space_ndims(space);
  if (b->ndims > KT__MAX_NAMES) return false;
  b->space = space;
  b->budget = budget;
  kt__rng_seed(&b->rng, seed);
  for (int d = 0; d < b->ndims; d++)
    if (kt__space_nchoices(space, d) > 1) b->free_dims[b->nfree++] = d;
  b->best = UINT64_MAX;
  b->best_cost = INFINITY;
  return true;
}

void kt__base_free(kt__search_base *b) {
  kt__u64map_free(&b->seen);
  kt__u64map_free(&b->cost);
}

double kt__base_cost_of(kt__status status, double seconds) {
  if (status != KT__ST_OK || !(seconds > 0) || !isfinite(seconds)) return INFINITY;
  return log(seconds);
}

double kt__base_tell(kt__search_base *b, uint64_t index, kt__status status, double seconds) {
  double c = kt__base_cost_of(status, seconds);
  uint64_t bits;
  memcpy(&bits, &c, sizeof bits);
  kt__u64map_put(&b->cost, index, bits);
  kt__u64map_put(&b->seen, index, 0); /* told unasked (a warm start): never propose it */
  b->told++;
  if (c < b->best_cost) {
    b->best_cost = c;
    b->best = index;
  }
  return c;
}

bool kt__base_fresh(const kt__search_base *b, uint64_t index) {
  return index < kt__space_size(b->space) && !kt__u64map_has(&b->seen, index) && kt__space_valid_index(b->space, index);
}

bool kt__base_take(kt__search_base *b, uint64_t index) {
  if (!kt__base_fresh(b, index)) return false;
  kt__u64map_put(&b->seen, index, 0);
  b->proposed++;
  return true;
}

int kt__base_ask(kt__search_base *b, bool (*one)(void *state, uint64_t *out), void *state, uint64_t *out, int max) {
  int n = 0;
  while (n < max && one(state, &out[n])) {
    kt__base_take(b, out[n]);
    n++;
  }
  return n;
}

/* Rejection first (cheap, uniform); when valid new points are rare, a scan
 * from a random start finds one or proves there is none. */
bool kt__base_random(kt__search_base *b, uint64_t *out) {
  if (b->exhausted) return false;
  uint64_t size = kt__space_size(b->space);
  for (int t = 0; t < 256; t++) {
    uint64_t i = kt__rng_below(&b->rng, size);
    if (kt__base_fresh(b, i)) {
      *out = i;
      return true;
    }
  }
  uint64_t start = kt__rng_below(&b->rng, size);
  for (uint64_t k = 0; k < size; k++) {
    uint64_t i = (start + k) % size;
    if (kt__base_fresh(b, i)) {
      *out = i;
      return true;
    }
  }
  b->exhausted = true;
  return false;
}

static int other_choice(kt__search_base *b, int d, int c) {
  int n = kt__space_nchoices(b->space, d);
  if (kt__rng_below(&b->rng, 2) == 0) { /* a step to a neighbouring choice */
    if (c == 0) return 1;
    if (c == n - 1) return n - 2;
    return kt__rng_below(&b->rng, 2) ? c + 1 : c - 1;
  }
  int o = (int)kt__rng_below(&b->rng, (uint64_t)n - 1);
  return o >= c ? o + 1 : o;
}

uint64_t kt__base_mutate(kt__search_base *b, uint64_t index, int k) {
  if (b->nfree == 0) return index;
  int ch[KT__MAX_NAMES];
  kt__space_decode(b->space, index, ch);
  for (int i = 0; i < k; i++) {
    int d = b->free_dims[kt__rng_below(&b->rng, (uint64_t)b->nfree)];
    ch[d] = other_choice(b, d, ch[d]);
  }
  return kt__space_encode(b->space, ch);
}

bool kt__base_near(kt__search_base *b, uint64_t index, int k, uint64_t *out) {
  for (int kk = k; kk <= k + 2 && kk <= b->nfree + 1; kk++)
    for (int t = 0; t < 32; t++) {
      uint64_t i = kt__base_mutate(b, index, kk);
      if (kt__base_fresh(b, i)) {
        *out = i;
        return true;
      }
    }
  return kt__base_random(b, out);
}

int kt__base_hamming1(kt__search_base *b, uint64_t index, uint64_t *out, int max) {
  int ch[KT__MAX_NAMES], n = 0;
  kt__space_decode(b->space, index, ch);
  for (int f = 0; f < b->nfree; f++) {
    int d = b->free_dims[f], keep = ch[d];
    for (int c = 0; c < kt__space_nchoices(b->space, d) && n < max; c++) {
      if (c == keep) continue;
      ch[d] = c;
      uint64_t i = kt__space_encode(b->space, ch);
      if (kt__base_fresh(b, i)) out[n++] = i;
    }
    ch[d] = keep;
  }
  for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
    int j = (int)kt__rng_below(&b->rng, (uint64_t)i + 1);
    uint64_t t = out[i];
    out[i] = out[j];
    out[j] = t;
  }
  return n;
}

#include "u64map.h"

#include <stdlib.h>

#include "../common.h"
#include "rng.h"

static size_t slot_of(const kt__u64map *m, uint64_t key) {
  uint64_t h = key;
  return (size_t)kt__splitmix64(&h) & (m->cap - 1);
}

/* The slot holding KEY, or the empty slot where it would go. */
static size_t find(const kt__u64map *m, uint64_t key) {
  size_t i = slot_of(m, key);
  while (m->used[i] && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
  return i;
}

bool kt__u64map_get(const kt__u64map *m, uint64_t key, uint64_t *val) {
  if (!m->cap) return false;
  size_t i = find(m, key);
  if (!m->used[i]) return false;
  if (val) *val = m->vals[i];
  return true;
}

bool kt__u64map_has(const kt__u64map *m, uint64_t key) { return kt__u64map_get(m, key, NULL); }

static void grow(kt__u64map *m) {
  kt__u64map big = {0};
  big.cap = m->cap ? m->cap * 2 : 64;
  big.keys = kt__xcalloc(big.cap, sizeof *big.keys);
  big.vals = kt__xcalloc(big.cap, sizeof *big.vals);
  big.used = kt__xcalloc(big.cap, 1);
  for (size_t i = 0; i < m->cap; i++)
    if (m->used[i]) kt__u64map_put(&big, m->keys[i], m->vals[i]);
  kt__u64map_free(m);
  *m = big;
}

bool kt__u64map_put(kt__u64map *m, uint64_t key, uint64_t val) {
  if ((m->len + 1) * 4 > m->cap * 3) grow(m); /* load factor at most 3/4 */
  size_t i = find(m, key);
  bool fresh = !m->used[i];
  m->used[i] = 1;
  m->keys[i] = key;
  m->vals[i] = val;
  m->len += fresh;
  return fresh;
}

void kt__u64map_free(kt__u64map *m) {
  free(m->keys);
  free(m->vals);
  free(m->used);
  *m = (kt__u64map){0};
}

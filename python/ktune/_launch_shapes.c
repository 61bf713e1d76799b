/* The shape table: see _launch_shapes.h. */
#include "_launch_shapes.h"

#include <stdlib.h>
#include <string.h>

void ktx_shapes_init(ktx_shapes *t, int keylen, int nsizes, int nscalars) {
  memset(t, 0, sizeof *t);
  t->keylen = keylen;
  t->nsizes = nsizes;
  t->nscalars = nscalars;
}

/* FNV-1a over the key's bytes. */
static size_t key_hash(const int64_t *key, int n) {
  uint64_t h = 1469598103934665603u;
  const unsigned char *p = (const unsigned char *)key;
  for (size_t i = 0; i < (size_t)n * sizeof *key; i++) h = (h ^ p[i]) * 1099511628211u;
  return (size_t)h;
}

static size_t slot_of(const ktx_shapes *t, const int64_t *key) {
  size_t mask = t->cap - 1, i = key_hash(key, t->keylen) & mask;
  while (t->slots[i] && memcmp(t->slots[i]->key, key, (size_t)t->keylen * sizeof *key)) i = (i + 1) & mask;
  return i;
}

ktx_shape *ktx_shapes_find(const ktx_shapes *t, const int64_t *key) {
  return t->cap ? t->slots[slot_of(t, key)] : NULL;
}

/* Doubles the slots (at most half are used, so that probes stay short). */
static int grow(ktx_shapes *t) {
  ktx_shapes bigger = *t;
  bigger.cap = t->cap ? 2 * t->cap : 16;
  bigger.slots = calloc(bigger.cap, sizeof *bigger.slots);
  if (!bigger.slots) return 0;
  for (size_t i = 0; i < t->cap; i++)
    if (t->slots[i]) bigger.slots[slot_of(&bigger, t->slots[i]->key)] = t->slots[i];
  free(t->slots);
  *t = bigger;
  return 1;
}

ktx_shape *ktx_shapes_add(ktx_shapes *t, const int64_t *key) {
  if (2 * (t->count + 1) > t->cap && !grow(t)) return NULL;
  size_t keybytes = (size_t)t->keylen * sizeof(int64_t), sizebytes = (size_t)t->nsizes * sizeof(int64_t);
  size_t boundbytes = (size_t)t->nscalars * sizeof(uint64_t);
  ktx_shape *s = calloc(1, sizeof *s + keybytes + sizebytes + boundbytes + (size_t)t->nscalars + 1);
  if (!s) return NULL;
  memcpy(s->key, key, keybytes);
  s->sizes = (int64_t *)((char *)s->key + keybytes);
  s->bound = (uint64_t *)((char *)s->sizes + sizebytes);
  s->has_bound = (unsigned char *)s->bound + boundbytes;
  t->slots[slot_of(t, key)] = s;
  t->count++;
  return s;
}

void ktx_shapes_free(ktx_shapes *t) {
  for (size_t i = 0; i < t->cap; i++) free(t->slots[i]);
  free(t->slots);
  t->slots = NULL;
  t->cap = t->count = 0;
}

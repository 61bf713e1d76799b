/* The shapes a kernel was called with, for the extension's per-call path:
 * per key (every tensor's extents, then the sizes given as keywords, 0 for
 * one not given) what kt_launch takes (the runtime sizes) and the scalars
 * the @kernel line binds from them, worked out once per shape. An open-
 * addressing table of entries that never move once made (a launch holds one
 * while the GIL is released). */
#ifndef KTUNE_LAUNCH_SHAPES_H
#define KTUNE_LAUNCH_SHAPES_H

#include <stddef.h>
#include <stdint.h>

typedef struct ktx_shape {
  int launched;    /* launched once: the next launch cannot tune */
  int64_t *sizes;  /* kt_launch's sizes (nsizes) */
  uint64_t *bound; /* per scalar: its value from its @kernel expression */
  unsigned char *has_bound;
  int64_t key[]; /* keylen */
} ktx_shape;

typedef struct ktx_shapes {
  int keylen, nsizes, nscalars;
  size_t count, cap; /* cap: a power of two, or 0 */
  ktx_shape **slots;
} ktx_shapes;

void ktx_shapes_init(ktx_shapes *t, int keylen, int nsizes, int nscalars);
ktx_shape *ktx_shapes_find(const ktx_shapes *t, const int64_t *key);
/* A new zeroed entry for KEY (not in T); NULL when out of memory. */
ktx_shape *ktx_shapes_add(ktx_shapes *t, const int64_t *key);
void ktx_shapes_free(ktx_shapes *t);

#endif

/* An open-addressing hash map from uint64 keys to uint64 values, used by the
 * strategies as a "seen" set (value ignored) and as the sparse swap table of
 * a lazy Fisher-Yates shuffle. Keys are arbitrary, UINT64_MAX included. */
#ifndef KT_SEARCH_U64MAP_H
#define KT_SEARCH_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kt__u64map {
  uint64_t *keys, *vals;
  unsigned char *used;
  size_t cap, len; /* cap is 0 or a power of two */
} kt__u64map;

/* Zero-initialised is an empty map. */
bool kt__u64map_get(const kt__u64map *m, uint64_t key, uint64_t *val);
bool kt__u64map_has(const kt__u64map *m, uint64_t key);
/* Inserts or overwrites; returns true when the key was new. */
bool kt__u64map_put(kt__u64map *m, uint64_t key, uint64_t val);
void kt__u64map_free(kt__u64map *m);

#endif

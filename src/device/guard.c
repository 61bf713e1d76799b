/* Guard zones around device buffers (guard.h). The layout of one
 * allocation, in KT__GUARD_BYTES units (also the slice alignment):
 *
 *   [ front zone ][ tensor ... tensor | back zone ............ ]
 *                 ^ inner             ^ bytes    ^ back slice starts at the
 *                                                  last boundary inside the
 *                                                  tensor (TAIL bytes before
 *                                                  the zone)
 *
 * so that the back zone is at least KT__GUARD_BYTES long whatever the
 * tensor's size, and every slice starts where OpenCL allows. */
#include "guard.h"

#include <string.h>

/* A position-dependent pattern: a kernel that copies a block of memory
 * elsewhere does not rewrite the zone with itself by chance. */
static unsigned char pattern_byte(size_t i) { return (unsigned char)(0xC3u + 0x3Du * (unsigned)(i & 0xffff)); }

static void fill_pattern(unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++) p[i] = pattern_byte(i);
}

int kt__guarded_alloc(const kt__backend *be, void *state, size_t bytes, kt__guarded *g, kt__errbuf *eb) {
  *g = (kt__guarded){.bytes = bytes};
  size_t body = (bytes + KT__GUARD_BYTES - 1) / KT__GUARD_BYTES * KT__GUARD_BYTES;
  size_t total = KT__GUARD_BYTES + body + KT__GUARD_BYTES,
         back_at = KT__GUARD_BYTES + bytes / KT__GUARD_BYTES * KT__GUARD_BYTES;
  KT__FORWARD(kt__be_alloc(be, state, be->slice ? total : bytes, &g->whole, eb));
  if (!be->slice) {
    g->inner = g->whole;
    return KT_OK;
  }
  g->back_len = total - back_at;
  g->tail = KT__GUARD_BYTES + bytes - back_at;
  int rc = kt__be_slice(be, state, g->whole, KT__GUARD_BYTES, bytes, &g->inner, eb);
  if (rc == KT_OK) rc = kt__be_slice(be, state, g->whole, 0, KT__GUARD_BYTES, &g->front, eb);
  if (rc == KT_OK) rc = kt__be_slice(be, state, g->whole, back_at, g->back_len, &g->back, eb);
  if (rc == KT_NOTFOUND) { /* this device cannot: the whole buffer, no zones */
    kt__guarded_free(be, state, g);
    *g = (kt__guarded){.bytes = bytes};
    KT__FORWARD(kt__be_alloc(be, state, bytes, &g->whole, eb));
    g->inner = g->whole;
    return KT_OK;
  }
  if (rc != KT_OK) kt__guarded_free(be, state, g);
  return rc;
}

int kt__guarded_arm(const kt__backend *be, void *state, const kt__guarded *g, kt__errbuf *eb) {
  if (!g->front) return KT_OK;
  unsigned char zone[2 * KT__GUARD_BYTES];
  fill_pattern(zone, KT__GUARD_BYTES);
  KT__FORWARD(kt__be_upload(be, state, g->front, zone, KT__GUARD_BYTES, eb));
  if (g->tail) KT__FORWARD(kt__be_download(be, state, zone, g->back, g->back_len, eb));
  fill_pattern(zone + g->tail, g->back_len - g->tail);
  return kt__be_upload(be, state, g->back, zone, g->back_len, eb);
}

/* Changed bytes of a zone of N bytes at P, and the index of the first and last. */
static size_t changed(const unsigned char *p, size_t n, size_t *first, size_t *last) {
  size_t count = 0;
  for (size_t i = 0; i < n; i++)
    if (p[i] != pattern_byte(i)) {
      if (!count++) *first = i;
      *last = i;
    }
  return count;
}

int kt__guarded_check(const kt__backend *be, void *state, const kt__guarded *g, kt__guard_damage *d, kt__errbuf *eb) {
  *d = (kt__guard_damage){0};
  if (!g->front) return KT_OK;
  unsigned char zone[2 * KT__GUARD_BYTES];
  size_t first = 0, last = 0;
  KT__FORWARD(kt__be_download(be, state, zone, g->front, KT__GUARD_BYTES, eb));
  size_t n = changed(zone, KT__GUARD_BYTES, &first, &last);
  if (n) *d = (kt__guard_damage){.count = n, .before = true, .distance = KT__GUARD_BYTES - last};
  KT__FORWARD(kt__be_download(be, state, zone, g->back, g->back_len, eb));
  size_t m = changed(zone + g->tail, g->back_len - g->tail, &first, &last);
  if (m && !n) *d = (kt__guard_damage){.count = m, .before = false, .distance = first};
  else d->count += m;
  return KT_OK;
}

void kt__guarded_free(const kt__backend *be, void *state, kt__guarded *g) {
  kt__be_unslice(be, state, g->inner != g->whole ? g->inner : NULL);
  kt__be_unslice(be, state, g->front);
  kt__be_unslice(be, state, g->back);
  kt__be_release(be, state, g->whole);
  *g = (kt__guarded){0};
}

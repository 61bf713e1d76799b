/* Guard zones around device buffers (guard.h). The layout of one
 * allocation, in KT__SLICE_ALIGN units (every slice starts where OpenCL
 * allows), with ZONE bytes (kt__guard_zone_bytes) on each side:
 *
 *   [ front zone ][ tensor ... tensor | back zone ............ ]
 *                 ^ inner             ^ bytes    ^ back slice starts at the
 *                                                  last boundary inside the
 *                                                  tensor (TAIL bytes before
 *                                                  the zone)
 *
 * so that the back zone is at least ZONE bytes long whatever the tensor's
 * size. */
#include "guard.h"

#include <stdlib.h>
#include <string.h>

enum { PERIOD = 1 << 16 };

/* A position-dependent pattern (period PERIOD): a kernel that copies a
 * block of memory elsewhere does not rewrite the zone with itself by
 * chance. */
static unsigned char pattern_byte(size_t i) { return (unsigned char)(0xC3u + 0x3Du * (unsigned)(i & (PERIOD - 1))); }

/* One period of the pattern, to compare whole blocks with. */
static const unsigned char *pattern_period(void) {
  static unsigned char period[PERIOD];
  static bool made;
  if (!made) {
    for (size_t i = 0; i < PERIOD; i++) period[i] = pattern_byte(i);
    made = true;
  }
  return period;
}

static void fill_pattern(unsigned char *p, size_t n) {
  for (size_t at = 0; at < n; at += PERIOD) memcpy(p + at, pattern_period(), n - at < PERIOD ? n - at : PERIOD);
}

static size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

size_t kt__guard_zone_bytes(size_t bytes) {
  size_t body = round_up(bytes, KT__SLICE_ALIGN);
  return (body < KT__GUARD_MAX_BYTES ? body : KT__GUARD_MAX_BYTES) + KT__GUARD_MIN_BYTES;
}

/* The device copies of G's zones, where the backend can compare on the
 * device; without the memory, the zones are compared on the host. */
static void keep_zone_copies(const kt__backend *be, void *state, kt__devpool *pool, kt__guarded *g) {
  kt__errbuf ignored;
  if (!be->equal || !be->copy) return;
  if (kt__devpool_take(pool, be, state, g->zone, &g->front_copy, &ignored) != KT_OK) g->front_copy = NULL;
  if (g->front_copy && kt__devpool_take(pool, be, state, g->back_len, &g->back_copy, &ignored) != KT_OK) {
    kt__devpool_give(pool, be, state, g->front_copy);
    g->front_copy = NULL;
  }
}

int kt__guarded_alloc(const kt__backend *be, void *state, kt__devpool *pool, size_t bytes, kt__guarded *g,
                      kt__errbuf *eb) {
  *g = (kt__guarded){.bytes = bytes};
  size_t zone = kt__guard_zone_bytes(bytes), body = round_up(bytes, KT__SLICE_ALIGN);
  size_t total = zone + body + zone, back_at = zone + bytes / KT__SLICE_ALIGN * KT__SLICE_ALIGN;
  KT__FORWARD(kt__devpool_take(pool, be, state, be->slice ? total : bytes, &g->whole, eb));
  if (!be->slice) {
    g->inner = g->whole;
    return KT_OK;
  }
  g->zone = zone;
  g->back_len = total - back_at;
  g->tail = zone + bytes - back_at;
  g->host = kt__xmalloc(g->back_len > zone ? g->back_len : zone);
  int rc = kt__be_slice(be, state, g->whole, zone, bytes, &g->inner, eb);
  if (rc == KT_OK) rc = kt__be_slice(be, state, g->whole, 0, zone, &g->front, eb);
  if (rc == KT_OK) rc = kt__be_slice(be, state, g->whole, back_at, g->back_len, &g->back, eb);
  if (rc == KT_NOTFOUND) { /* this device cannot: the whole buffer, no zones */
    kt__guarded_free(be, state, pool, g);
    *g = (kt__guarded){.bytes = bytes};
    KT__FORWARD(kt__devpool_take(pool, be, state, bytes, &g->whole, eb));
    g->inner = g->whole;
    return KT_OK;
  }
  if (rc != KT_OK) kt__guarded_free(be, state, pool, g);
  else keep_zone_copies(be, state, pool, g);
  return rc;
}

int kt__guarded_arm(const kt__backend *be, void *state, const kt__guarded *g, kt__errbuf *eb) {
  if (!g->front) return KT_OK;
  fill_pattern(g->host, g->zone);
  KT__FORWARD(kt__be_upload(be, state, g->front, g->host, g->zone, eb));
  if (g->tail) KT__FORWARD(kt__be_download(be, state, g->host, g->back, g->back_len, eb));
  fill_pattern(g->host + g->tail, g->back_len - g->tail);
  KT__FORWARD(kt__be_upload(be, state, g->back, g->host, g->back_len, eb));
  if (!g->front_copy) return KT_OK;
  KT__FORWARD(kt__be_copy(be, state, g->front_copy, g->front, g->zone, eb));
  return kt__be_copy(be, state, g->back_copy, g->back, g->back_len, eb);
}

/* Whether both zones still equal their copies, compared on the device. The
 * back slice starts with the tensor's last TAIL bytes, which a run writes:
 * they are copied into the back copy first. */
static int intact_on_device(const kt__backend *be, void *state, const kt__guarded *g, bool *intact, kt__errbuf *eb) {
  KT__FORWARD(kt__be_equal(be, state, g->front, g->front_copy, g->zone, intact, eb));
  if (!*intact) return KT_OK;
  if (g->tail) KT__FORWARD(kt__be_copy(be, state, g->back_copy, g->back, g->tail, eb));
  return kt__be_equal(be, state, g->back, g->back_copy, g->back_len, intact, eb);
}

/* Changed bytes of a zone of N bytes at P, and the index of the first and
 * last: whole periods compared at once, bytes only where one differs. */
static size_t changed(const unsigned char *p, size_t n, size_t *first, size_t *last) {
  size_t count = 0;
  for (size_t at = 0; at < n; at += PERIOD) {
    size_t len = n - at < PERIOD ? n - at : PERIOD;
    if (memcmp(p + at, pattern_period(), len) == 0) continue;
    for (size_t i = at; i < at + len; i++)
      if (p[i] != pattern_byte(i)) {
        if (!count++) *first = i;
        *last = i;
      }
  }
  return count;
}

int kt__guarded_check(const kt__backend *be, void *state, const kt__guarded *g, kt__guard_damage *d, kt__errbuf *eb) {
  *d = (kt__guard_damage){0};
  if (!g->front) return KT_OK;
  bool intact = false;
  if (g->front_copy) KT__FORWARD(intact_on_device(be, state, g, &intact, eb));
  if (intact) return KT_OK;
  size_t first = 0, last = 0; /* where: on the host */
  KT__FORWARD(kt__be_download(be, state, g->host, g->front, g->zone, eb));
  size_t n = changed(g->host, g->zone, &first, &last);
  if (n) *d = (kt__guard_damage){.count = n, .before = true, .distance = g->zone - last};
  KT__FORWARD(kt__be_download(be, state, g->host, g->back, g->back_len, eb));
  size_t m = changed(g->host + g->tail, g->back_len - g->tail, &first, &last);
  if (m && !n) *d = (kt__guard_damage){.count = m, .before = false, .distance = first};
  else d->count += m;
  return KT_OK;
}

void kt__guarded_free(const kt__backend *be, void *state, kt__devpool *pool, kt__guarded *g) {
  kt__be_unslice(be, state, g->inner != g->whole ? g->inner : NULL);
  kt__be_unslice(be, state, g->front);
  kt__be_unslice(be, state, g->back);
  kt__devpool_give(pool, be, state, g->whole);
  kt__devpool_give(pool, be, state, g->front_copy);
  kt__devpool_give(pool, be, state, g->back_copy);
  free(g->host);
  *g = (kt__guarded){0};
}

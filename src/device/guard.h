/* Guard zones: every tensor's device buffer sits between two zones of a
 * known pattern, checked after each verified run, so that a configuration
 * that writes outside a tensor is caught (and never wins) even on devices
 * where a stray store does not fault; kt_launch would otherwise let it
 * corrupt an application's memory. Used by the device worker. */
#ifndef KT_GUARD_H
#define KT_GUARD_H

#include "../backend/backend.h"

enum { KT__GUARD_BYTES = KT__SLICE_ALIGN };

typedef struct kt__guarded {
  void *whole;        /* the allocation */
  void *inner;        /* the tensor: what kernels, uploads and downloads see */
  void *front, *back; /* slices over the zones; NULL: the backend cannot slice */
  size_t bytes;       /* the tensor's */
  size_t back_len;    /* the back slice starts at a slice boundary, so its first */
  size_t tail;        /* TAIL bytes are the tensor's end and the zone follows */
} kt__guarded;

/* Where a configuration wrote outside: COUNT bytes changed, the nearest
 * DISTANCE bytes before the tensor's start (BEFORE) or past its end. */
typedef struct kt__guard_damage {
  size_t count;
  bool before;
  size_t distance;
} kt__guard_damage;

/* Allocates BYTES with zones around them where the backend can slice (else
 * plain, and the checks find nothing). */
int kt__guarded_alloc(const kt__backend *be, void *state, size_t bytes, kt__guarded *g, kt__errbuf *eb);
/* Writes the pattern into both zones; the tensor's bytes are kept. */
int kt__guarded_arm(const kt__backend *be, void *state, const kt__guarded *g, kt__errbuf *eb);
/* Compares both zones with the pattern: D->count is 0 when intact. */
int kt__guarded_check(const kt__backend *be, void *state, const kt__guarded *g, kt__guard_damage *d, kt__errbuf *eb);
void kt__guarded_free(const kt__backend *be, void *state, kt__guarded *g);

#endif

/* Guard zones: every tensor's device buffer sits between two zones of a
 * known pattern, checked after each verified run and after the timed runs,
 * so that a configuration that writes outside a tensor is caught (and never
 * wins) even on devices where a stray store does not fault; kt_launch would
 * otherwise let it corrupt an application's memory. Each zone is as long as
 * the tensor (at most KT__GUARD_MAX_BYTES) plus KT__GUARD_MIN_BYTES, so that
 * the common stride bugs land in it: a negative index times a row length
 * (row -1 is at most the tensor's length before it), a row past the last.
 * Used by the device worker. */
#ifndef KT_GUARD_H
#define KT_GUARD_H

#include "../backend/backend.h"
#include "devpool.h"

enum {
  KT__GUARD_MIN_BYTES = 16 * KT__SLICE_ALIGN,  /* 64 KiB: a few rows of a small tensor */
  KT__GUARD_MAX_BYTES = 1024 * KT__SLICE_ALIGN /* 4 MiB: row -1 of a tensor of up to 4 MiB */
};

typedef struct kt__guarded {
  void *whole;         /* the allocation */
  void *inner;         /* the tensor: what kernels, uploads and downloads see */
  void *front, *back;  /* slices over the zones; NULL: the backend cannot slice */
  size_t bytes;        /* the tensor's */
  size_t zone;         /* each zone's length (a multiple of KT__SLICE_ALIGN) */
  size_t back_len;     /* the back slice starts at a slice boundary, so its first */
  size_t tail;         /* TAIL bytes are the tensor's end and the zone follows */
  unsigned char *host; /* a host buffer as long as the longer slice, for arming and checking */
  /* Device copies of the zones as armed, where the backend compares and
   * copies on the device: a check then compares each zone with its copy
   * there and downloads the zones only to say where a difference is. Both
   * zones of a 256 MB tensor are 8 MiB, downloaded after every verified run
   * and every timed one (issue 29). NULL: downloaded and compared on the
   * host. */
  void *front_copy, *back_copy;
} kt__guarded;

/* Where a configuration wrote outside: COUNT bytes changed, the nearest
 * DISTANCE bytes before the tensor's start (BEFORE) or past its end. */
typedef struct kt__guard_damage {
  size_t count;
  bool before;
  size_t distance;
} kt__guard_damage;

/* The length of each zone around a tensor of BYTES. */
size_t kt__guard_zone_bytes(size_t bytes);

/* Allocates BYTES with zones around them where the backend can slice (else
 * plain, and the checks find nothing), from POOL's kept allocations where
 * one is large enough (NULL: a new one). The tensor and its zones are
 * written before every use, so what a kept allocation held does not matter. */
int kt__guarded_alloc(const kt__backend *be, void *state, kt__devpool *pool, size_t bytes, kt__guarded *g,
                      kt__errbuf *eb);
/* Writes the pattern into both zones (and their device copies); the
 * tensor's bytes are kept. */
int kt__guarded_arm(const kt__backend *be, void *state, const kt__guarded *g, kt__errbuf *eb);
/* Compares both zones with the pattern: D->count is 0 when intact. */
int kt__guarded_check(const kt__backend *be, void *state, const kt__guarded *g, kt__guard_damage *d, kt__errbuf *eb);
/* Gives the allocation back to POOL (NULL: releases it). */
void kt__guarded_free(const kt__backend *be, void *state, kt__devpool *pool, kt__guarded *g);

#endif

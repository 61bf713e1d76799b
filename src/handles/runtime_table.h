/* A kernel handle's table of launched shapes, kt_launch's hot path: the
 * exact sizes -> a loaded function and its launch geometry, in an
 * open-addressing hash table, beside the configurations loaded in this
 * process. runtime/runtime.c fills it on a miss; kt_kernel_destroy frees
 * it. */
#ifndef KT_RUNTIME_TABLE_H
#define KT_RUNTIME_TABLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "../backend/backend.h"
#include "../config.h" /* KT__MAX_NAMES */

enum { KT__RT_MAX_SIZES = 16, KT__RT_MAX_ARGS = 64 };

/* One configuration compiled and loaded in this process; shapes that get
 * the same configuration share it (bucketed keys make that common). */
typedef struct kt__rt_config {
  int64_t values[KT__MAX_NAMES];
  void *fn;
} kt__rt_config;

typedef struct kt__rt_entry {
  bool used;
  int64_t sizes[KT__RT_MAX_SIZES];
  void *fn;
  kt__launch launch; /* geometry; args and stream are filled per call */
  /* KT_MISS_BACKGROUND: the tuning this shape waits for (runtime/miss_job.h),
   * set when the entry is made and never changed; NULL otherwise. Once it
   * ends, ADOPTED is the entry launched instead (the winner's, or a copy of
   * this one when it failed), published once with release order. */
  void *job;
  _Atomic(struct kt__rt_entry *) adopted;
} kt__rt_entry;

typedef struct kt__runtime_table {
  const kt__backend *be;
  void *state;       /* the backend opened in this process (on the first load) */
  bool device_known; /* DEVICE probed (before STATE exists) */
  kt__device_info device;
  kt__rt_entry *entries;
  int cap, n; /* cap is a power of two, at least twice n */
  kt__rt_config *configs;
  int nconfigs;
  int nparams;
  unsigned char scalar_size[KT__RT_MAX_ARGS]; /* 0 for tensors */
  /* Background tunings: the lock that makes adopting a winner happen once
   * per entry, the adopted entries (freed with the table) and the jobs the
   * entries hold, released through RELEASE_JOB (the runtime's). */
  pthread_mutex_t adopt_lock;
  kt__rt_entry **adopted;
  int nadopted;
  void **jobs;
  int njobs;
  void (*release_job)(void *job);
} kt__runtime_table;

static inline uint64_t kt__rt_hash_sizes(const int64_t *sizes, int n) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < n; i++) {
    h ^= (uint64_t)sizes[i];
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
  }
  return h;
}

/* The entry of SIZES, or NULL. Inline: every launch looks up its shape. */
static inline kt__rt_entry *kt__rt_find(const kt__runtime_table *t, const int64_t *sizes, int n) {
  if (!t || !t->cap) return NULL;
  uint64_t mask = (uint64_t)(t->cap - 1);
  for (uint64_t i = kt__rt_hash_sizes(sizes, n) & mask;; i = (i + 1) & mask) {
    kt__rt_entry *e = &t->entries[i];
    if (!e->used) return NULL;
    if (memcmp(e->sizes, sizes, (size_t)n * sizeof *sizes) == 0) return e;
  }
}

/* The free slot for SIZES (not in the table), growing it first if needed. */
kt__rt_entry *kt__rt_slot(kt__runtime_table *t, const int64_t *sizes, int n);
/* Unloads every configuration, closes the backend and frees T (may be NULL). */
void kt__runtime_free(kt__runtime_table *t);

#endif

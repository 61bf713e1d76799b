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
  int64_t sizes[KT__RT_MAX_SIZES];
  void *fn;
  kt__launch launch; /* geometry; args and stream are filled per call */
  /* KT_MISS_BACKGROUND: the tuning this shape waits for (runtime/miss_job.h),
   * set when the entry is made and never changed; NULL otherwise. Once it
   * ends, ADOPTED is the entry launched instead (the winner's, or a copy of
   * this one when it failed), published once with release order. */
  void *job;
  _Atomic(struct kt__rt_entry *) adopted;
  /* KT_MISS_ONLINE, in the entry adopted once the verified configurations
   * are back: the measuring state (runtime/online.h) while the calls time
   * them; ADOPTED is then the winner's entry. NULL otherwise. */
  void *online;
} kt__rt_entry;

/* The slots of the hash table: pointers to entries, which never move once
 * made, so that a launch holding one is unaffected by the table growing. */
typedef struct kt__rt_slots {
  int cap; /* a power of two, at least twice the entries */
  _Atomic(kt__rt_entry *) slot[];
} kt__rt_slots;

typedef struct kt__runtime_table {
  const kt__backend *be;
  void *state;       /* the backend opened in this process (on the first load) */
  bool device_known; /* DEVICE probed (before STATE exists) */
  kt__device_info device;
  /* Launches read the slots without a lock; entries are added under LOCK
   * and published with release order, each complete before it is seen. A
   * grown table's old slots stay readable (RETIRED) until the table goes. */
  _Atomic(kt__rt_slots *) slots;
  int n;
  kt__rt_slots **retired;
  int nretired;
  kt__rt_config *configs;
  int nconfigs;
  int nparams;
  unsigned char scalar_size[KT__RT_MAX_ARGS]; /* 0 for tensors */
  /* Misses, loading configurations and adopting a background tuning's
   * winner (once per entry) happen under LOCK; the adopted entries are
   * freed with the table, and the jobs the entries hold are released
   * through RELEASE_JOB (the runtime's). */
  pthread_mutex_t lock;
  kt__rt_entry **adopted;
  int nadopted;
  void **jobs;
  int njobs;
  void (*release_job)(void *job);
  void (*release_online)(void *online); /* frees an adopted entry's ONLINE */
  /* A helper's worker could not copy tensors this process shared with it
   * (KTUNE_MISS_TENSORS=device): this handle's misses copy them through
   * host memory from then on (runtime.c). Under LOCK. */
  bool tensors_through_host;
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

/* The entry of SIZES, or NULL; any thread, no lock. Inline: every launch
 * looks up its shape. */
static inline kt__rt_entry *kt__rt_find(kt__runtime_table *t, const int64_t *sizes, int n) {
  kt__rt_slots *s = t ? atomic_load_explicit(&t->slots, memory_order_acquire) : NULL;
  if (!s) return NULL;
  uint64_t mask = (uint64_t)(s->cap - 1);
  for (uint64_t i = kt__rt_hash_sizes(sizes, n) & mask;; i = (i + 1) & mask) {
    kt__rt_entry *e = atomic_load_explicit(&s->slot[i], memory_order_acquire);
    if (!e) return NULL;
    if (memcmp(e->sizes, sizes, (size_t)n * sizeof *sizes) == 0) return e;
  }
}

/* Adds a copy of E (its SIZES not in the table), growing the table first
 * if needed, and returns the copy; under T's lock. */
kt__rt_entry *kt__rt_add(kt__runtime_table *t, const kt__rt_entry *e, int nsizes);
/* Unloads every configuration, closes the backend and frees T (may be NULL). */
void kt__runtime_free(kt__runtime_table *t);

#endif

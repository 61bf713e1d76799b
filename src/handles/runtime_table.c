/* The table of launched shapes (runtime_table.h). */
#include "runtime_table.h"

#include <stdlib.h>

static void grow(kt__runtime_table *t, int nsizes) {
  kt__rt_entry *old = t->entries;
  int oldcap = t->cap;
  t->cap = t->cap ? 2 * t->cap : 16;
  t->entries = kt__xcalloc((size_t)t->cap, sizeof *t->entries);
  t->n = 0;
  for (int i = 0; i < oldcap; i++)
    if (old[i].used) *kt__rt_slot(t, old[i].sizes, nsizes) = old[i];
  free(old);
}

kt__rt_entry *kt__rt_slot(kt__runtime_table *t, const int64_t *sizes, int n) {
  if (2 * (t->n + 1) > t->cap) grow(t, n);
  uint64_t mask = (uint64_t)(t->cap - 1);
  uint64_t i = kt__rt_hash_sizes(sizes, n) & mask;
  while (t->entries[i].used) i = (i + 1) & mask;
  t->n++;
  return &t->entries[i];
}

void kt__runtime_free(kt__runtime_table *t) {
  if (!t) return;
  for (int i = 0; i < t->nconfigs; i++) kt__be_unload(t->be, t->state, t->configs[i].fn);
  if (t->state) kt__be_close(t->be, t->state);
  for (int i = 0; i < t->nadopted; i++) free(t->adopted[i]);
  for (int i = 0; i < t->njobs; i++) t->release_job(t->jobs[i]);
  free(t->adopted);
  free(t->jobs);
  pthread_mutex_destroy(&t->adopt_lock);
  free(t->configs);
  free(t->entries);
  free(t);
}

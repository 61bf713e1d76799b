/* The table of launched shapes (runtime_table.h). */
#include "runtime_table.h"

#include <stdlib.h>

static kt__rt_slots *slots_new(int cap) {
  kt__rt_slots *s = kt__xcalloc(1, sizeof *s + (size_t)cap * sizeof s->slot[0]);
  s->cap = cap;
  for (int i = 0; i < cap; i++) atomic_init(&s->slot[i], NULL);
  return s;
}

/* E into a free slot of S (E's sizes not in it), published: a launch that
 * finds it sees it whole. */
static void slots_put(kt__rt_slots *s, kt__rt_entry *e, int nsizes) {
  uint64_t mask = (uint64_t)(s->cap - 1);
  uint64_t i = kt__rt_hash_sizes(e->sizes, nsizes) & mask;
  while (atomic_load_explicit(&s->slot[i], memory_order_relaxed)) i = (i + 1) & mask;
  atomic_store_explicit(&s->slot[i], e, memory_order_release);
}

/* Twice the slots, published whole; the old ones stay readable, for the
 * launches still probing them, until the table goes. */
static kt__rt_slots *grow(kt__runtime_table *t, kt__rt_slots *old, int nsizes) {
  kt__rt_slots *s = slots_new(old ? 2 * old->cap : 16);
  for (int i = 0; old && i < old->cap; i++) {
    kt__rt_entry *e = atomic_load_explicit(&old->slot[i], memory_order_relaxed);
    if (e) slots_put(s, e, nsizes);
  }
  atomic_store_explicit(&t->slots, s, memory_order_release);
  if (old) {
    t->retired = kt__xreallocarray(t->retired, (size_t)t->nretired + 1, sizeof *t->retired);
    t->retired[t->nretired++] = old;
  }
  return s;
}

kt__rt_entry *kt__rt_add(kt__runtime_table *t, const kt__rt_entry *e, int nsizes) {
  kt__rt_slots *s = atomic_load_explicit(&t->slots, memory_order_relaxed);
  if (!s || 2 * (t->n + 1) > s->cap) s = grow(t, s, nsizes);
  kt__rt_entry *copy = kt__xmalloc(sizeof *copy);
  memcpy(copy, e, sizeof *copy);
  atomic_init(&copy->adopted, NULL); /* a new entry: nothing adopted yet */
  slots_put(s, copy, nsizes);
  t->n++;
  return copy;
}

void kt__runtime_free(kt__runtime_table *t) {
  if (!t) return;
  for (int i = 0; i < t->nconfigs; i++) kt__be_unload(t->be, t->state, t->configs[i].fn);
  if (t->state) kt__be_close(t->be, t->state);
  kt__rt_slots *s = atomic_load_explicit(&t->slots, memory_order_relaxed);
  for (int i = 0; s && i < s->cap; i++) free(atomic_load_explicit(&s->slot[i], memory_order_relaxed));
  free(s);
  for (int i = 0; i < t->nretired; i++) free(t->retired[i]);
  free(t->retired);
  for (int i = 0; i < t->nadopted; i++) {
    if (t->adopted[i]->online) t->release_online(t->adopted[i]->online);
    free(t->adopted[i]);
  }
  for (int i = 0; i < t->njobs; i++) t->release_job(t->jobs[i]);
  free(t->adopted);
  free(t->jobs);
  pthread_mutex_destroy(&t->lock);
  free(t->configs);
  free(t);
}

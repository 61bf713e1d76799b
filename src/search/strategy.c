/* The strategy registry and the wrappers the core calls. */
#include "strategy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "strategies.h"

struct kt__strategy {
  const kt__strategy_ops *ops;
  void *state;
};

static const kt__strategy_ops *const registry[] = {
    &kt__strategy_exhaustive, &kt__strategy_random, &kt__strategy_annealing,    &kt__strategy_genetic,
    &kt__strategy_ils,        &kt__strategy_forest, &kt__strategy_forest_align,
};
enum { NSTRATEGIES = sizeof registry / sizeof registry[0] };

const kt__strategy_ops *kt__strategy_find(const char *name) {
  for (int i = 0; name && i < NSTRATEGIES; i++)
    if (strcmp(registry[i]->name, name) == 0) return registry[i];
  return NULL;
}

const char *const *kt__strategy_names(void) {
  static const char *names[NSTRATEGIES + 1];
  for (int i = 0; i < NSTRATEGIES; i++) names[i] = registry[i]->name;
  names[NSTRATEGIES] = NULL;
  return names;
}

kt__strategy *kt__strategy_create(const kt__strategy_ops *ops, const kt__space *space, uint64_t seed, long budget) {
  if (!ops || !space) return NULL;
  void *state = ops->create(space, seed, budget < 0 ? 0 : budget);
  if (!state) return NULL;
  kt__strategy *s = kt__xmalloc(sizeof *s);
  s->ops = ops;
  s->state = state;
  return s;
}

int kt__strategy_ask(kt__strategy *s, uint64_t *out, int max) { return max > 0 ? s->ops->ask(s->state, out, max) : 0; }

void kt__strategy_tell(kt__strategy *s, uint64_t index, kt__status status, double seconds) {
  s->ops->tell(s->state, index, status, seconds);
}

void kt__strategy_spent(kt__strategy *s, uint64_t index, double seconds, double left) {
  if (s->ops->spent && isfinite(seconds) && seconds >= 0) s->ops->spent(s->state, index, seconds, left);
}

const char *kt__strategy_name(const kt__strategy *s) { return s->ops->name; }

void kt__strategy_free(kt__strategy *s) {
  if (!s) return;
  s->ops->destroy(s->state);
  free(s);
}

/* ---- public: names and summaries ---- */

const char *const *kt_strategy_names(void) { return kt__strategy_names(); }

const char *kt_strategy_summary(const char *name) {
  const kt__strategy_ops *ops = kt__strategy_find(name);
  return ops ? ops->summary : NULL;
}

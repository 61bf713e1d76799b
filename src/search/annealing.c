/* Simulated annealing: a walk that moves to a random nearby configuration
 * when it is faster, and when slower with probability exp(-delta / T),
 * delta being the log-time difference, T cooling geometrically from
 * T_START to T_END over the budget. A failure is never accepted. When the
 * neighbourhood of the walker is used up it restarts from the best. */
#include <math.h>
#include <stdlib.h>

#include "base.h"
#include "strategies.h"

#define SA_T_START 0.3
#define SA_T_END 0.005
enum { SA_PLAN = 1000 }; /* steps planned for when the budget is unlimited */

typedef struct anneal {
  kt__search_base b;
  uint64_t cur;
  double cur_cost;
  long steps;
} anneal;

static void *anneal_create(const kt__space *space, uint64_t seed, long budget) {
  anneal *s = calloc(1, sizeof *s);
  if (!s || !kt__base_init(&s->b, space, seed, budget)) {
    free(s);
    return NULL;
  }
  s->cur = UINT64_MAX;
  s->cur_cost = INFINITY;
  return s;
}

static double temperature(const anneal *s) {
  double plan = s->b.budget > 0 ? (double)s->b.budget : SA_PLAN;
  double x = fmin(1.0, (double)s->steps / plan);
  return SA_T_START * pow(SA_T_END / SA_T_START, x);
}

static bool anneal_one(void *state, uint64_t *out) {
  anneal *s = state;
  if (s->cur == UINT64_MAX) return kt__base_random(&s->b, out);
  return kt__base_near(&s->b, s->cur, 1, out);
}

static int anneal_ask(void *state, uint64_t *out, int max) {
  anneal *s = state;
  return kt__base_ask(&s->b, anneal_one, s, out, max);
}

static void anneal_tell(void *state, uint64_t index, kt__status status, double seconds) {
  anneal *s = state;
  double c = kt__base_tell(&s->b, index, status, seconds);
  s->steps++;
  if (!isfinite(c)) return;
  double delta = c - s->cur_cost;
  if (delta <= 0 || kt__rng_unit(&s->b.rng) < exp(-delta / temperature(s))) {
    s->cur = index;
    s->cur_cost = c;
  }
}

static void anneal_destroy(void *state) {
  anneal *s = state;
  kt__base_free(&s->b);
  free(s);
}

const kt__strategy_ops kt__strategy_annealing = {
    .name = "annealing",
    .summary = "simulated annealing over nearby configurations, cooling over the budget",
    .create = anneal_create,
    .ask = anneal_ask,
    .tell = anneal_tell,
    .destroy = anneal_destroy,
};

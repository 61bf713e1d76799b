/* A genetic algorithm: a population of the best configurations measured so
 * far ((mu + lambda) replacement), children by binary tournament, uniform
 * crossover and per-choice mutation. A child that is invalid or already
 * measured is bred again, then mutated further, then replaced by a random
 * configuration. Failures have infinite cost, so they never breed. */
#include <math.h>
#include <stdlib.h>

#include "base.h"
#include "strategies.h"

enum { GA_POP = 16, GA_TRIES = 32 };

typedef struct member {
  uint64_t index;
  double cost;
} member;

typedef struct genetic {
  kt__search_base b;
  member pop[GA_POP];
  int npop;
} genetic;

static void *genetic_create(const kt__space *space, uint64_t seed, long budget) {
  genetic *g = calloc(1, sizeof *g);
  if (!g || !kt__base_init(&g->b, space, seed, budget)) {
    free(g);
    return NULL;
  }
  return g;
}

static const member *tournament(genetic *g) {
  const member *a = &g->pop[kt__rng_below(&g->b.rng, (uint64_t)g->npop)];
  const member *c = &g->pop[kt__rng_below(&g->b.rng, (uint64_t)g->npop)];
  return a->cost <= c->cost ? a : c;
}

static uint64_t breed(genetic *g) {
  const kt__space *sp = g->b.space;
  int a[KT__MAX_NAMES], c[KT__MAX_NAMES];
  kt__space_decode(sp, tournament(g)->index, a);
  kt__space_decode(sp, tournament(g)->index, c);
  for (int d = 0; d < g->b.ndims; d++)
    if (kt__rng_below(&g->b.rng, 2)) a[d] = c[d];
  uint64_t child = kt__space_encode(sp, a);
  /* Mutation: on average one choice per child. */
  int k = 0;
  for (int f = 0; f < g->b.nfree; f++) k += kt__rng_below(&g->b.rng, (uint64_t)g->b.nfree) == 0;
  return k ? kt__base_mutate(&g->b, child, k) : child;
}

static bool genetic_one(void *state, uint64_t *out) {
  genetic *g = state;
  if (g->npop < GA_POP / 2) return kt__base_random(&g->b, out);
  for (int t = 0; t < GA_TRIES; t++) {
    uint64_t child = breed(g);
    if (kt__base_fresh(&g->b, child)) {
      *out = child;
      return true;
    }
  }
  return kt__base_near(&g->b, tournament(g)->index, 2, out);
}

static int genetic_ask(void *state, uint64_t *out, int max) {
  genetic *g = state;
  return kt__base_ask(&g->b, genetic_one, g, out, max);
}

/* Keeps the GA_POP best: the newcomer replaces the worst when better. */
static void genetic_tell(void *state, uint64_t index, kt__status status, double seconds) {
  genetic *g = state;
  double c = kt__base_tell(&g->b, index, status, seconds);
  if (!isfinite(c)) return;
  if (g->npop < GA_POP) {
    g->pop[g->npop++] = (member){index, c};
    return;
  }
  int worst = 0;
  for (int i = 1; i < g->npop; i++)
    if (g->pop[i].cost > g->pop[worst].cost) worst = i;
  if (c < g->pop[worst].cost) g->pop[worst] = (member){index, c};
}

static void genetic_destroy(void *state) {
  genetic *g = state;
  kt__base_free(&g->b);
  free(g);
}

const kt__strategy_ops kt__strategy_genetic = {
    .name = "genetic",
    .summary = "genetic algorithm: tournament selection, uniform crossover, mutation, elitist replacement",
    .create = genetic_create,
    .ask = genetic_ask,
    .tell = genetic_tell,
    .destroy = genetic_destroy,
};

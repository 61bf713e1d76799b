/* Greedy iterated local search: from the best of a few random points,
 * try the configurations one choice away (in random order) and move to the
 * first that is faster; at a local optimum (every neighbour tried), jump
 * from the best so far by changing a few choices at random and descend
 * again from there. Failures cost INFINITY: never moved to. */
#include <math.h>
#include <stdlib.h>

#include "base.h"
#include "strategies.h"

enum { ILS_INIT = 5, ILS_MAX_NEIGHBOURS = 8192, ILS_JUMP = 3 };

typedef struct ils {
  kt__search_base b;
  uint64_t cur; /* UINT64_MAX until the start point is known */
  double cur_cost;
  uint64_t *nb; /* untried neighbours of CUR */
  int nnb, pos;
  uint64_t jump; /* the pending perturbation, UINT64_MAX when none */
} ils;

static void *ils_create(const kt__space *space, uint64_t seed, long budget) {
  ils *s = calloc(1, sizeof *s);
  if (!s || !kt__base_init(&s->b, space, seed, budget)) {
    free(s);
    return NULL;
  }
  s->nb = kt__xmalloc(ILS_MAX_NEIGHBOURS * sizeof *s->nb);
  s->cur = s->jump = UINT64_MAX;
  s->cur_cost = INFINITY;
  return s;
}

static void move_to(ils *s, uint64_t index, double cost) {
  s->cur = index;
  s->cur_cost = cost;
  s->nnb = kt__base_hamming1(&s->b, index, s->nb, ILS_MAX_NEIGHBOURS);
  s->pos = 0;
}

static bool next_neighbour(ils *s, uint64_t *out) {
  while (s->pos < s->nnb) {
    uint64_t i = s->nb[s->pos++];
    if (kt__base_fresh(&s->b, i)) {
      *out = i;
      return true;
    }
  }
  return false;
}

static bool ils_one(void *state, uint64_t *out) {
  ils *s = state;
  if (s->b.proposed < ILS_INIT || s->b.best == UINT64_MAX) return kt__base_random(&s->b, out);
  if (s->cur == UINT64_MAX) move_to(s, s->b.best, s->b.best_cost);
  if (next_neighbour(s, out)) return true;
  if (!kt__base_near(&s->b, s->b.best, ILS_JUMP, out)) return false;
  s->jump = *out;
  return true;
}

static int ils_ask(void *state, uint64_t *out, int max) {
  ils *s = state;
  return kt__base_ask(&s->b, ils_one, s, out, max);
}

static void ils_tell(void *state, uint64_t index, kt__status status, double seconds) {
  ils *s = state;
  double c = kt__base_tell(&s->b, index, status, seconds);
  if (index == s->jump) {
    s->jump = UINT64_MAX;
    if (isfinite(c)) move_to(s, index, c);
  } else if (c < s->cur_cost && s->cur != UINT64_MAX) {
    move_to(s, index, c);
  }
}

static void ils_destroy(void *state) {
  ils *s = state;
  kt__base_free(&s->b);
  free(s->nb);
  free(s);
}

const kt__strategy_ops kt__strategy_ils = {
    .name = "ils",
    .summary = "greedy iterated local search: first-improvement over one-choice changes, random restarts near the best",
    .create = ils_create,
    .ask = ils_ask,
    .tell = ils_tell,
    .destroy = ils_destroy,
};

/* Search strategies behind one interface: the tuner asks for configurations
 * to evaluate and tells back what it measured. A strategy never proposes the
 * same configuration twice, proposes only configurations that satisfy @where
 * (kt__space_valid_index), and returns 0 from ask when it has nothing left.
 * Failures are told with time INFINITY and their status, so that a strategy
 * learns where not to go. */
#ifndef KT_SEARCH_STRATEGY_H
#define KT_SEARCH_STRATEGY_H

#include "../space/space.h"

typedef struct kt__strategy kt__strategy;

typedef struct kt__strategy_ops {
  const char *name;
  const char *summary; /* one line for --help and docs */
  /* BUDGET: distinct configurations the tuner will evaluate at most
   * (0: unlimited); strategies may use it to plan. */
  void *(*create)(const kt__space *space, uint64_t seed, long budget);
  /* Up to MAX indices into OUT; 0 when done. */
  int (*ask)(void *state, uint64_t *out, int max);
  void (*tell)(void *state, uint64_t index, kt__status status, double seconds);
  /* Optional (NULL: not told). After tell: the seconds evaluating INDEX took
   * of the tuning's time (compilation, benchmarking, overheads; a failure
   * costs too), and the seconds left of a time budget (INFINITY: none), for
   * a strategy that weighs what a configuration costs against what it may
   * gain when compiles are slow. */
  void (*spent)(void *state, uint64_t index, double seconds, double left);
  void (*destroy)(void *state);
} kt__strategy_ops;

/* Registry: NULL when the name is unknown. */
const kt__strategy_ops *kt__strategy_find(const char *name);
/* Names of all strategies, NULL-terminated. */
const char *const *kt__strategy_names(void);

/* Wrappers the core calls (never the ops directly). */
kt__strategy *kt__strategy_create(const kt__strategy_ops *ops, const kt__space *space, uint64_t seed, long budget);
int kt__strategy_ask(kt__strategy *s, uint64_t *out, int max);
void kt__strategy_tell(kt__strategy *s, uint64_t index, kt__status status, double seconds);
void kt__strategy_spent(kt__strategy *s, uint64_t index, double seconds, double left);
const char *kt__strategy_name(const kt__strategy *s);
void kt__strategy_free(kt__strategy *s);

#endif

/* The choice of a tuning's strategy (policy.h) and kt_default_strategy. */
#include "policy.h"

#include <stdio.h>

/* The best strategy in the replay evaluation (docs/SEARCH.md) from 50 to
 * 400 evaluations is the random forest that sees power-of-two alignment (at
 * 25, plain `forest` is ahead by 0.003 of the optimum, inside the noise of
 * the seed; one model at every budget is simpler to reason about). Past a
 * few thousand evaluations, where no replay showed the model ahead, iterated
 * local search, which costs nothing per proposal, takes over. With only a
 * time budget the model is used whatever the space: it is the strategy that
 * weighs each configuration's predicted cost against the time left (the
 * spent op), and it refits by 1/32 shares past 200 results, so its own cost
 * grows about linearly with the evaluations. */
#define KT__MODEL_STRATEGY "forest_align"
#define KT__LARGE_BUDGET_STRATEGY "ils"
#define KT__TIMED_STRATEGY KT__MODEL_STRATEGY
enum { KT__MODEL_MAX_BUDGET = 2000 };

const char *kt_default_strategy(uint64_t valid_space_size, long budget) {
  if (budget <= 0 || valid_space_size <= (uint64_t)budget) return "exhaustive";
  return budget <= KT__MODEL_MAX_BUDGET ? KT__MODEL_STRATEGY : KT__LARGE_BUDGET_STRATEGY;
}

/* Without a budget, spaces up to this many valid configurations are walked
 * whole; larger ones get AUTO_BUDGET. With only a time budget, spaces up to
 * TIME_ONLY_EXHAUSTIVE are still walked in order. */
enum { UNLIMITED_EXHAUSTIVE = KT__VALID_COUNT_MAX / 100, AUTO_BUDGET = 400, TIME_ONLY_EXHAUSTIVE = 200 };

kt__strategy_choice kt__strategy_choose(const char *asked, uint64_t valid, long budget_configs, double budget_s,
                                        int stage) {
  kt__strategy_choice c = {.budget = budget_configs};
  if (asked && stage == 0) {
    c.ops = kt__strategy_find(asked);
    snprintf(c.reason, sizeof c.reason, "asked for");
  } else if (c.budget <= 0 && budget_s > 0 && stage == 0 && valid > TIME_ONLY_EXHAUSTIVE) {
    /* Only a time limit: search the most promising configurations first
     * rather than walk the space in index order until the time is spent. */
    c.ops = kt__strategy_find(KT__TIMED_STRATEGY);
    snprintf(c.reason, sizeof c.reason, "a time budget of %g s over %llu valid configurations", budget_s,
             (unsigned long long)valid);
  } else if ((c.budget <= 0 && valid <= UNLIMITED_EXHAUSTIVE) || (c.budget > 0 && valid <= (uint64_t)c.budget) ||
             stage == 1) {
    c.ops = kt__strategy_find("exhaustive");
    snprintf(c.reason, sizeof c.reason, "the %llu valid configurations fit the budget", (unsigned long long)valid);
  } else {
    if (c.budget <= 0) c.budget = AUTO_BUDGET;
    c.ops = kt__strategy_find(kt_default_strategy(valid, c.budget));
    snprintf(c.reason, sizeof c.reason, "the valid space (%s%llu) exceeds the budget of %ld",
             valid == UINT64_MAX ? "over " : "",
             (unsigned long long)(valid == UINT64_MAX ? KT__VALID_COUNT_MAX : valid), c.budget);
  }
  return c;
}

/* Which strategy a tuning stage uses when it does not name one, and why:
 * the whole space when it fits the budget, else the default strategy
 * (kt_default_strategy, the best of the replay evaluation in
 * docs/SEARCH.md). The tuner calls it once per stage. */
#ifndef KT_SEARCH_POLICY_H
#define KT_SEARCH_POLICY_H

#include "strategy.h"

/* Valid configurations are counted up to this many (the LIMIT of
 * kt__space_count_valid; UINT64_MAX beyond), and the policy's thresholds
 * are in its terms. */
enum { KT__VALID_COUNT_MAX = 1000000 };

typedef struct kt__strategy_choice {
  const kt__strategy_ops *ops; /* NULL: the strategy asked for is unknown */
  long budget;                 /* configurations the strategy plans for (0: unlimited) */
  char reason[128];            /* why this one, for the result */
} kt__strategy_choice;

/* The strategy of stage STAGE (0: @autotune, 1: @cluster) over VALID valid
 * configurations (UINT64_MAX: more than KT__VALID_COUNT_MAX), under a budget
 * of BUDGET_CONFIGS configurations and BUDGET_S seconds (0: none). ASKED,
 * the strategy named by the caller (NULL: none), applies to stage 0 only;
 * the cluster stage is walked whole. */
kt__strategy_choice kt__strategy_choose(const char *asked, uint64_t valid, long budget_configs, double budget_s,
                                        int stage);

#endif

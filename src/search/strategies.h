/* The strategies the registry knows (one file each); only strategy.c and the
 * tests name them directly, everything else finds them by name. */
#ifndef KT_SEARCH_STRATEGIES_H
#define KT_SEARCH_STRATEGIES_H

#include "strategy.h"

extern const kt__strategy_ops kt__strategy_exhaustive;
extern const kt__strategy_ops kt__strategy_random;
extern const kt__strategy_ops kt__strategy_annealing;
extern const kt__strategy_ops kt__strategy_genetic;
extern const kt__strategy_ops kt__strategy_ils;
extern const kt__strategy_ops kt__strategy_forest;
extern const kt__strategy_ops kt__strategy_forest_align;

#endif

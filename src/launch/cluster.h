/* Thread-block cluster shape of a launch: the values of the names
 * CLUSTER_X, CLUSTER_Y and CLUSTER_Z (docs/LANGUAGE.md, @cluster). */
#ifndef KT_CLUSTER_H
#define KT_CLUSTER_H

#include "../lang/expr.h"

/* Fills CLUSTER with the values ENV binds to CLUSTER_X/Y/Z (1 for a missing
 * one), or 0 0 0 when none of the three is bound: no cluster launch. */
void kt__cluster_dims(const kt__env *env, uint64_t cluster[3]);

#endif

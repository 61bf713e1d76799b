/* The launch description of one configuration, built in one place for the
 * device worker and for kt_launch: the geometry (@grid, @block, @shared),
 * the cluster shape, the scalar arguments and the tensor maps' inputs, all evaluated from the
 * configuration's values over the runtime sizes. */
#ifndef KT_LAUNCH_H
#define KT_LAUNCH_H

#include "../backend/backend.h"
#include "../config.h"

/* Fills L for configuration VALUES (over CONFIG's names) at runtime sizes
 * SIZES, with L->args = ARGS and L->nargs = DECL->nparams. With ARGS (may be
 * NULL: the caller passes every argument at each launch), each scalar
 * argument is evaluated too; tensors are left zero, for the caller's
 * buffers. KT_INVALID, the reason in EB, when a geometry or a scalar cannot
 * be evaluated. */
int kt__launch_describe(const kt__kernel_decl *decl, const kt__config *config, const int64_t *values,
                        const kt__env *sizes, kt__arg *args, kt__launch *l, kt__errbuf *eb);

#endif

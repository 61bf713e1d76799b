/* A tensor map parameter's encoding inputs (backend.h, kt__tensormap_spec),
 * evaluated for one configuration at the runtime sizes and checked against
 * what the Tensor Memory Accelerator accepts, so that a box the hardware
 * cannot copy is a constraint with its reason, found without a GPU. */
#ifndef KT_LAUNCH_TENSORMAP_H
#define KT_LAUNCH_TENSORMAP_H

#include "../backend/backend.h"

/* Fills SPEC for tensor map parameter P of DECL: the mapped tensor's shape
 * (innermost first) and row strides, the box and the swizzle, from ENV (the
 * configuration over the sizes). KT_INVALID with the reason in EB when an
 * expression fails or TMA cannot take the result (a box extent outside 1 to
 * 256, an innermost box row that is not a multiple of 16 bytes or is wider
 * than the swizzle span, a swizzle other than 0, 32, 64 or 128, a row stride
 * that is not a multiple of 16 bytes). */
int kt__tensormap_describe(const kt__kernel_decl *decl, int p, const kt__env *env, kt__tensormap_spec *spec,
                           kt__errbuf *eb);

#endif

/* @constant data (docs/LANGUAGE.md): arrays the kernel reads from a symbol
 * of its own module (a CUDA __constant__ array, a C global) rather than
 * from a parameter. Their contents are made once per tuning, per their
 * initial value, and copied into each loaded configuration's symbol before
 * it runs: every configuration, and kt_launch's, reads the same data. */
#ifndef KT_LAUNCH_CONSTANTS_H
#define KT_LAUNCH_CONSTANTS_H

#include "../backend/backend.h"
#include "args.h"

typedef struct kt__constants {
  kt__host_tensor *data; /* data[i].param indexes decl->constants */
  int n;
} kt__constants;

/* The contents of DECL's constants, filled per their initial value (random
 * from SEED + 0x10000 + i, so that they never share a stream with a
 * tensor; file("...") relative to the folder of SOURCE_PATH, the kernel's
 * file, checked for type and element count). Heap memory: made before the
 * worker is forked, never written after. *OUT NULL when DECL has none. */
int kt__constants_create(const kt__kernel_decl *decl, const char *source_path, uint64_t seed, kt__constants **out,
                         kt__errbuf *eb);
void kt__constants_free(kt__constants *c);

/* Copies every constant into FN's symbol of the same name (the backend's
 * set_constant). OK; COMPILE when the module lacks one or its size differs
 * (the message names both); RUNTIME when the copy fails. C NULL: nothing. */
kt__status kt__constants_set(const kt__backend *be, void *state, void *fn, const kt__kernel_decl *decl,
                             const kt__constants *c, kt__errbuf *eb);

#endif

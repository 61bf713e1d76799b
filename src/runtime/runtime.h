/* kt_launch's two steps, for the other ways to launch in this folder
 * (host.c): the table entry of a shape (found, or made by a miss), and the
 * launch of an entry on the caller's arguments. */
#ifndef KT_RUNTIME_H
#define KT_RUNTIME_H

#include "../handles/context.h"
#include "../handles/runtime_table.h"

/* The entry of SIZES in K's table; a miss applies the context's policy
 * (ARGS are what a tuning on the CPU backend starts from). */
int kt__rt_entry_for(kt_kernel *k, const int64_t *sizes, void *const *args, kt__rt_entry **out);
/* Launches entry E on ARGS (kt_launch's convention) on STREAM. */
int kt__rt_run(kt_kernel *k, const kt__rt_entry *e, void *const *args, void *stream);

#endif

/* kt_launch's internals that tests reach. */
#ifndef KT_RUNTIME_H
#define KT_RUNTIME_H

#include "../handles/context.h"

/* Opens K's device in this process as kt_launch's first miss does, and
 * gives the backend's state: until the API hands out the OpenCL context
 * (or takes the application's), a test makes its cl_mem buffers in that
 * context through kt__be_alloc. */
int kt__runtime_device(kt_kernel *k, void **state);

#endif

/* kt_launch's internals that the rest of this folder (host.c) and tests reach. */
#ifndef KT_RUNTIME_H
#define KT_RUNTIME_H

#include "../handles/context.h"

/* Opens K's device in this process as kt_launch's first miss does, and
 * gives the backend's state: kt_launch_host (host.c) makes its buffers
 * there, and tests make cl_mem buffers in ktune's own OpenCL context. */
int kt__runtime_device(kt_kernel *k, void **state);

#endif

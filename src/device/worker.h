/* The device worker process: owns the backend's device state, loads
 * configurations, verifies and times them, one request at a time
 * (protocol.h). A configuration that crashes or hangs kills only the worker;
 * the tuner (tuner/worker_client.c) records why and has the zygote fork a
 * new one. */
#ifndef KT_WORKER_H
#define KT_WORKER_H

#include <sys/types.h>

#include "protocol.h"

/* The worker's life, in the child the zygote forked: FD is its end of the
 * socket pair with the tuner, ZYGOTE the pid of its parent. Never returns. */
void kt__worker_main(const kt__worker_setup *s, int fd, pid_t zygote);

#endif

/* The tuning helper, ktune-tuner: the process kt_launch starts with
 * posix_spawn on a miss, so that the tuning runs in a process that
 * inherits no driver state from the application (which may have
 * initialised CUDA or OpenCL, and whose forked children could not use
 * them). It reads the request (tune_request.h) on one descriptor, waits
 * for the key's lock (key_lock.h), tunes on the caller's data unless the
 * winner was stored meanwhile, stores the results as it measures them,
 * and answers on another descriptor with one line: "tuned CONFIG",
 * "stored CONFIG" or "failed CODE" followed by the message. */
#ifndef KT_TUNE_HELPER_H
#define KT_TUNE_HELPER_H

/* The helper's main: `ktune-tuner --request FD --reply FD --ready FD
 * [--control FD --idle SECONDS [--prepare]]`; exit status 0 when it replied, 2 for bad
 * arguments or a bad request. With --control it stays warm after its
 * tuning: its device worker kept (tuner/worker_client.h), it serves the
 * application's next miss, which comes on the control socket as one byte
 * with the three descriptors of a request, and leaves once the application
 * closes that socket (it ended) or SECONDS pass without one. With
 * --prepare (kt_kernel_prepare) the request is bare
 * (kt__tune_request_create_bare): the helper opens its device worker,
 * keeps it, and waits for the first miss as a warm helper does. */
int kt__tune_helper_main(int argc, char **argv);

#endif

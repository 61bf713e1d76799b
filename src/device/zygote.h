/* The zygote: a small single-threaded process forked when tuning starts,
 * before the tuner loads any compiler or GPU library, whose only job is to
 * fork device workers on request.
 *
 * Why: a process that has initialised the CUDA driver cannot fork a child
 * that uses CUDA (cuInit fails in the child), and NVRTC loads libcuda when it
 * compiles. Workers forked by the zygote start from its clean state, however
 * often a fault forces a replacement. */
#ifndef KT_ZYGOTE_H
#define KT_ZYGOTE_H

#include <sys/types.h>

#include "../common.h"

typedef struct kt__zygote kt__zygote;

/* Runs in each new worker: FD is its end of a socket pair with the tuner,
 * ZYGOTE the pid of its parent. Must not return. */
typedef void (*kt__zygote_child_fn)(void *ud, int fd, pid_t zygote);

/* Forks the zygote. UD must point to memory that exists at this moment
 * (the zygote and its children see their copy of it). */
int kt__zygote_start(kt__zygote_child_fn fn, void *ud, kt__zygote **out, kt__errbuf *eb);
/* A new worker: its pid, the tuner's end of its socket pair, and the read
 * end of a pipe that carries the worker's stdout and stderr (whatever its
 * kernels print). Each worker leads its own process group. */
int kt__zygote_spawn(kt__zygote *z, pid_t *pid, int *fd, int *out_fd, kt__errbuf *eb);
/* Kills worker PID and its process group (anything it forked), and gives
 * its wait status. */
int kt__zygote_reap(kt__zygote *z, pid_t pid, int *status);
/* Ends the zygote, which kills its remaining workers' process groups; it
 * does the same when the tuner dies. NULL: no-op. */
void kt__zygote_stop(kt__zygote *z);

#endif

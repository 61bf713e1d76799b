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

#include "../backend/backend.h"

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
/* A zygote of a fresh image, for a tuner that holds a GPU driver a forked
 * child could not use (kt__zygote_driver_loaded): ktune-tuner (found as the
 * tuning helper is, proc/helper_exe.h) started with posix_spawn in its zygote
 * mode. Its workers are not forks of the tuner: each opens BE's DEVICE and
 * then waits to be bound to its tuning (protocol.h, KT__REQ_BIND), before
 * any other request. */
int kt__zygote_exec(const kt__backend *be, int device, kt__zygote **out, kt__errbuf *eb);
/* ktune-tuner --zygote BACKEND DEVICE PARENT FD: the spawned zygote's life
 * (FD its control socket, PARENT the tuner's pid). Returns only on bad
 * arguments (exit status 2). */
int kt__zygote_exec_main(int argc, char **argv);
/* The name of a backend's driver library (kt__backend.drivers: the CUDA
 * driver, the OpenCL ICD loader) this process has loaded, or NULL: a zygote
 * forked from it could not give its workers a usable device. */
const char *kt__zygote_driver_loaded(void);
/* Ends the zygote, which kills its remaining workers' process groups; it
 * does the same when the tuner dies. NULL: no-op. */
void kt__zygote_stop(kt__zygote *z);

#endif

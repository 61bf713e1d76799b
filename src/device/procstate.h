/* The process state a kernel that runs as host code (the CPU backend) must
 * leave as it found it: threads, timers, signal handlers and mask, child
 * processes, the working directory and the environment. A configuration
 * that changes any of them would change what the next configuration in the
 * same worker runs under (a thread that keeps writing an output, an alarm
 * that fires during someone else's run), so the worker compares a snapshot
 * after each run and retires when it differs. */
#ifndef KT_PROCSTATE_H
#define KT_PROCSTATE_H

#include <signal.h>

#include "../common.h"

typedef struct kt__procstate {
  int threads;
  struct sigaction actions[65]; /* by signal number, 1..64 */
  sigset_t mask;
  uint64_t cwd_hash, env_hash;
} kt__procstate;

/* The state now. */
void kt__procstate_take(kt__procstate *s);
/* False, with what changed since BEFORE in WHY, when the state differs; it
 * also disarms the timers it finds, so that they fire for nobody. */
bool kt__procstate_same(const kt__procstate *before, char *why, size_t size);

#endif

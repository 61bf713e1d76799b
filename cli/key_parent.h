/* A key process that ends with the process that started it. An MPI rank
 * killed with SIGKILL cannot stop its key processes itself, so each one
 * asks the kernel for a signal when its parent dies (PR_SET_PDEATHSIG):
 * SIGTERM, which a tuning takes as an interruption (what it finished is
 * kept, its workers and compilers end with it). */
#ifndef KTUNE_CLI_KEY_PARENT_H
#define KTUNE_CLI_KEY_PARENT_H

/* Marks this process as the parent its key processes watch: they inherit
 * the mark through the environment. */
void key_parent_mark(void);

/* In a key process started by a marked parent: SIGTERM when that parent
 * dies, and an exit at once (status 130) when it has died already. Called
 * first thing in main; nothing in a process started otherwise. */
void key_parent_watch(void);

#endif

/* A key of a sweep tuned by a ktune process of its own: the command line
 * again, for that key alone. On CUDA a sweep must run its keys this way (a
 * tuning worker forked from a process that loaded the CUDA driver cannot use
 * the GPU: docs/DESIGN.md, known limitations); a sweep over several devices
 * or MPI ranks runs one such process per device it measures on.
 *
 * The process is started, its standard output (when captured) read as it
 * comes, and waited for; its messages go straight to standard error. */
#ifndef KTUNE_CLI_KEY_PROCESS_H
#define KTUNE_CLI_KEY_PROCESS_H

#include <stddef.h>
#include <sys/types.h>

#include "keys.h"

typedef struct key_process {
  pid_t pid;  /* 0: not started, or waited for */
  int out_fd; /* its standard output when captured, else -1 */
  char *out;  /* what it wrote there so far (NUL-terminated), owned */
  size_t len, cap;
  int err_fd; /* its standard error when captured (KEY_PROCESS_STDERR), else -1 */
  char *err;  /* what it wrote there and the caller has not consumed (NUL-terminated), owned */
  size_t err_len, err_cap;
} key_process;

/* What key_process_start captures: standard output, standard error. */
enum { KEY_PROCESS_STDOUT = 1, KEY_PROCESS_STDERR = 2 };

/* The options of the sweep's own command line ARGV (ARGC of them) that a
 * key's process does not take again: --dim and --sizes always (the key's
 * sizes replace them), those in DROP (NULL-terminated; each an option
 * taking a value, e.g. "--device"; NULL: none) and the flags in DROP_FLAGS
 * (options without a value, e.g. "--mpi"; NULL: none). */
typedef struct key_command {
  int argc;
  char **argv;
  const char *const *drop;
  const char *const *drop_flags;
} key_command;

/* Starts the process for key K: CMD's options less the dropped ones, K's
 * sizes as --dim, then EXTRA (NULL-terminated "--device", "1", ...; NULL:
 * none). CAPTURE (KEY_PROCESS_STDOUT, KEY_PROCESS_STDERR or both; 1 is
 * KEY_PROCESS_STDOUT): what it writes there comes back through
 * key_process_read instead of going to ours. Returns 0, or -1 with errno
 * set (nothing started). */
int key_process_start(key_process *p, const key_command *cmd, const key *k, const char *const *extra, int capture);

/* Reads what the process has written to what is captured, without waiting
 * for more when NONBLOCK. Returns 1 while a captured stream is open, 0 once
 * it closed them (or nothing is captured), -1 on an error (errno set). */
int key_process_read(key_process *p, int nonblock);

/* Waits for the process to end (reading any captured output to its end
 * first) and returns its exit status, 130 when a signal stopped it. The
 * captured output stays in p->out until key_process_free. */
int key_process_wait(key_process *p);

void key_process_free(key_process *p);

#endif

/* Starting child processes and tying them to their parent: the one place
 * that forks, spawns and asks for a death signal (as libuv's
 * src/unix/process.c). The tuner forks its zygote and a device lister, the
 * zygote its workers; the zygote of a fresh image, the tuning helper, the C
 * compiler and a sweep's key processes are spawned. */
#ifndef KT_PROCESS_H
#define KT_PROCESS_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

/* Forks a child connected to this process by a socket pair whose ends are
 * close-on-exec, after flushing stdio (nothing buffered is written twice).
 * In the child: 0, with *FD its end; in the parent: the child's pid, with *FD
 * the parent's end. -1 with errno set, and no end left open, when the socket
 * pair or the fork fails. */
pid_t kt__proc_fork_connected(int *fd);

/* In a child: SIG when its parent dies (PR_SET_PDEATHSIG), and _exit(STATUS)
 * at once when PARENT (the parent's pid, taken before the fork or spawn) has
 * died before the request, when no signal would come. */
void kt__proc_die_with_parent(int sig, pid_t parent, int status);

/* One of this process's descriptors, which a spawned child gets as TARGET. */
typedef struct kt__proc_fd {
  int fd; /* < 0: left out */
  int target;
} kt__proc_fd;

enum { KT__PROC_MAX_FDS = 8 };

/* How a child is spawned; what is not asked for is inherited. */
typedef struct kt__proc_spawn_opts {
  const kt__proc_fd *fds; /* the descriptors it inherits (at most KT__PROC_MAX_FDS) */
  int nfds;
  bool null_stdin, null_stdout;    /* on /dev/null */
  int close_from;                  /* > 0: every descriptor from this one up closed (glibc 2.34 and later) */
  bool unblock_signals;            /* no signal blocked */
  const sigset_t *default_signals; /* these at their default action */
  bool own_group;                  /* leads a process group of its own */
  bool search_path;                /* PATH searched for a PATH without a slash (posix_spawnp) */
  char *const *envp;               /* NULL: this process's environment */
} kt__proc_spawn_opts;

/* Starts PATH with ARGV as O says (posix_spawn). 0 with *PID, or the errno
 * value of what failed. */
int kt__proc_spawn(const char *path, char *const argv[], const kt__proc_spawn_opts *o, pid_t *pid);

#endif

/* Forking, spawning and a child's life tied to its parent's (process.h). */
#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

extern char **environ;

pid_t kt__proc_fork_connected(int *fd) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return -1;
  fflush(NULL); /* nothing buffered may be written twice */
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(sv[0]);
    close(sv[1]);
    errno = e;
    return -1;
  }
  close(sv[pid == 0 ? 0 : 1]);
  *fd = sv[pid == 0 ? 1 : 0];
  return pid;
}

void kt__proc_die_with_parent(int sig, pid_t parent, int status) {
  prctl(PR_SET_PDEATHSIG, sig);
  if (getppid() != parent) _exit(status); /* the parent died before prctl: no signal comes */
}

/* The inherited descriptors as the child's TARGETs. Each is first moved
 * above the targets (close-on-exec there: MOVED closes them after the
 * spawn), since a dup2 of a descriptor onto itself would keep it
 * close-on-exec. 0, or the errno value of a failed move. */
static int add_fds(posix_spawn_file_actions_t *fa, const kt__proc_spawn_opts *o, int *moved, int *nmoved) {
  for (int i = 0; i < o->nfds && i < KT__PROC_MAX_FDS; i++) {
    if (o->fds[i].fd < 0) continue;
    int m = fcntl(o->fds[i].fd, F_DUPFD_CLOEXEC, 10);
    if (m < 0) return errno;
    moved[(*nmoved)++] = m;
    posix_spawn_file_actions_adddup2(fa, m, o->fds[i].target);
  }
  return 0;
}

static void add_files(posix_spawn_file_actions_t *fa, const kt__proc_spawn_opts *o) {
  if (o->null_stdin) posix_spawn_file_actions_addopen(fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (o->null_stdout) posix_spawn_file_actions_addopen(fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
  if (o->close_from > 0) posix_spawn_file_actions_addclosefrom_np(fa, o->close_from);
#endif
}

static void set_attributes(posix_spawnattr_t *attr, const kt__proc_spawn_opts *o) {
  short flags = 0;
  sigset_t none;
  sigemptyset(&none);
  if (o->unblock_signals) {
    posix_spawnattr_setsigmask(attr, &none);
    flags |= POSIX_SPAWN_SETSIGMASK;
  }
  if (o->default_signals) {
    posix_spawnattr_setsigdefault(attr, o->default_signals);
    flags |= POSIX_SPAWN_SETSIGDEF;
  }
  if (o->own_group) {
    posix_spawnattr_setpgroup(attr, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  posix_spawnattr_setflags(attr, flags);
}

int kt__proc_spawn(const char *path, char *const argv[], const kt__proc_spawn_opts *o, pid_t *pid) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  int moved[KT__PROC_MAX_FDS], nmoved = 0;
  int rc = add_fds(&fa, o, moved, &nmoved);
  add_files(&fa, o);
  set_attributes(&attr, o);
  char *const *envp = o->envp ? o->envp : environ;
  if (rc == 0)
    rc = o->search_path ? posix_spawnp(pid, path, &fa, &attr, argv, envp)
                        : posix_spawn(pid, path, &fa, &attr, argv, envp);
  for (int i = 0; i < nmoved; i++) close(moved[i]);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  return rc;
}

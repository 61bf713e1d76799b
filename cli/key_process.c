/* A key of a sweep tuned by a ktune process of its own (key_process.h). */
#include "key_process.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int dropped(const key_command *cmd, const char *arg) {
  if (strcmp(arg, "--dim") == 0 || strcmp(arg, "--sizes") == 0) return 1;
  for (const char *const *d = cmd->drop; d && *d; d++)
    if (strcmp(arg, *d) == 0) return 1;
  return 0;
}

static int dropped_flag(const key_command *cmd, const char *arg) {
  for (const char *const *d = cmd->drop_flags; d && *d; d++)
    if (strcmp(arg, *d) == 0) return 1;
  return 0;
}

/* The key's command line, NULL-terminated, allocated; NULL when out of
 * memory. The executable is this one, whatever PATH holds. */
static char **key_argv(const key_command *cmd, const key *k, const char *const *extra) {
  size_t nextra = 0;
  while (extra && extra[nextra]) nextra++;
  char **argv = calloc((size_t)cmd->argc + 2 * (size_t)k->nsizes + nextra + 2, sizeof *argv);
  if (!argv) return NULL;
  int n = 0;
  argv[n++] = "/proc/self/exe";
  for (int i = 1; i < cmd->argc; i++) {
    if (dropped_flag(cmd, cmd->argv[i])) continue;
    if (dropped(cmd, cmd->argv[i]) && i + 1 < cmd->argc) {
      i++;
      continue;
    }
    argv[n++] = cmd->argv[i];
  }
  for (int i = 0; i < k->nsizes; i++) {
    argv[n++] = "--dim";
    argv[n++] = k->sizes[i];
  }
  for (size_t i = 0; i < nextra; i++) argv[n++] = (char *)extra[i];
  argv[n] = NULL;
  return argv;
}

int key_process_start(key_process *p, const key_command *cmd, const key *k, const char *const *extra, int capture) {
  *p = (key_process){.out_fd = -1};
  char **argv = key_argv(cmd, k, extra);
  int fds[2] = {-1, -1};
  if (!argv || (capture && pipe2(fds, O_CLOEXEC) != 0)) {
    int err = argv ? errno : ENOMEM;
    free(argv);
    errno = err;
    return -1;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (capture) posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  int err = posix_spawn(&p->pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  free(argv);
  if (fds[1] >= 0) close(fds[1]);
  if (err != 0) {
    if (fds[0] >= 0) close(fds[0]);
    p->pid = 0;
    errno = err;
    return -1;
  }
  p->out_fd = fds[0];
  return 0;
}

static int grow(key_process *p, size_t want) {
  if (p->len + want + 1 <= p->cap) return 0;
  size_t cap = p->cap ? p->cap : 65536;
  while (cap < p->len + want + 1) cap *= 2;
  char *out = realloc(p->out, cap);
  if (!out) return -1;
  p->out = out;
  p->cap = cap;
  return 0;
}

int key_process_read(key_process *p, int nonblock) {
  while (p->out_fd >= 0) {
    if (grow(p, 65536) != 0) return errno = ENOMEM, -1;
    if (nonblock) {
      int flags = fcntl(p->out_fd, F_GETFL);
      if (!(flags & O_NONBLOCK)) fcntl(p->out_fd, F_SETFL, flags | O_NONBLOCK);
    }
    ssize_t got = read(p->out_fd, p->out + p->len, 65536);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 1;
    if (got < 0) return -1;
    if (got == 0) {
      close(p->out_fd);
      p->out_fd = -1;
      break;
    }
    p->len += (size_t)got;
    p->out[p->len] = 0;
  }
  return 0;
}

int key_process_wait(key_process *p) {
  if (p->out_fd >= 0) {
    int flags = fcntl(p->out_fd, F_GETFL);
    fcntl(p->out_fd, F_SETFL, flags & ~O_NONBLOCK);
    while (key_process_read(p, 0) > 0) continue;
  }
  if (p->out_fd >= 0) close(p->out_fd), p->out_fd = -1; /* a read error: the rest is lost, the exit status is not */
  int status = 0;
  while (p->pid > 0 && waitpid(p->pid, &status, 0) < 0 && errno == EINTR) continue;
  p->pid = 0;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 130;
}

void key_process_free(key_process *p) {
  if (p->out_fd >= 0) close(p->out_fd);
  free(p->out);
  *p = (key_process){.out_fd = -1};
}

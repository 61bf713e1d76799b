/* A key of a sweep tuned by a ktune process of its own (key_process.h). */
#include "key_process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc/process.h"

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

/* The pipe for one captured stream: [0] ours, [1] the child's. */
static int capture_pipe(int want, int fds[2]) {
  fds[0] = fds[1] = -1;
  return want && pipe2(fds, O_CLOEXEC) != 0 ? -1 : 0;
}

static void close_pair(int fds[2]) {
  if (fds[0] >= 0) close(fds[0]);
  if (fds[1] >= 0) close(fds[1]);
  fds[0] = fds[1] = -1;
}

int key_process_start(key_process *p, const key_command *cmd, const key *k, const char *const *extra, int capture) {
  *p = (key_process){.out_fd = -1, .err_fd = -1};
  char **argv = key_argv(cmd, k, extra);
  int out[2] = {-1, -1}, err[2] = {-1, -1};
  if (!argv || capture_pipe(capture & KEY_PROCESS_STDOUT, out) != 0 ||
      capture_pipe(capture & KEY_PROCESS_STDERR, err) != 0) {
    int e = argv ? errno : ENOMEM;
    free(argv);
    close_pair(out);
    close_pair(err);
    errno = e;
    return -1;
  }
  /* No signal blocked: a dealer waits with SIGINT and SIGTERM blocked
   * (cli/sweep.c), and a key process must still stop on them. */
  kt__proc_fd fds[] = {{out[1], STDOUT_FILENO}, {err[1], STDERR_FILENO}};
  kt__proc_spawn_opts o = {.fds = fds, .nfds = 2, .unblock_signals = true};
  int e = kt__proc_spawn(argv[0], argv, &o, &p->pid);
  free(argv);
  if (out[1] >= 0) close(out[1]), out[1] = -1;
  if (err[1] >= 0) close(err[1]), err[1] = -1;
  if (e != 0) {
    close_pair(out);
    close_pair(err);
    p->pid = 0;
    errno = e;
    return -1;
  }
  p->out_fd = out[0];
  p->err_fd = err[0];
  return 0;
}

/* One captured stream: its descriptor and what came through it. */
typedef struct stream {
  int *fd;
  char **buf;
  size_t *len, *cap;
} stream;

static int grow(stream s, size_t want) {
  if (*s.len + want + 1 <= *s.cap) return 0;
  size_t cap = *s.cap ? *s.cap : 65536;
  while (cap < *s.len + want + 1) cap *= 2;
  char *buf = realloc(*s.buf, cap);
  if (!buf) return -1;
  *s.buf = buf;
  *s.cap = cap;
  return 0;
}

/* Reads S until it would block (NONBLOCK) or ends: 1 while open, 0 once
 * closed, -1 on an error (errno set). */
static int read_stream(stream s, int nonblock) {
  while (*s.fd >= 0) {
    if (grow(s, 65536) != 0) return errno = ENOMEM, -1;
    int flags = fcntl(*s.fd, F_GETFL);
    if (nonblock != !!(flags & O_NONBLOCK)) fcntl(*s.fd, F_SETFL, nonblock ? flags | O_NONBLOCK : flags & ~O_NONBLOCK);
    ssize_t got = read(*s.fd, *s.buf + *s.len, 65536);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 1;
    if (got < 0) return -1;
    if (got == 0) {
      close(*s.fd);
      *s.fd = -1;
      break;
    }
    *s.len += (size_t)got;
    (*s.buf)[*s.len] = 0;
  }
  return 0;
}

static stream out_stream(key_process *p) { return (stream){&p->out_fd, &p->out, &p->len, &p->cap}; }
static stream err_stream(key_process *p) { return (stream){&p->err_fd, &p->err, &p->err_len, &p->err_cap}; }

int key_process_read(key_process *p, int nonblock) {
  int out = read_stream(out_stream(p), nonblock);
  int err = read_stream(err_stream(p), nonblock);
  if (out < 0 || err < 0) return -1;
  return out || err;
}

/* Blocks until a captured stream has something to read (or ends). */
static void await_output(const key_process *p) {
  struct pollfd fds[2] = {{.fd = p->out_fd, .events = POLLIN}, {.fd = p->err_fd, .events = POLLIN}};
  while (poll(fds, 2, -1) < 0 && errno == EINTR) continue; /* a negative fd is skipped */
}

int key_process_wait(key_process *p) {
  /* Both streams at once: a child blocked writing one while we wait for
   * the other's end would never end. */
  while (key_process_read(p, 1) > 0) await_output(p);
  /* A read error: the rest is lost, the exit status is not. */
  if (p->out_fd >= 0) close(p->out_fd), p->out_fd = -1;
  if (p->err_fd >= 0) close(p->err_fd), p->err_fd = -1;
  int status = 0;
  while (p->pid > 0 && waitpid(p->pid, &status, 0) < 0 && errno == EINTR) continue;
  p->pid = 0;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 130;
}

void key_process_free(key_process *p) {
  if (p->out_fd >= 0) close(p->out_fd);
  if (p->err_fd >= 0) close(p->err_fd);
  free(p->out);
  free(p->err);
  *p = (key_process){.out_fd = -1, .err_fd = -1};
}

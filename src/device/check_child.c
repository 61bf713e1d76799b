/* The author's check, run in a child of the device worker (check_child.h). */
#include "check_child.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../proc/process.h"

enum { FAULT_EXIT = 3 }; /* the child named a tensor it wrote */

/* The child's: what its fault handler names. */
static const kt_check_args *given;
static const size_t *given_bytes;
static int verdict_fd = -1;

static void say(const char *s) {
  size_t n = strlen(s);
  while (n) {
    ssize_t k = write(verdict_fd, s, n);
    if (k <= 0) return;
    s += k, n -= (size_t)k;
  }
}

static bool inside(const void *addr, const void *begin, size_t len) {
  const char *a = addr, *b = begin;
  return b && a >= b && a < b + len;
}

/* A fault inside a tensor the check is given is a write to it: they are
 * read-only here. Any other fault ends the child by its signal. */
static void on_fault(int sig, siginfo_t *si, void *ctx) {
  (void)ctx;
  for (int k = 0; k < given->ntensors; k++) {
    const kt_check_tensor *t = &given->tensors[k];
    bool data = inside(si->si_addr, t->data, given_bytes[k]), ref = inside(si->si_addr, t->reference, given_bytes[k]);
    if (!data && !ref) continue;
    say("W");
    say(ref ? "the reference of " : "");
    say(t->name);
    _exit(FAULT_EXIT);
  }
  signal(sig, SIG_DFL); /* returns to the faulting instruction, which now kills the child */
}

static void protect_outputs(const kt_check_args *args, const size_t *bytes) {
  for (int k = 0; k < args->ntensors; k++)
    if (args->tensors[k].is_output && bytes[k]) mprotect((void *)args->tensors[k].data, bytes[k], PROT_READ);
}

static _Noreturn void child(const kt__check *check, kt_check_args *args, const size_t *bytes, int fd, pid_t parent) {
  kt__proc_die_with_parent(SIGKILL, parent, 1);
  given = args, given_bytes = bytes, verdict_fd = fd;
  protect_outputs(args, bytes);
  struct sigaction sa = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);
  char before[4096] = "", after[4096] = "";
  if (!getcwd(before, sizeof before)) before[0] = 0;
  bool ok = check->fn(args);
  if (!getcwd(after, sizeof after)) snprintf(after, sizeof after, "(a folder since removed)");
  if (strcmp(before, after) != 0) {
    say("D");
    say(after);
    _exit(0);
  }
  say(ok ? "Y" : "N");
  args->message[args->message_size ? args->message_size - 1 : 0] = 0;
  if (!ok) say(args->message);
  _exit(0);
}

/* Everything the child wrote, until it closed its end (ended). */
static void read_verdict(int fd, char *buf, size_t size) {
  size_t n = 0;
  for (;;) {
    ssize_t k = read(fd, buf + n, size - 1 - n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0 || (n += (size_t)k) == size - 1) break;
  }
  buf[n] = 0;
}

static kt__check_verdict faulted(char *why, size_t size, const char *fmt, const char *what) {
  snprintf(why, size, fmt, what);
  return KT__CHECK_FAULTED;
}

/* What the child's end and its exit status say. */
static kt__check_verdict judge(const char *said, int status, kt_check_args *args, char *why, size_t size) {
  if (WIFSIGNALED(status)) {
    const char *name = sigabbrev_np(WTERMSIG(status));
    snprintf(why, size, "crashed: SIG%s (%s)", name ? name : "?", strsignal(WTERMSIG(status)));
    return KT__CHECK_FAULTED;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == FAULT_EXIT && said[0] == 'W')
    return faulted(why, size, "wrote the tensor %s it is given (a check reads them; it may not change them)", said + 1);
  if (said[0] == 'D') return faulted(why, size, "changed the working directory (to %s)", said + 1);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || (said[0] != 'Y' && said[0] != 'N')) {
    snprintf(why, size, "ended the process (exit status %d) instead of returning", WEXITSTATUS(status));
    return KT__CHECK_FAULTED;
  }
  if (said[0] == 'Y') return KT__CHECK_PASSED;
  snprintf(args->message, args->message_size, "%s", said + 1);
  return KT__CHECK_REJECTED;
}

kt__check_verdict kt__check_in_child(const kt__check *check, kt_check_args *args, const size_t *bytes, char *why,
                                     size_t size) {
  pid_t parent = getpid();
  int fd;
  pid_t pid = kt__proc_fork_connected(&fd);
  if (pid < 0) return faulted(why, size, "could not be started: %s", strerror(errno));
  if (pid == 0) child(check, args, bytes, fd, parent);
  char said[2048];
  read_verdict(fd, said, sizeof said);
  close(fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  return judge(said, status, args, why, size);
}

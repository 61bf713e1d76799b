/* Snapshots of the process state a host-code kernel must not change
 * (procstate.h). Everything here is read from the kernel's own process:
 * /proc/self/task for threads, sigaction and sigprocmask, getitimer, and a
 * wait for children that does not reap running ones. */
#include "procstate.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { MAX_SIGNAL = 64 };

static int count_threads(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

/* FNV-1a over a string and its terminator, continuing from H. */
static uint64_t hash_string(uint64_t h, const char *s) {
  do {
    h ^= (unsigned char)*s;
    h *= 0x100000001b3ull;
  } while (*s++);
  return h;
}

static uint64_t hash_environment(void) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char **e = environ; e && *e; e++) h = hash_string(h, *e);
  return h;
}

static uint64_t hash_cwd(void) {
  char buf[PATH_MAX];
  return hash_string(0xcbf29ce484222325ull, getcwd(buf, sizeof buf) ? buf : "?");
}

void kt__procstate_take(kt__procstate *s) {
  memset(s, 0, sizeof *s);
  s->threads = count_threads();
  for (int sig = 1; sig <= MAX_SIGNAL; sig++) sigaction(sig, NULL, &s->actions[sig]);
  sigprocmask(SIG_BLOCK, NULL, &s->mask);
  s->cwd_hash = hash_cwd();
  s->env_hash = hash_environment();
}

#ifndef SA_RESTORER
#define SA_RESTORER 0
#endif

/* The C library sets SA_RESTORER itself; only the handler and the flags a
 * caller chooses count. */
static bool same_action(const struct sigaction *a, const struct sigaction *b) {
  return a->sa_handler == b->sa_handler && (a->sa_flags & ~SA_RESTORER) == (b->sa_flags & ~SA_RESTORER);
}

/* A timer left armed (alarm, setitimer): disarmed, and named in WHY. */
static bool timers_quiet(char *why, size_t size) {
  static const int which[] = {ITIMER_REAL, ITIMER_VIRTUAL, ITIMER_PROF};
  static const char *const names[] = {"a real-time timer (alarm or setitimer)", "a virtual timer", "a profiling timer"};
  for (int i = 0; i < 3; i++) {
    struct itimerval t;
    if (getitimer(which[i], &t) != 0 || (!t.it_value.tv_sec && !t.it_value.tv_usec)) continue;
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(which[i], &off, NULL);
    snprintf(why, size, "left %s armed (%.3g s to go)", names[i],
             (double)t.it_value.tv_sec + t.it_value.tv_usec * 1e-6);
    return false;
  }
  return true;
}

/* A child process the kernel forked and left running (or ended, unreaped). */
static bool no_children(char *why, size_t size) {
  int status;
  pid_t pid = waitpid(-1, &status, WNOHANG);
  if (pid < 0 && errno == ECHILD) return true;
  if (pid > 0) snprintf(why, size, "forked a child process (pid %ld), which ended", (long)pid);
  else snprintf(why, size, "forked a child process that is still running");
  return false;
}

bool kt__procstate_same(const kt__procstate *before, char *why, size_t size) {
  if (!timers_quiet(why, size) || !no_children(why, size)) return false;
  int threads = count_threads();
  if (threads > before->threads) {
    snprintf(why, size, "left %d thread%s running after it returned", threads - before->threads,
             threads - before->threads == 1 ? "" : "s");
    return false;
  }
  for (int sig = 1; sig <= MAX_SIGNAL; sig++) {
    struct sigaction now;
    if (sigaction(sig, NULL, &now) == 0 && !same_action(&now, &before->actions[sig])) {
      const char *abbrev = sigabbrev_np(sig);
      snprintf(why, size, "changed the disposition of signal %s%s", abbrev ? "SIG" : "", abbrev ? abbrev : "?");
      return false;
    }
  }
  sigset_t mask;
  sigprocmask(SIG_BLOCK, NULL, &mask);
  for (int sig = 1; sig <= MAX_SIGNAL; sig++)
    if (sigismember(&mask, sig) != sigismember(&before->mask, sig)) {
      snprintf(why, size, "changed the signal mask (signal %d)", sig);
      return false;
    }
  if (hash_cwd() != before->cwd_hash) {
    snprintf(why, size, "changed the working directory");
    return false;
  }
  if (hash_environment() != before->env_hash) {
    snprintf(why, size, "changed the environment");
    return false;
  }
  return true;
}

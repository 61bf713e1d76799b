/* Tuning jobs on a miss: the helper process and its waiting thread
 * (miss_job.h). */
#include "miss_job.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../proc/fdpass.h"
#include "../proc/helper_exe.h"
#include "../proc/process.h"
#include "ktune.h"

struct kt__miss_job {
  char *key;
  int refs;         /* under registry_lock */
  atomic_bool done; /* set last, with release: the fields below are final */
  kt__miss_outcome outcome;
  char *config; /* the winner (tuned, stored) */
  kt__sbuf why; /* failed */
  int rc;       /* failed: the helper's kt_err, 0 when it gave none */
  int pid;
  int reply_fd;
  int ready_fd; /* the helper waits on it for its data */
  /* Until J's thread started the helper: the request and the helper's ends
   * of the reply pipe and the ready socket. */
  int request_fd, reply_end, ready_end;
  kt__tune_pending *pending; /* the data, written by the waiting thread */
  bool held;                 /* under hold_lock: the writing waits (kt__miss_job_hold) */
  pthread_mutex_t hold_lock;
  pthread_cond_t hold_cond;
  bool in_registry;           /* under registry_lock */
  kt__miss_job *next;         /* registry */
  struct warm_helper *helper; /* the helper that stays warm (NULL: it exits after this job) */
  /* When a helper may stay warm (RETRY_IDLE_S > 0): a copy of the request,
   * for another helper if the warm one it was handed to died before taking
   * it (HANDED_WARM: retake), and for the warm helper to keep for the next
   * miss once this one is served (request_kept); -1: none. */
  int request;
  bool handed_warm;
  char *retry_path, *retry_key;
  double retry_idle_s;
};

/* A helper that stays after its tuning for the application's next miss
 * (tune_helper.h, --control): one thread of this process (keep_helper)
 * waits for its end; the jobs run on it one at a time. */
typedef struct warm_helper {
  pid_t pid;
  int control; /* this process's end of its control socket: closing it ends the helper */
  char *key;   /* the helper executable and the backend and device it tunes for */
  bool busy;   /* under registry_lock: a job runs on it */
  bool dead;   /* under registry_lock: it ended, as STATUS says */
  int status;
  int spare_request; /* under registry_lock: its last served request's memfd (-1: none) */
  struct warm_helper *next;
} warm_helper;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t registry_done = PTHREAD_COND_INITIALIZER;
static kt__miss_job *registry;
static warm_helper *warm_helpers;                              /* under registry_lock */
static pthread_cond_t helper_ended = PTHREAD_COND_INITIALIZER; /* a warm helper's DEAD was set */

kt__miss_job *kt__miss_job_get(const char *key, bool *created) {
  pthread_mutex_lock(&registry_lock);
  kt__miss_job *j = registry;
  while (j && strcmp(j->key, key) != 0) j = j->next;
  *created = j == NULL;
  if (!j) {
    j = kt__xcalloc(1, sizeof *j);
    j->key = kt__xstrdup(key);
    j->reply_fd = -1;
    j->ready_fd = -1;
    j->request_fd = j->reply_end = j->ready_end = -1;
    j->request = -1;
    pthread_mutex_init(&j->hold_lock, NULL);
    pthread_cond_init(&j->hold_cond, NULL);
    j->in_registry = true;
    j->next = registry;
    j->refs = 1; /* the registry's, dropped when the job ends */
    registry = j;
  }
  j->refs++;
  pthread_mutex_unlock(&registry_lock);
  return j;
}

static void unlink_locked(kt__miss_job *j) {
  for (kt__miss_job **p = &registry; *p; p = &(*p)->next)
    if (*p == j) {
      *p = j->next;
      break;
    }
  j->in_registry = false;
}

static void free_job(kt__miss_job *j) {
  free(j->retry_path);
  free(j->retry_key);
  free(j->key);
  free(j->config);
  kt__sbuf_free(&j->why);
  pthread_mutex_destroy(&j->hold_lock);
  pthread_cond_destroy(&j->hold_cond);
  free(j);
}

void kt__miss_job_release(kt__miss_job *j) {
  if (!j) return;
  pthread_mutex_lock(&registry_lock);
  bool last = --j->refs == 0;
  pthread_mutex_unlock(&registry_lock);
  if (last) free_job(j);
}

/* Publishes the outcome: later misses of the key start a new job. */
static void finish(kt__miss_job *j) {
  pthread_mutex_lock(&registry_lock);
  unlink_locked(j);
  atomic_store_explicit(&j->done, true, memory_order_release);
  pthread_cond_broadcast(&registry_done);
  bool last = --j->refs == 0;
  pthread_mutex_unlock(&registry_lock);
  if (last) free_job(j);
}

void kt__miss_job_fail(kt__miss_job *j, const char *why) {
  j->outcome = KT__MISS_FAILED;
  kt__sbuf_printf(&j->why, "%s", why);
  finish(j);
}

bool kt__miss_job_done(const kt__miss_job *j) { return atomic_load_explicit(&j->done, memory_order_acquire); }

void kt__miss_job_wait(kt__miss_job *j) {
  pthread_mutex_lock(&registry_lock);
  while (!kt__miss_job_done(j)) pthread_cond_wait(&registry_done, &registry_lock);
  pthread_mutex_unlock(&registry_lock);
}

kt__miss_outcome kt__miss_job_outcome(const kt__miss_job *j, const char **config, const char **why) {
  *config = j->config;
  *why = j->why.s ? j->why.s : "";
  return j->outcome;
}

int kt__miss_job_rc(const kt__miss_job *j) { return j->rc; }

/* ---- the helper process ---------------------------------------------- */

enum { REQUEST_FD = 3, REPLY_FD = 4, READY_FD = 5, CONTROL_FD = 6 };

/* KTUNE_HELPER_IDLE_S as the context read it (envvars.h), at most a day. */
double kt__miss_helper_idle_s(const kt__envvars *env) {
  double s = env->v[KT__ENV_HELPER_IDLE_S].seconds;
  return s > 86400 ? 86400 : s;
}

/* The helper gets the request and reply ends as fds 3 and 4, the end it
 * reads "its data is in the request" from as fd 5, its control socket as fd
 * 6 when it is to stay warm (CONTROL_FD >= 0, for IDLE_S seconds), stdin and
 * stdout on /dev/null (its progress goes to stderr, as a tuning's does), the
 * application's stderr, default signal handling and no blocked signals. */
static int spawn_helper(const char *path, int request_fd, int reply_fd, int ready_fd, int control_fd, double idle_s,
                        bool prepare, pid_t *pid) {
  char idle[32];
  snprintf(idle, sizeof idle, "%g", idle_s);
  char *argv[] = {(char *)path, "--request", "3", "--reply", "4",  "--ready",
                  "5",          "--control", "6", "--idle",  idle, prepare ? "--prepare" : NULL,
                  NULL};
  if (control_fd < 0) argv[7] = NULL;
  sigset_t defaults;
  sigemptyset(&defaults);
  int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaddset(&defaults, sigs[i]);
  kt__proc_fd fds[] = {{request_fd, REQUEST_FD}, {reply_fd, REPLY_FD}, {ready_fd, READY_FD}, {control_fd, CONTROL_FD}};
  kt__proc_spawn_opts o = {.fds = fds,
                           .nfds = 4,
                           .null_stdin = true,
                           .null_stdout = true,
                           .close_from = CONTROL_FD + 1, /* the application's other files */
                           .unblock_signals = true,
                           .default_signals = &defaults};
  return kt__proc_spawn(path, argv, &o, pid);
}

/* Reads the helper's whole reply (it ends at the helper's exit). */
static void read_reply(int fd, kt__sbuf *out) {
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    kt__sbuf_printf(out, "%.*s", (int)n, buf);
  }
}

/* How the helper ended, for a message: "was killed by signal 9 (Killed)". */
static void describe_exit(int status, kt__sbuf *out) {
  if (WIFSIGNALED(status))
    kt__sbuf_printf(out, "was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
  else kt__sbuf_printf(out, "exited with status %d", WEXITSTATUS(status));
}

static void take_reply(kt__miss_job *j, const char *text, int status) {
  const char *nl = strchr(text, '\n');
  size_t word = strcspn(text, " \n");
  if (nl && word == 5 && strncmp(text, "tuned", 5) == 0) j->outcome = KT__MISS_TUNED;
  else if (nl && word == 6 && strncmp(text, "stored", 6) == 0) j->outcome = KT__MISS_STORED;
  else if (nl && word == 8 && strncmp(text, "verified", 8) == 0) j->outcome = KT__MISS_VERIFIED;
  else j->outcome = KT__MISS_FAILED;
  if (j->outcome != KT__MISS_FAILED) {
    j->config = kt__xstrndup(text + word + 1, (size_t)(nl - text - (ptrdiff_t)word - 1));
  } else if (nl && strncmp(text, "failed ", 7) == 0) {
    j->rc = atoi(text + 7);
    kt__sbuf_printf(&j->why, "the tuning failed: %s", nl + 1);
  } else {
    kt__sbuf_printf(&j->why, "the tuning helper (pid %d) ", j->pid);
    describe_exit(status, &j->why);
    kt__sbuf_printf(&j->why, " before it replied");
  }
}

/* Until kt__miss_job_unhold, when the job was held. */
static void wait_unheld(kt__miss_job *j) {
  pthread_mutex_lock(&j->hold_lock);
  while (j->held) pthread_cond_wait(&j->hold_cond, &j->hold_lock);
  pthread_mutex_unlock(&j->hold_lock);
}

/* Writes the caller's data into the request and tells the helper, which
 * meanwhile started; a failure leaves the helper only an end of file, on
 * which it exits, and is the job's reason. */
static void hand_data(kt__miss_job *j, kt__sbuf *failed) {
  kt__errbuf eb;
  wait_unheld(j);
  if (kt__tune_request_fill(j->pending, &eb) == KT_OK) {
    /* No SIGPIPE in the application when the helper is gone already (it
     * found a stored winner, or died): a socket, written with MSG_NOSIGNAL. */
    ssize_t w;
    while ((w = send(j->ready_fd, "1", 1, MSG_NOSIGNAL)) < 0 && errno == EINTR) continue;
    kt__trace("miss: the helper told that the tensors are in");
  } else {
    kt__sbuf_printf(failed, "the caller's tensors could not be copied for the tuning: %s", eb.msg);
  }
  /* Freed once the helper is on its way: freeing the snapshot's device
   * memory (cuMemFree waits for the device) and unmapping the request are
   * no reason for the helper to wait. */
  kt__tune_pending_free(j->pending);
  j->pending = NULL;
  close(j->ready_fd);
  j->ready_fd = -1;
}

/* How warm helper H ended, once it did, when its reply was cut short
 * (COMPLETE: it replied, and may well live on: 0). */
static int warm_status(warm_helper *h, bool complete) {
  pthread_mutex_lock(&registry_lock);
  while (!complete && !h->dead) pthread_cond_wait(&helper_ended, &registry_lock);
  int status = complete ? 0 : h->status;
  pthread_mutex_unlock(&registry_lock);
  return status;
}

static void unlink_helper_locked(warm_helper *h) {
  for (warm_helper **p = &warm_helpers; *p; p = &(*p)->next)
    if (*p == h) {
      *p = h->next;
      break;
    }
}

static void free_helper(warm_helper *h) {
  free(h->key);
  free(h);
}

/* Job J is done with its warm helper: free for the next miss, or gone. */
static void release_helper(warm_helper *h) {
  pthread_mutex_lock(&registry_lock);
  h->busy = false;
  bool gone = h->dead;
  if (gone) unlink_helper_locked(h);
  pthread_mutex_unlock(&registry_lock);
  if (gone) free_helper(h);
}

static void retake(kt__miss_job *j, kt__sbuf *failed);

/* Warm helper H replied to the request in memfd FD (whole: its tuner and
 * worker no longer touch the tensors) and keeps it for the next miss of
 * the application (kt__miss_request_spare), in place of the one it kept
 * before. */
static void request_kept(warm_helper *h, int fd) {
  if (fd < 0) return;
  pthread_mutex_lock(&registry_lock);
  int old = h->dead ? fd : h->spare_request;
  if (!h->dead) h->spare_request = fd;
  pthread_mutex_unlock(&registry_lock);
  if (old >= 0) close(old);
}

static void *wait_helper(void *arg) {
  kt__miss_job *j = arg;
  kt__sbuf text = {0}, failed = {0};
  /* The download first: a warm helper still opening its device (started
   * by kt_kernel_prepare) takes the request after it, and a dead one's
   * replacement is told again that the data is there (retake). */
  if (j->ready_fd >= 0) hand_data(j, &failed);
  if (j->handed_warm && j->request >= 0 && !failed.len) retake(j, &failed);
  read_reply(j->reply_fd, &text);
  close(j->reply_fd);
  int status = 0;
  bool complete = text.s && strchr(text.s, '\n');
  if (j->helper) status = warm_status(j->helper, complete);
  else
    while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR) continue;
  if (j->helper && complete) kt__trace("miss: the warm helper %d replied (%zu bytes)", j->pid, text.len);
  else
    kt__trace("miss: helper %d ended (%s %d), reply of %zu bytes", j->pid, WIFSIGNALED(status) ? "signal" : "status",
              WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), text.len);
  take_reply(j, text.s ? text.s : "", status);
  if (failed.len) { /* the helper's reply to an end of file says less */
    j->outcome = KT__MISS_FAILED;
    j->rc = 0;
    kt__sbuf_free(&j->why);
    kt__sbuf_printf(&j->why, "%s", failed.s);
  }
  if (j->helper && complete && !failed.len) request_kept(j->helper, j->request);
  else if (j->request >= 0) close(j->request);
  j->request = -1;
  kt__sbuf_free(&text);
  kt__sbuf_free(&failed);
  /* Free for the next miss before this one's waiters wake: a blocking
   * caller's next miss comes at once. */
  if (j->helper) release_helper(j->helper);
  finish(j);
  return NULL;
}

/* ---- warm helpers ------------------------------------------------------ */

/* Waits for warm helper H to end (it is this process's child) and says so. */
static void *keep_helper(void *arg) {
  warm_helper *h = arg;
  int status = 0;
  while (waitpid(h->pid, &status, 0) < 0 && errno == EINTR) continue;
  kt__trace("miss: warm helper %d ended (%s %d)", (int)h->pid, WIFSIGNALED(status) ? "signal" : "status",
            WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
  pthread_mutex_lock(&registry_lock);
  h->dead = true;
  h->status = status;
  close(h->control);
  h->control = -1;
  if (h->spare_request >= 0) close(h->spare_request); /* its memory goes with it */
  h->spare_request = -1;
  pthread_cond_broadcast(&helper_ended);
  bool unused = !h->busy;
  if (unused) unlink_helper_locked(h);
  pthread_mutex_unlock(&registry_lock);
  if (unused) free_helper(h);
  return NULL;
}

/* A forked child of the application has none of its helpers: they are its
 * parent's, and the child's copy of a control socket would keep one alive. */
static void forget_helpers(void) {
  for (warm_helper *h = warm_helpers; h; h = h->next) {
    if (h->control >= 0) close(h->control);
    if (h->spare_request >= 0) close(h->spare_request);
  }
  warm_helpers = NULL; /* the records stay with the parent's threads */
}

static void watch_forks(void) { pthread_atfork(NULL, NULL, forget_helpers); }

/* Hands J's request (REQUEST_FD, and the ends REPLY_FD and READY_FD) to a
 * warm helper of KEY that is free; false when there is none or it is gone
 * (its reading was shut down: it is leaving). */
static bool to_warm_helper(kt__miss_job *j, const char *key, int request_fd, int reply_fd, int ready_fd) {
  pthread_mutex_lock(&registry_lock);
  warm_helper *h = warm_helpers;
  while (h && (h->busy || h->dead || strcmp(h->key, key) != 0)) h = h->next;
  if (h) h->busy = true;
  pthread_mutex_unlock(&registry_lock);
  if (!h) return false;
  int fds[3] = {request_fd, reply_fd, ready_fd};
  if (!kt__send_fds(h->control, "r", 1, fds, 3)) {
    kt__trace("miss: the warm helper %d is leaving", (int)h->pid);
    release_helper(h);
    return false;
  }
  j->pid = h->pid;
  j->helper = h;
  j->handed_warm = true;
  kt__trace("miss: handed to the warm helper (pid %d)", (int)h->pid);
  return true;
}

/* Keeps warm helper PID, its control socket CTL and KEY, in the list with
 * a thread that waits for its end; NULL when no thread could start (it
 * then leaves after its tuning: its control socket is closed). */
static warm_helper *keep(pid_t pid, int ctl, const char *key, bool busy) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, watch_forks);
  warm_helper *h = kt__xcalloc(1, sizeof *h);
  *h = (warm_helper){.pid = pid, .control = ctl, .key = kt__xstrdup(key), .busy = busy, .spare_request = -1};
  pthread_t th;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_mutex_lock(&registry_lock);
  bool kept = pthread_create(&th, &attr, keep_helper, h) == 0;
  if (kept) {
    h->next = warm_helpers;
    warm_helpers = h;
  }
  pthread_mutex_unlock(&registry_lock);
  pthread_attr_destroy(&attr);
  if (kept) return h;
  close(ctl);
  free_helper(h);
  return NULL;
}

/* Starts a helper for J; one that is to stay warm (IDLE_S > 0) gets a
 * control socket and a thread that waits for its end. */
static void start_helper(kt__miss_job *j, const char *path, const char *key, double idle_s, int request_fd,
                         int reply_fd, int ready_fd, kt__sbuf *why) {
  int ctl[2] = {-1, -1};
  if (idle_s > 0 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) != 0) ctl[0] = ctl[1] = -1;
  pid_t pid = 0;
  int rc = spawn_helper(path, request_fd, reply_fd, ready_fd, ctl[1], idle_s, false, &pid);
  if (ctl[1] >= 0) close(ctl[1]);
  if (rc != 0) {
    if (ctl[0] >= 0) close(ctl[0]);
    kt__sbuf_printf(why, "the tuning helper %s could not start: %s (set KTUNE_HELPER to the ktune-tuner executable)",
                    path, strerror(rc));
    return;
  }
  j->pid = pid;
  kt__trace("miss: helper spawned (pid %d)", (int)pid);
  if (ctl[0] >= 0) j->helper = keep(pid, ctl[0], key, true);
}

/* Whether a warm helper of KEY is there (busy or not), not known to be gone. */
static bool warm_helper_of(const char *key) {
  pthread_mutex_lock(&registry_lock);
  warm_helper *h = warm_helpers;
  while (h && (h->dead || strcmp(h->key, key) != 0)) h = h->next;
  pthread_mutex_unlock(&registry_lock);
  return h != NULL;
}

int kt__miss_request_spare(void) {
  int fd = -1;
  pthread_mutex_lock(&registry_lock);
  for (warm_helper *h = warm_helpers; h && fd < 0; h = h->next)
    if (!h->dead && h->spare_request >= 0) {
      fd = h->spare_request;
      h->spare_request = -1;
    }
  pthread_mutex_unlock(&registry_lock);
  return fd;
}

void kt__miss_helper_prepare(int request_fd, const char *warm_key, double idle_s) {
  char path[4096];
  kt__sbuf why = {0}, key = {0};
  int ctl[2] = {-1, -1}, reply[2] = {-1, -1}, ready[2] = {-1, -1};
  pid_t pid = 0;
  int rc = 0;
  if (!(idle_s > 0)) kt__sbuf_printf(&why, "KTUNE_HELPER_IDLE_S is 0: no helper stays warm");
  else if (!kt__helper_exe_path(path, sizeof path, &why)) {
  } else if (kt__sbuf_printf(&key, "%s|%s", path, warm_key), warm_helper_of(key.s)) {
    kt__sbuf_printf(&why, "a warm helper is there already");
  } else if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) != 0 || pipe2(reply, O_CLOEXEC) != 0 ||
             socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ready) != 0) {
    kt__sbuf_printf(&why, "no socket for the tuning helper: %s", strerror(errno));
  } else if ((rc = spawn_helper(path, request_fd, reply[1], ready[0], ctl[1], idle_s, true, &pid)) != 0) {
    kt__sbuf_printf(&why, "the tuning helper %s could not start: %s", path, strerror(rc));
  }
  for (int i = 0; i < 2; i++) {
    if (reply[i] >= 0) close(reply[i]);
    if (ready[i] >= 0) close(ready[i]);
  }
  if (ctl[1] >= 0) close(ctl[1]);
  close(request_fd);
  if (why.len) {
    if (ctl[0] >= 0) close(ctl[0]);
    kt__trace("prepare: no helper started (%s)", why.s);
  } else {
    kt__trace("prepare: helper spawned (pid %d)", (int)pid);
    keep(pid, ctl[0], key.s, false);
  }
  kt__sbuf_free(&why);
  kt__sbuf_free(&key);
}

void kt__miss_job_hold(kt__miss_job *j) {
  pthread_mutex_lock(&j->hold_lock);
  j->held = true;
  pthread_mutex_unlock(&j->hold_lock);
}

void kt__miss_job_unhold(kt__miss_job *j) {
  pthread_mutex_lock(&j->hold_lock);
  j->held = false;
  pthread_cond_broadcast(&j->hold_cond);
  pthread_mutex_unlock(&j->hold_lock);
}

/* Whether the warm helper took J's request: its byte on the control
 * socket (only J's thread reads it: one job at a time runs on a helper). */
static bool taken(warm_helper *h) {
  char c;
  ssize_t n;
  while ((n = recv(h->control, &c, 1, 0)) < 0 && errno == EINTR) continue;
  return n == 1;
}

/* A request handed to a warm helper that died before it took it (killed
 * between misses, say): another helper, started now, takes it. The data
 * already handed over (READY_FD closed) is announced to it again. */
static void retake(kt__miss_job *j, kt__sbuf *failed) {
  warm_helper *h = j->helper;
  bool ok = taken(h);
  if (!ok) {
    kt__trace("miss: the warm helper %d ended before it took the request: another one takes it", j->pid);
    release_helper(h);
    j->helper = NULL;
    int fds[2] = {-1, -1}, ready[2] = {-1, -1};
    kt__sbuf why = {0};
    if (pipe2(fds, O_CLOEXEC) != 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ready) != 0)
      kt__sbuf_printf(&why, "no pipe for the tuning helper: %s", strerror(errno));
    else start_helper(j, j->retry_path, j->retry_key, j->retry_idle_s, j->request, fds[1], ready[0], &why);
    if (fds[1] >= 0) close(fds[1]);
    if (ready[0] >= 0) close(ready[0]);
    close(j->reply_fd);
    j->reply_fd = fds[0];
    bool handed = j->ready_fd < 0;
    if (j->ready_fd >= 0) close(j->ready_fd);
    j->ready_fd = ready[1];
    if (why.len) kt__sbuf_printf(failed, "%s", why.s);
    else if (handed) {
      j->pending = NULL; /* written already */
      hand_data(j, failed);
    }
    kt__sbuf_free(&why);
  }
}

/* Starts J's helper (a warm one takes the request, else a new one is
 * spawned), in J's thread: the caller's call does not wait for a process
 * to start. False with the reason in WHY when none could. */
static bool launch(kt__miss_job *j, kt__sbuf *why) {
  bool warm = j->retry_idle_s > 0 && to_warm_helper(j, j->retry_key, j->request_fd, j->reply_end, j->ready_end);
  if (!warm)
    start_helper(j, j->retry_path, j->retry_key, j->retry_idle_s, j->request_fd, j->reply_end, j->ready_end, why);
  close(j->reply_end);
  close(j->ready_end);
  close(j->request_fd);
  j->reply_end = j->ready_end = j->request_fd = -1;
  return why->len == 0;
}

/* J's thread: the helper started, its data handed over, its reply awaited. */
static void *run_job(void *arg) {
  kt__miss_job *j = arg;
  kt__sbuf why = {0};
  if (launch(j, &why)) return wait_helper(j);
  close(j->reply_fd);
  close(j->ready_fd);
  if (j->request >= 0) close(j->request);
  j->reply_fd = j->ready_fd = j->request = -1;
  wait_unheld(j); /* freeing the snapshot is a driver call too */
  kt__tune_pending_free(j->pending);
  j->pending = NULL;
  kt__miss_job_fail(j, why.s);
  kt__sbuf_free(&why);
  return NULL;
}

/* A job thread started ahead (kt__miss_thread_prepare), waiting for the
 * next job: handing it one is a signal, not a thread's creation (0.13 ms on
 * the caller's thread measured on the H200). The thread that takes a job
 * starts the next spare, off the caller's path. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool waiting;      /* a spare thread waits */
  kt__miss_job *job; /* handed to it, not yet taken */
} spare = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, NULL};

static void *spare_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&spare.lock);
  while (!spare.job) pthread_cond_wait(&spare.cond, &spare.lock);
  kt__miss_job *j = spare.job;
  spare.job = NULL;
  spare.waiting = false;
  pthread_mutex_unlock(&spare.lock);
  kt__miss_thread_prepare();
  return run_job(j);
}

/* A forked child has no spare thread (only the forking thread survives). */
static void forget_spare(void) {
  pthread_mutex_init(&spare.lock, NULL);
  pthread_cond_init(&spare.cond, NULL);
  spare.waiting = false;
  spare.job = NULL;
}

static void watch_forks_for_spare(void) { pthread_atfork(NULL, NULL, forget_spare); }

void kt__miss_thread_prepare(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, watch_forks_for_spare);
  pthread_mutex_lock(&spare.lock);
  if (!spare.waiting) {
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    spare.waiting = pthread_create(&th, &attr, spare_main, NULL) == 0;
    pthread_attr_destroy(&attr);
  }
  pthread_mutex_unlock(&spare.lock);
}

/* J to the spare thread; false when none waits. */
static bool to_spare(kt__miss_job *j) {
  pthread_mutex_lock(&spare.lock);
  bool free_spare = spare.waiting && !spare.job;
  if (free_spare) {
    spare.job = j;
    pthread_cond_signal(&spare.cond);
  }
  pthread_mutex_unlock(&spare.lock);
  return free_spare;
}

/* A program that cannot find its helper would run the fallback on every
 * miss without a word (a static program, a moved library): it is said once
 * per process on stderr, whatever kt_options.quiet says, since nothing else
 * would tell the user that nothing is tuned. */
static void say_no_helper_once(const char *why) {
  static atomic_flag said = ATOMIC_FLAG_INIT;
  if (atomic_flag_test_and_set(&said)) return;
  fprintf(stderr,
          "ktune: kt_launch cannot tune: %s; every miss runs its fallback (the stored nearest size, "
          "or the default configuration)\n",
          why);
}

void kt__miss_job_start(kt__miss_job *j, int request_fd, kt__tune_pending *pending, const char *warm_key,
                        double idle_s) {
  char path[4096];
  kt__sbuf why = {0}, key = {0};
  int fds[2] = {-1, -1}, ready[2] = {-1, -1};
  if (!warm_key) idle_s = 0;
  /* What can fail at once is found here (an access(2), not a spawn), so
   * that even a background miss says so on its first call. */
  if (!kt__helper_exe_path(path, sizeof path, &why)) {
    say_no_helper_once(why.s);
  } else if (access(path, X_OK) != 0) {
    kt__sbuf_printf(&why, "the tuning helper %s could not start: %s (set KTUNE_HELPER to the ktune-tuner executable)",
                    path, strerror(errno));
    say_no_helper_once(why.s);
  } else if (pipe2(fds, O_CLOEXEC) != 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ready) != 0) {
    kt__sbuf_printf(&why, "no pipe for the tuning helper: %s", strerror(errno));
  }
  if (why.len) {
    for (int i = 0; i < 2; i++) {
      if (fds[i] >= 0) close(fds[i]);
      if (ready[i] >= 0) close(ready[i]);
    }
    close(request_fd);
    kt__tune_pending_free(pending);
    kt__miss_job_fail(j, why.s);
    kt__sbuf_free(&why);
    return;
  }
  kt__sbuf_printf(&key, "%s|%s", path, warm_key ? warm_key : "");
  j->request_fd = request_fd;
  j->reply_fd = fds[0];
  j->reply_end = fds[1];
  j->ready_fd = ready[1];
  j->ready_end = ready[0];
  j->pending = pending;
  j->retry_path = kt__xstrdup(path);
  j->retry_key = key.s; /* the job's now */
  j->retry_idle_s = idle_s;
  if (idle_s > 0) j->request = fcntl(request_fd, F_DUPFD_CLOEXEC, 0);
  if (!pending) kt__miss_job_unhold(j); /* nothing left to download: no driver call to hold back */
  if (to_spare(j)) {
    kt__trace("miss: handed to the spare job thread");
    return;
  }
  pthread_t th;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  /* Without a thread the caller waits for the helper itself. */
  if (pthread_create(&th, &attr, run_job, j) != 0) run_job(j);
  pthread_attr_destroy(&attr);
  kt__trace("miss: job thread started");
}

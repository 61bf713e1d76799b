/* The tuner's side of the device worker (the worker itself is
 * device/worker.c). The zygote forks each worker; the tuner sends it
 * fixed-size requests and waits for each reply with a deadline, so a
 * configuration that crashes or hangs costs one worker, which is replaced on
 * the next request.
 *
 * A socket pair rather than two pipes: send(MSG_NOSIGNAL) to a dead worker
 * fails with EPIPE instead of killing the tuner with SIGPIPE. */
#include "worker_client.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../device/worker.h"
#include "../device/zygote.h"
#include "../proc/fdpass.h"
#include "../proc/process.h"
#include "../proc/socket_io.h"

enum { MAX_DEVICES = 64 };
static const double START_TIMEOUT_S = 120; /* opening a GPU can take a while */
static const double LIST_TIMEOUT_S = 60;

struct kt__worker {
  kt__worker_setup setup;
  kt__zygote *zygote; /* forks the workers from a state with no GPU library loaded */
  pid_t pid;          /* 0: no live worker */
  int fd;             /* the parent's end of the socket pair */
  int out_fd;         /* read end of the worker's stdout and stderr */
  int restarts;
  kt__device_info info;
  char printed[KT__OUTPUT_KEEP]; /* what the current request printed */
  /* A kept worker's binding to the current tuning (kt__worker_rebind): sent
   * again to each replacement, which the zygote forks with the first
   * tuning's setup. NULL: the forked setup is the current one. */
  char *bind_msg;
  size_t bind_len;
  bool bind_pending; /* kt__worker_ready sends it after the hello */
};

/* The worker the tuning helper keeps between tunings (kt__worker_park). */
static kt__worker *parked;

/* "worker crashed: SIGSEGV (Segmentation fault)" and the like. */
static void describe_exit(int status, char *out, size_t size) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char *abbrev = sigabbrev_np(sig), *descr = sigdescr_np(sig);
    snprintf(out, size, "worker crashed: SIG%s (%s)", abbrev ? abbrev : "?", descr ? descr : "unknown signal");
  } else if (WIFEXITED(status)) {
    snprintf(out, size, "worker exited with status %d during the run", WEXITSTATUS(status));
  } else {
    snprintf(out, size, "worker stopped unexpectedly");
  }
}

static void reap(pid_t pid, int *status) {
  while (waitpid(pid, status, 0) < 0 && errno == EINTR) {}
}

/* Signals a kernel raises by its own faults; any other signal that ends a
 * worker came from outside it (the OOM killer, an operator, a kernel's
 * kill() being the exception this cannot tell apart). */
static bool kernel_signal(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGABRT || sig == SIGTRAP ||
         sig == SIGSYS;
}

/* Kills the worker (if still alive), reaps it, and describes how it ended;
 * *OUTSIDE (may be NULL): it died by a signal not of its kernel's making. */
static void bury(kt__worker *w, char *why, size_t size, bool *outside) {
  int status = 0;
  kt__zygote_reap(w->zygote, w->pid, &status);
  if (why) describe_exit(status, why, size);
  if (outside) *outside = WIFSIGNALED(status) && !kernel_signal(WTERMSIG(status));
  close(w->fd);
  close(w->out_fd);
  w->pid = 0;
  w->fd = w->out_fd = -1;
}

static void worker_entry(void *setup, int fd, pid_t zygote) { kt__worker_main(setup, fd, zygote); }

/* A worker is forked (spawn_begin) and then waited for while it opens its
 * device (spawn_finish). */
static int spawn_begin(kt__worker *w, kt__errbuf *eb) {
  KT__FORWARD(kt__zygote_spawn(w->zygote, &w->pid, &w->fd, &w->out_fd, eb));
  fcntl(w->out_fd, F_SETFL, O_NONBLOCK);
  return KT_OK;
}

static int spawn_finish(kt__worker *w, kt__errbuf *eb) {
  kt__hello *h = kt__xcalloc(1, sizeof *h);
  char printed[1024];
  kt__output_sink out = {.fd = w->out_fd, .buf = printed, .cap = sizeof printed - 1};
  kt__recv_result r = kt__recv_all(w->fd, h, sizeof *h, kt__now() + START_TIMEOUT_S, true, &out);
  printed[out.len] = 0;
  int rc = KT_OK;
  if (r == KT__RECV_OK && h->rc == KT_OK) {
    w->info = h->info;
  } else {
    char why[256] = "";
    bury(w, why, sizeof why, NULL);
    if (r == KT__RECV_OK) rc = kt__err(eb, h->rc, "%s", h->msg);
    else if (r == KT__RECV_TIMEOUT)
      rc = kt__err(eb, KT_NOBACKEND, "the worker did not open the device within %g s", START_TIMEOUT_S);
    else if (r == KT__RECV_INTERRUPTED)
      rc = kt__err(eb, KT_INTERRUPTED, "interrupted while the worker opened the device");
    else rc = kt__err(eb, KT_NOBACKEND, "the worker died while opening the device (%s)", why);
    if (out.len) kt__err(eb, rc, "%s; it printed:\n%s", eb->msg, printed); /* the driver may say why */
  }
  free(h);
  return rc;
}

/* Binds a live worker to W's current setup; its hello follows (spawn_finish). */
static int send_bind(kt__worker *w, kt__errbuf *eb) {
  int fd = w->setup.args->fd;
  if (kt__send_fds(w->fd, w->bind_msg, w->bind_len, &fd, 1)) return KT_OK;
  bury(w, NULL, 0, NULL);
  return kt__err(eb, KT_NOBACKEND, "the kept worker is gone");
}

static int spawn(kt__worker *w, kt__errbuf *eb) {
  KT__FORWARD(spawn_begin(w, eb));
  KT__FORWARD(spawn_finish(w, eb));
  if (!w->bind_msg) return KT_OK;
  KT__FORWARD(send_bind(w, eb));
  return spawn_finish(w, eb);
}

/* Appends N bytes of P to the message being built. */
static void put(char **msg, size_t *len, const void *p, size_t n) {
  if (n == 0) return; /* P may be NULL then (no sizes, no extra names), which memcpy must not see */
  *msg = kt__xrealloc(*msg, *len + n);
  memcpy(*msg + *len, p, n);
  *len += n;
}

static void put_text(char **msg, size_t *len, const char *text) { put(msg, len, text, strlen(text) + 1); }

/* The bind request of setup S (protocol.h, kt__bind). */
static void bind_message(const kt__worker_setup *s, char **msg, size_t *len) {
  kt__request rq = {.kind = KT__REQ_BIND};
  const kt__argset *a = s->args;
  kt__bind b = {.lang = (int32_t)s->file->lang,
                .nsizes = s->sizes->n,
                .ntensors = a->ntensors,
                .has_constants = s->constants != NULL,
                .constants_seed = s->constants_seed,
                .atol = s->atol,
                .rtol = s->rtol,
                .path_len = strlen(s->file->src.path),
                .source_len = strlen(s->file->src.text),
                .kernel_len = strlen(s->decl->name),
                .workdir_len = strlen(s->workdir),
                .nextra = s->nextra,
                .has_check = s->check != NULL,
                .tensors_offset = a->fd_offset};
  for (int k = 0; k < a->ntensors; k++) b.has_shared |= a->tensors[k].shared.set;
  for (int i = 0; i < s->nextra; i++) b.extra_len += strlen(s->extra_names[i]) + 1;
  if (s->check) {
    b.check_object_len = strlen(s->check->object);
    b.check_symbol_len = strlen(s->check->symbol);
    b.check_source_len = strlen(s->check->source);
  }
  if (s->bincache) b.bincache = *s->bincache;
  *msg = NULL;
  *len = 0;
  put(msg, len, &rq, sizeof rq);
  put(msg, len, &b, sizeof b);
  put(msg, len, s->sizes->values, (size_t)s->sizes->n * sizeof *s->sizes->values);
  for (int k = 0; k < a->ntensors; k++) put(msg, len, &a->tensors[k].compared, 1);
  for (int k = 0; k < a->ntensors; k++) put(msg, len, &a->tensors[k].reference_set, 1);
  for (int k = 0; k < a->ntensors && b.has_shared; k++)
    put(msg, len, &a->tensors[k].shared, sizeof a->tensors[k].shared);
  put_text(msg, len, s->file->src.path);
  put_text(msg, len, s->file->src.text);
  put_text(msg, len, s->decl->name);
  put_text(msg, len, s->workdir);
  put(msg, len, s->extra_values, (size_t)s->nextra * sizeof *s->extra_values);
  for (int i = 0; i < s->nextra; i++) put_text(msg, len, s->extra_names[i]);
  if (!s->check) return;
  put_text(msg, len, s->check->object);
  put_text(msg, len, s->check->symbol);
  put_text(msg, len, s->check->source);
}

bool kt__worker_bindable(const kt__worker_setup *s) {
  return s->args && !s->check && s->nextra == 0 && s->args->fd >= 0;
}

bool kt__worker_park(kt__worker *w) {
  if (!w || !w->pid) return false;
  kt__request rq = {.kind = KT__REQ_RELEASE};
  kt__reply *rep = kt__xmalloc(sizeof *rep);
  kt__worker_request(w, &rq, rep, 30);
  bool released = rep->status == KT__ST_OK && w->pid;
  free(rep);
  if (!released) return false;
  if (parked && parked != w) kt__worker_stop(parked);
  parked = w;
  free(w->bind_msg);
  w->bind_msg = NULL; /* the tuning's setup is freed after this */
  memset(&w->setup, 0, sizeof w->setup);
  kt__trace("worker: kept for the next tuning (pid %d)", (int)w->pid);
  return true;
}

int kt__worker_rebind(const kt__worker_setup *setup, kt__worker **out, kt__errbuf *eb) {
  *out = NULL;
  kt__worker *w = parked;
  if (!w || !kt__worker_bindable(setup)) return KT_NOTFOUND;
  parked = NULL;
  if (w->info.index != setup->device || strcmp(w->info.backend, setup->backend->name) != 0) {
    kt__worker_stop(w);
    return KT_NOTFOUND;
  }
  w->setup = *setup;
  bind_message(setup, &w->bind_msg, &w->bind_len);
  if (w->pid && send_bind(w, eb) == KT_OK) {
    w->bind_pending = false;
  } else { /* it died while kept: a fresh one from the zygote, bound once it opened the device */
    int rc = spawn_begin(w, eb);
    if (rc != KT_OK) {
      kt__worker_stop(w);
      return rc;
    }
    w->bind_pending = true;
  }
  kt__trace("worker: kept worker bound to %s", setup->decl->name);
  *out = w;
  return KT_OK;
}

/* A worker that failed to start: its zygote (and with it the child) ends. */
static void discard(kt__worker *w) {
  kt__zygote_stop(w->zygote);
  free(w->bind_msg);
  free(w);
}

/* Whether a worker that is not a fork of this process can serve SETUP: all
 * of it travels in a bind (protocol.h, kt__bind) but a check callback. */
static bool carried(const kt__worker_setup *s) {
  return s->args && s->args->fd >= 0 && (!s->check || s->check->object);
}

/* Whether W's zygote is to be a fresh image, and why: the setup's
 * spawn_zygote (KTUNE_ZYGOTE=spawn) asks for it always (the tests take that
 * path on the CPU and PoCL); else only when this process holds a GPU
 * driver. */
static bool zygote_spawned(const kt__worker_setup *s, const char **why) {
  *why = kt__zygote_driver_loaded();
  if (s->spawn_zygote && !*why) *why = "KTUNE_ZYGOTE=spawn";
  return *why != NULL;
}

/* The zygote of W: forked from this process when nothing here stops its
 * children from using the device, else a fresh ktune-tuner image whose
 * workers are bound to the setup (kt__zygote_exec). */
static int start_zygote(kt__worker *w, kt__errbuf *eb) {
  const char *why = NULL;
  bool spawned = zygote_spawned(&w->setup, &why);
  if (spawned && !carried(&w->setup)) {
    KT__RETURN_IF(
        kt__zygote_driver_loaded(), eb, KT_INVALID,
        "this process has loaded %s, so a device worker forked from it could not use the device, and a "
        "worker started apart cannot call a check callback (kt_tune_options.check) of this process: give "
        "the check as a compiled file (kt_kernel_set_check, --check FILE.c:FN), or call kt_tune before anything "
        "loads the driver",
        why);
    kt__trace("zygote: forked (KTUNE_ZYGOTE=spawn, but the setup has a check callback)");
    spawned = false;
  }
  if (!spawned) return kt__zygote_start(worker_entry, &w->setup, &w->zygote, eb);
  kt__trace("zygote: a fresh image (%s)", why);
  KT__FORWARD(kt__zygote_exec(w->setup.backend, w->setup.device, &w->zygote, eb));
  bind_message(&w->setup, &w->bind_msg, &w->bind_len);
  w->bind_pending = true;
  return KT_OK;
}

int kt__worker_launch(const kt__worker_setup *setup, kt__worker **out, kt__errbuf *eb) {
  *out = NULL;
  kt__worker *w = kt__xcalloc(1, sizeof *w);
  w->setup = *setup;
  w->fd = w->out_fd = -1;
  int rc = start_zygote(w, eb);
  if (rc == KT_OK) rc = spawn_begin(w, eb);
  if (rc != KT_OK) {
    discard(w);
    return rc;
  }
  *out = w;
  return KT_OK;
}

int kt__worker_ready(kt__worker **wp, kt__device_info *info, kt__errbuf *eb) {
  kt__worker *w = *wp;
  int rc = spawn_finish(w, eb);
  if (rc == KT_OK && w->bind_pending) {
    w->bind_pending = false;
    rc = send_bind(w, eb);
    if (rc == KT_OK) rc = spawn_finish(w, eb);
  }
  if (rc != KT_OK) {
    discard(w);
    *wp = NULL;
    return rc;
  }
  if (info) *info = w->info;
  return KT_OK;
}

int kt__worker_start(const kt__worker_setup *setup, kt__device_info *info, kt__worker **out, kt__errbuf *eb) {
  KT__FORWARD(kt__worker_launch(setup, out, eb));
  return kt__worker_ready(out, info, eb);
}

static void fail(kt__reply *rep, kt__status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(kt__reply *rep, kt__status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  rep->status = st;
  vsnprintf(rep->msg, sizeof rep->msg, fmt, ap);
  va_end(ap);
}

void kt__worker_request(kt__worker *w, const kt__request *req, kt__reply *rep, double timeout_s) {
  memset(rep, 0, sizeof *rep);
  if (w->pid == 0) {
    kt__errbuf eb = {{0}};
    if (spawn(w, &eb) != KT_OK) {
      rep->outside = true;
      return fail(rep, KT__ST_RUNTIME, "cannot restart the worker: %s", eb.msg);
    }
    w->restarts++;
  }
  char why[256];
  if (!kt__send_all(w->fd, req, sizeof *req)) { /* died between requests */
    bury(w, why, sizeof why, &rep->outside);
    return fail(rep, KT__ST_RUNTIME, "%s", why);
  }
  double deadline = timeout_s > 0 ? kt__now() + timeout_s : 0;
  kt__output_sink out = {.fd = w->out_fd, .buf = w->printed, .cap = sizeof w->printed};
  kt__recv_result r = kt__recv_all(w->fd, rep, sizeof *rep, deadline, true, &out);
  memcpy(rep->output.text, w->printed, out.len);
  rep->output.text[out.len] = 0;
  rep->output.len = out.len;
  rep->output.total = out.total;
  switch (r) {
  case KT__RECV_OK:
    if (rep->status == KT__ST_RUNTIME || rep->status == KT__ST_STATE)
      bury(w, NULL, 0, NULL); /* it retires after these */
    return;
  case KT__RECV_EOF: bury(w, why, sizeof why, &rep->outside); return fail(rep, KT__ST_RUNTIME, "%s", why);
  case KT__RECV_TIMEOUT: bury(w, NULL, 0, NULL); return fail(rep, KT__ST_TIMEOUT, "exceeded %g s", timeout_s);
  case KT__RECV_INTERRUPTED: /* not measured: pending, so that it is not recorded */
    bury(w, NULL, 0, NULL);
    return fail(rep, KT__ST_PENDING, "interrupted");
  }
}

int kt__worker_restarts(const kt__worker *w) { return w->restarts; }

/* Closing the socket tells the worker that nothing more is coming; the tuner
 * does not wait for it to release the device. Stopping the zygote ends the
 * worker (PR_SET_PDEATHSIG), and the driver frees its context and memory as
 * the process dies: on the H200 a graceful teardown (modules, 768 MB of
 * buffers, the context) kept the tuner waiting 0.26 s of a 2 s tuning. */
void kt__worker_stop(kt__worker *w) {
  if (!w) return;
  if (w == parked) parked = NULL;
  if (w->pid) close(w->fd);
  kt__zygote_stop(w->zygote);
  free(w->bind_msg);
  free(w);
}

/* --- listing devices ---------------------------------------------------------- */

typedef struct device_list {
  int rc, count;
  char msg[2048];
} device_list;

static void list_child(const kt__backend *be, int max, int fd, pid_t parent) {
  kt__proc_die_with_parent(SIGKILL, parent, 1);
  kt__device_info *infos = kt__xcalloc((size_t)max, sizeof *infos);
  kt__errbuf eb = {{0}};
  device_list hdr = {0};
  hdr.rc = kt__be_list_devices(be, infos, max, &hdr.count, &eb);
  if (hdr.rc != KT_OK) hdr.count = 0;
  kt__copy_msg(hdr.msg, sizeof hdr.msg, eb.msg);
  if (kt__send_all(fd, &hdr, sizeof hdr)) kt__send_all(fd, infos, (size_t)hdr.count * sizeof *infos);
  _exit(0);
}

int kt__worker_list_devices(const kt__backend *be, kt__device_info *out, int max, int *count, kt__errbuf *eb) {
  *count = 0;
  if (max > MAX_DEVICES) max = MAX_DEVICES;
  if (max <= 0) return KT_OK;
  int fd;
  pid_t parent = getpid(), pid = kt__proc_fork_connected(&fd);
  if (pid < 0) return kt__err(eb, KT_IO, "cannot fork a child to list the %s devices: %s", be->name, strerror(errno));
  if (pid == 0) list_child(be, max, fd, parent);
  double deadline = kt__now() + LIST_TIMEOUT_S;
  device_list hdr;
  kt__recv_result r = kt__recv_all(fd, &hdr, sizeof hdr, deadline, false, NULL);
  if (r == KT__RECV_OK && hdr.count > 0 && hdr.count <= max)
    r = kt__recv_all(fd, out, (size_t)hdr.count * sizeof *out, deadline, false, NULL);
  close(fd);
  int status = 0;
  if (r != KT__RECV_OK) kill(pid, SIGKILL);
  reap(pid, &status);
  if (r != KT__RECV_OK) {
    char why[256] = "timed out";
    if (r == KT__RECV_EOF) describe_exit(status, why, sizeof why);
    return kt__err(eb, KT_NOBACKEND, "listing the %s devices failed: %s", be->name, why);
  }
  if (hdr.rc != KT_OK) return kt__err(eb, hdr.rc, "%s", hdr.msg);
  *count = hdr.count <= max ? hdr.count : 0;
  return KT_OK;
}

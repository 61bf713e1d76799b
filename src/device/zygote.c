#include "zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../proc/helper_exe.h"
#include "../proc/process.h"
#include "../proc/socket_io.h"
#include "worker.h"

struct kt__zygote {
  pid_t pid;
  int ctl; /* the tuner's end of the control socket */
};

typedef enum { OP_SPAWN = 1, OP_REAP = 2 } op_kind;

enum {
  MAX_FDS = 2,      /* a worker's socket and its output pipe */
  MAX_CHILDREN = 64 /* live workers: one at a time in practice */
};

typedef struct request {
  op_kind op;
  pid_t pid;
} request;

typedef struct reply {
  int rc;     /* 0, or an errno */
  pid_t pid;  /* OP_SPAWN */
  int status; /* OP_REAP */
} reply;

/* Sends REP, with the NFDS descriptors FDS attached (SCM_RIGHTS). */
static bool send_reply(int ctl, const reply *rep, const int *fds, int nfds) {
  struct iovec iov = {(void *)rep, sizeof *rep};
  union {
    char buf[CMSG_SPACE(sizeof(int) * MAX_FDS)];
    struct cmsghdr align;
  } u;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  if (nfds > 0) {
    memset(&u, 0, sizeof u);
    msg.msg_control = u.buf;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
  }
  ssize_t k;
  do k = sendmsg(ctl, &msg, MSG_NOSIGNAL);
  while (k < 0 && errno == EINTR);
  return k == (ssize_t)sizeof *rep;
}

/* Receives a reply and up to MAX_FDS descriptors into FDS (-1 where none came). */
static bool recv_reply(int ctl, reply *rep, int fds[MAX_FDS]) {
  struct iovec iov = {rep, sizeof *rep};
  union {
    char buf[CMSG_SPACE(sizeof(int) * MAX_FDS)];
    struct cmsghdr align;
  } u;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
  ssize_t k;
  do k = recvmsg(ctl, &msg, MSG_CMSG_CLOEXEC);
  while (k < 0 && errno == EINTR);
  for (int i = 0; i < MAX_FDS; i++) fds[i] = -1;
  if (k != (ssize_t)sizeof *rep) return false;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      memcpy(fds, CMSG_DATA(c), sizeof(int) * (n < MAX_FDS ? n : MAX_FDS));
    }
  return true;
}

/* ---- inside the zygote ------------------------------------------------ */

/* The zygote's live workers, each the leader of its own process group. */
static pid_t children[MAX_CHILDREN];
static int nchildren;

static void forget_child(pid_t pid) {
  for (int i = 0; i < nchildren; i++)
    if (children[i] == pid) children[i] = children[--nchildren];
}

/* SIGKILL to the worker and everything it started: a child forked by a
 * kernel is in the worker's process group and must not outlive it (it
 * would hold the tuner's pipes open and keep running). */
static void kill_group(pid_t pid) {
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL); /* in case it left its group */
}

/* In the new worker, before FN: its own process group, so that a kernel's
 * kill(0, ...) reaches only the worker's group and the group can be killed
 * whole; stdout and stderr into the output pipe, never into the tuner's
 * stdout (a kernel's printf would break --json). The tuner's stderr stays
 * reachable for KTUNE_TRACE. */
static void become_worker(int out_fd) {
  setpgid(0, 0);
  int trace = fcntl(2, F_DUPFD_CLOEXEC, 3);
  if (trace >= 0) kt__trace_fd = trace;
  dup2(out_fd, 1);
  dup2(out_fd, 2);
  if (out_fd > 2) close(out_fd);
}

static void do_spawn(int ctl, kt__zygote_child_fn fn, void *ud) {
  int fd, out[2];
  reply rep = {0};
  if (nchildren == MAX_CHILDREN) {
    rep.rc = EAGAIN;
    send_reply(ctl, &rep, NULL, 0);
    return;
  }
  if (pipe2(out, O_CLOEXEC) != 0) {
    rep.rc = errno;
    send_reply(ctl, &rep, NULL, 0);
    return;
  }
  pid_t self = getpid(), pid = kt__proc_fork_connected(&fd);
  if (pid == 0) {
    close(ctl);
    close(out[0]);
    become_worker(out[1]);
    fn(ud, fd, self);
    _exit(1);
  }
  rep.rc = pid < 0 ? errno : 0;
  close(out[1]);
  if (pid < 0) {
    close(out[0]);
    send_reply(ctl, &rep, NULL, 0);
    return;
  }
  setpgid(pid, pid); /* also here, so the group exists before any reap */
  children[nchildren++] = pid;
  rep.pid = pid;
  int fds[MAX_FDS] = {fd, out[0]};
  send_reply(ctl, &rep, fds, MAX_FDS);
  close(fd);
  close(out[0]);
}

static void do_reap(int ctl, const request *rq) {
  reply rep = {0};
  kill_group(rq->pid); /* a no-op for a worker that has already ended */
  pid_t r;
  do r = waitpid(rq->pid, &rep.status, 0);
  while (r < 0 && errno == EINTR);
  rep.rc = r < 0 ? errno : 0;
  forget_child(rq->pid);
  send_reply(ctl, &rep, NULL, 0);
}

/* Closes every file the tuner had open but stdin, stdout, stderr and CTL:
 * a pipe someone waits on to end (the tuning helper's reply, which the
 * application reads to its end) must not stay open as long as the zygote
 * and its workers live, and a worker kept between tunings lives on. The
 * tensors stay mapped without their memfd. */
static void keep_only(int ctl) {
  if (ctl > 3) close_range(3, (unsigned)ctl - 1, 0);
  close_range((unsigned)ctl + 1, ~0U, 0);
}

_Noreturn static void zygote_main(int ctl, pid_t parent, kt__zygote_child_fn fn, void *ud) {
  /* No death signal: the zygote learns of the tuner's end from the control
   * socket's EOF (the socket closes when the tuner dies, however it dies)
   * and then kills its workers' process groups, which a death signal would
   * pre-empt. */
  if (getppid() != parent) _exit(1);
  /* Ctrl-C (and a hang-up) reaches the whole process group; the tuner
   * decides when workers stop, so the zygote and (by inheritance) its
   * workers ignore it. */
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  keep_only(ctl);
  request rq;
  while (kt__recv_all(ctl, &rq, sizeof rq, 0, false, NULL) == KT__RECV_OK) {
    if (rq.op == OP_SPAWN) do_spawn(ctl, fn, ud);
    else if (rq.op == OP_REAP) do_reap(ctl, &rq);
  }
  for (int i = 0; i < nchildren; i++) kill_group(children[i]);
  _exit(0);
}

/* ---- in the tuner ----------------------------------------------------- */

int kt__zygote_start(kt__zygote_child_fn fn, void *ud, kt__zygote **out, kt__errbuf *eb) {
  int fd;
  pid_t parent = getpid(), pid = kt__proc_fork_connected(&fd);
  if (pid < 0) return kt__err(eb, KT_IO, "cannot fork the worker spawner: %s", strerror(errno));
  if (pid == 0) zygote_main(fd, parent, fn, ud);
  kt__zygote *z = kt__xcalloc(1, sizeof *z);
  z->pid = pid;
  z->ctl = fd;
  *out = z;
  return KT_OK;
}

int kt__zygote_spawn(kt__zygote *z, pid_t *pid, int *fd, int *out_fd, kt__errbuf *eb) {
  request rq = {.op = OP_SPAWN};
  reply rep;
  int fds[MAX_FDS];
  if (!kt__send_all(z->ctl, &rq, sizeof rq) || !recv_reply(z->ctl, &rep, fds))
    return kt__err(eb, KT_IO, "the worker spawner is gone");
  if (rep.rc != 0 || fds[0] < 0 || fds[1] < 0) {
    for (int i = 0; i < MAX_FDS; i++)
      if (fds[i] >= 0) close(fds[i]);
    return kt__err(eb, KT_IO, "cannot fork a worker: %s", strerror(rep.rc ? rep.rc : EBADF));
  }
  *pid = rep.pid;
  *fd = fds[0];
  *out_fd = fds[1];
  return KT_OK;
}

int kt__zygote_reap(kt__zygote *z, pid_t pid, int *status) {
  request rq = {.op = OP_REAP, .pid = pid};
  reply rep;
  int fds[MAX_FDS];
  *status = 0;
  if (!kt__send_all(z->ctl, &rq, sizeof rq) || !recv_reply(z->ctl, &rep, fds)) return KT_IO;
  *status = rep.status;
  return rep.rc == 0 ? KT_OK : KT_IO;
}

/* ---- a zygote of a fresh image --------------------------------------- */

/* The drivers are the backends' (kt__backend.drivers): a backend's file
 * says what leaves a process unfit to fork its workers from. */
const char *kt__zygote_driver_loaded(void) {
  const kt__backend *be;
  const char *lib = NULL;
  for (int k = KT_BACKEND_AUTO + 1; !lib && (be = kt__backend_of(k)); k++) lib = kt__be_loaded_driver(be);
  return lib;
}

enum { EXEC_CTL_FD = 3 };

/* ktune-tuner --zygote BACKEND DEVICE PARENT with the control socket as fd
 * 3, stdin and stdout on /dev/null, the tuner's stderr (KTUNE_TRACE), the
 * tuner's environment, default signal handling and no blocked signals. */
static int spawn_image(const char *path, int ctl, const kt__backend *be, int device, pid_t *pid) {
  char dev[16], parent[24], fd[8];
  snprintf(dev, sizeof dev, "%d", device);
  snprintf(parent, sizeof parent, "%d", (int)getpid());
  snprintf(fd, sizeof fd, "%d", EXEC_CTL_FD);
  char *argv[] = {(char *)path, "--zygote", (char *)be->name, dev, parent, fd, NULL};
  sigset_t every;
  sigfillset(&every);
  kt__proc_fd fds[] = {{ctl, EXEC_CTL_FD}};
  kt__proc_spawn_opts o = {.fds = fds,
                           .nfds = 1,
                           .null_stdin = true,
                           .null_stdout = true,
                           .unblock_signals = true,
                           .default_signals = &every};
  return kt__proc_spawn(path, argv, &o, pid);
}

int kt__zygote_exec(const kt__backend *be, int device, kt__zygote **out, kt__errbuf *eb) {
  char path[4096];
  kt__sbuf why = {0};
  if (!kt__helper_exe_path(path, sizeof path, &why)) {
    kt__err(eb, KT_NOBACKEND, "ktune: error: cannot start a clean worker spawner: %s", why.s);
    kt__sbuf_free(&why);
    return KT_NOBACKEND;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return kt__err(eb, KT_IO, "socketpair: %s", strerror(errno));
  pid_t pid;
  int rc = spawn_image(path, sv[1], be, device, &pid);
  close(sv[1]);
  if (rc != 0) {
    close(sv[0]);
    return kt__err(
        eb, KT_NOBACKEND,
        "ktune: error: cannot start the worker spawner %s: %s (set KTUNE_HELPER to the ktune-tuner executable)", path,
        strerror(rc));
  }
  kt__trace("zygote: spawned %s --zygote (pid %d)", path, (int)pid);
  kt__zygote *z = kt__xcalloc(1, sizeof *z);
  z->pid = pid;
  z->ctl = sv[0];
  *out = z;
  return KT_OK;
}

/* What each worker of a spawned zygote starts from: the device only. */
static kt__worker_setup device_only;

static void device_worker(void *setup, int fd, pid_t zygote) { kt__worker_main(setup, fd, zygote); }

int kt__zygote_exec_main(int argc, char **argv) {
  const kt__backend *be = NULL;
  for (int k = KT_BACKEND_AUTO + 1; argc == 6 && !be && kt__backend_of(k); k++)
    if (strcmp(kt__backend_of(k)->name, argv[2]) == 0) be = kt__backend_of(k);
  char *end = NULL;
  long device = argc == 6 ? strtol(argv[3], &end, 10) : -1, parent = argc == 6 ? strtol(argv[4], NULL, 10) : 0,
       ctl = argc == 6 ? strtol(argv[5], NULL, 10) : -1;
  if (!be || !end || *end || device < 0 || parent <= 0 || ctl < 3) {
    fprintf(stderr, "ktune-tuner: --zygote BACKEND DEVICE PARENT FD is started by kt_tune, not by hand\n");
    return 2;
  }
  device_only = (kt__worker_setup){.backend = be, .device = (int)device};
  zygote_main((int)ctl, (pid_t)parent, device_worker, &device_only);
}

void kt__zygote_stop(kt__zygote *z) {
  if (!z) return;
  close(z->ctl); /* the zygote reads EOF, kills its workers' groups and exits */
  int st;
  while (waitpid(z->pid, &st, 0) < 0 && errno == EINTR) {}
  free(z);
}

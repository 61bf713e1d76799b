#include "zygote.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

struct kt__zygote {
  pid_t pid;
  int ctl; /* the tuner's end of the control socket */
};

typedef enum { OP_SPAWN = 1, OP_REAP = 2 } op_kind;

typedef struct request {
  op_kind op;
  pid_t pid;
} request;

typedef struct reply {
  int rc;     /* 0, or an errno */
  pid_t pid;  /* OP_SPAWN */
  int status; /* OP_REAP */
} reply;

static bool write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= (size_t)k;
  }
  return true;
}

static bool read_all(int fd, void *buf, size_t n) {
  char *p = buf;
  while (n > 0) {
    ssize_t k = recv(fd, p, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= (size_t)k;
  }
  return true;
}

/* Sends REP, with FD attached when FD >= 0 (SCM_RIGHTS). */
static bool send_reply(int ctl, const reply *rep, int fd) {
  struct iovec iov = {(void *)rep, sizeof *rep};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  if (fd >= 0) {
    memset(&u, 0, sizeof u);
    msg.msg_control = u.buf;
    msg.msg_controllen = sizeof u.buf;
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  ssize_t k;
  do k = sendmsg(ctl, &msg, MSG_NOSIGNAL);
  while (k < 0 && errno == EINTR);
  return k == (ssize_t)sizeof *rep;
}

static bool recv_reply(int ctl, reply *rep, int *fd) {
  struct iovec iov = {rep, sizeof *rep};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
  ssize_t k;
  do k = recvmsg(ctl, &msg, MSG_CMSG_CLOEXEC);
  while (k < 0 && errno == EINTR);
  if (k != (ssize_t)sizeof *rep) return false;
  *fd = -1;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) memcpy(fd, CMSG_DATA(c), sizeof *fd);
  return true;
}

/* ---- inside the zygote ------------------------------------------------ */

static void do_spawn(int ctl, kt__zygote_child_fn fn, void *ud) {
  int sv[2];
  reply rep = {0};
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    rep.rc = errno;
    send_reply(ctl, &rep, -1);
    return;
  }
  pid_t self = getpid(), pid = fork();
  if (pid == 0) {
    close(ctl);
    close(sv[0]);
    fn(ud, sv[1], self);
    _exit(1);
  }
  close(sv[1]);
  rep.pid = pid;
  rep.rc = pid < 0 ? errno : 0;
  send_reply(ctl, &rep, pid < 0 ? -1 : sv[0]);
  close(sv[0]);
}

static void do_reap(int ctl, const request *rq) {
  reply rep = {0};
  kill(rq->pid, SIGKILL); /* a no-op for a worker that has already ended */
  pid_t r;
  do r = waitpid(rq->pid, &rep.status, 0);
  while (r < 0 && errno == EINTR);
  rep.rc = r < 0 ? errno : 0;
  send_reply(ctl, &rep, -1);
}

static void zygote_main(int ctl, pid_t parent, kt__zygote_child_fn fn, void *ud) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  /* Ctrl-C (and a hang-up) reaches the whole process group; the tuner
   * decides when workers stop, so the zygote and (by inheritance) its
   * workers ignore it. */
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  request rq;
  while (read_all(ctl, &rq, sizeof rq)) {
    if (rq.op == OP_SPAWN) do_spawn(ctl, fn, ud);
    else if (rq.op == OP_REAP) do_reap(ctl, &rq);
  }
  _exit(0);
}

/* ---- in the tuner ----------------------------------------------------- */

int kt__zygote_start(kt__zygote_child_fn fn, void *ud, kt__zygote **out, kt__errbuf *eb) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return kt__err(eb, KT_IO, "socketpair: %s", strerror(errno));
  fflush(NULL); /* nothing buffered may be written twice */
  pid_t parent = getpid(), pid = fork();
  if (pid < 0) {
    close(sv[0]);
    close(sv[1]);
    return kt__err(eb, KT_IO, "cannot fork the worker spawner: %s", strerror(errno));
  }
  if (pid == 0) {
    close(sv[0]);
    zygote_main(sv[1], parent, fn, ud);
  }
  close(sv[1]);
  kt__zygote *z = kt__xcalloc(1, sizeof *z);
  z->pid = pid;
  z->ctl = sv[0];
  *out = z;
  return KT_OK;
}

int kt__zygote_spawn(kt__zygote *z, pid_t *pid, int *fd, kt__errbuf *eb) {
  request rq = {.op = OP_SPAWN};
  reply rep;
  if (!write_all(z->ctl, &rq, sizeof rq) || !recv_reply(z->ctl, &rep, fd))
    return kt__err(eb, KT_IO, "the worker spawner is gone");
  if (rep.rc != 0 || *fd < 0) return kt__err(eb, KT_IO, "cannot fork a worker: %s", strerror(rep.rc));
  *pid = rep.pid;
  return KT_OK;
}

int kt__zygote_reap(kt__zygote *z, pid_t pid, int *status) {
  request rq = {.op = OP_REAP, .pid = pid};
  reply rep;
  int fd;
  *status = 0;
  if (!write_all(z->ctl, &rq, sizeof rq) || !recv_reply(z->ctl, &rep, &fd)) return KT_IO;
  *status = rep.status;
  return rep.rc == 0 ? KT_OK : KT_IO;
}

void kt__zygote_stop(kt__zygote *z) {
  if (!z) return;
  close(z->ctl); /* the zygote reads EOF and exits; its workers die with it */
  int st;
  while (waitpid(z->pid, &st, 0) < 0 && errno == EINTR) {
  }
  free(z);
}

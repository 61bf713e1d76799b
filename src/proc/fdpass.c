/* Messages with descriptors over a Unix socket (fdpass.h). */
#include "fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { MAX_FDS = 8 };

bool kt__send_fds(int sock, const void *buf, size_t n, const int *fds, int nfds) {
  const char *p = buf;
  bool first = true;
  while (n > 0 || first) {
    struct iovec iov = {(void *)p, n};
    union {
      char buf[CMSG_SPACE(MAX_FDS * sizeof(int))];
      struct cmsghdr align;
    } ctl;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    if (first && nfds > 0) {
      if (nfds > MAX_FDS) return false;
      memset(&ctl, 0, sizeof ctl);
      m.msg_control = ctl.buf;
      m.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
      struct cmsghdr *c = CMSG_FIRSTHDR(&m);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
      memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
    }
    ssize_t w = sendmsg(sock, &m, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    first = false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

/* Keeps the descriptors of one control message, closing those beyond MAX. */
static void take_fds(struct msghdr *m, int *fds, int max, int *nfds) {
  for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    for (int i = 0; i < count; i++) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + (size_t)i * sizeof(int), sizeof fd);
      if (*nfds < max) fds[(*nfds)++] = fd;
      else close(fd);
    }
  }
}

bool kt__recv_fds(int sock, void *buf, size_t n, int *fds, int max, int *nfds) {
  char *p = buf;
  *nfds = 0;
  while (n > 0) {
    struct iovec iov = {p, n};
    union {
      char buf[CMSG_SPACE(MAX_FDS * sizeof(int))];
      struct cmsghdr align;
    } ctl;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    ssize_t r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    if (r < 0 && errno == EINTR) continue;
    if (r > 0) take_fds(&m, fds, max, nfds);
    if (r <= 0) {
      for (int i = 0; i < *nfds; i++) close(fds[i]);
      *nfds = 0;
      return false;
    }
    p += r;
    n -= (size_t)r;
  }
  return true;
}

#include "socket_io.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

bool kt__send_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k, n -= (size_t)k;
  }
  return true;
}

/* How often a wait in the tuner looks at kt__interrupted: the signal may
 * land on another thread and leave poll() asleep. */
enum { INTERRUPT_POLL_MS = 50 };

/* Reads what is in the pipe now (it is non-blocking). */
static void drain_output(kt__output_sink *o) {
  if (!o || o->fd < 0) return;
  char chunk[4096];
  for (;;) {
    ssize_t k = read(o->fd, chunk, sizeof chunk);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return;
    size_t room = o->cap > o->len ? o->cap - o->len : 0, take = (size_t)k < room ? (size_t)k : room;
    if (take) memcpy(o->buf + o->len, chunk, take);
    o->len += take;
    o->total += (uint64_t)k;
  }
}

kt__recv_result kt__recv_all(int fd, void *buf, size_t n, double deadline, bool interruptible, kt__output_sink *out) {
  char *p = buf;
  kt__recv_result res = KT__RECV_OK;
  while (n > 0) {
    if (interruptible && kt__interrupted) {
      res = KT__RECV_INTERRUPTED;
      break;
    }
    int ms = -1;
    if (deadline > 0) {
      double left = deadline - kt__now();
      if (left <= 0) {
        res = KT__RECV_TIMEOUT;
        break;
      }
      ms = (int)(left * 1000) + 1;
    }
    if (interruptible && (ms < 0 || ms > INTERRUPT_POLL_MS)) ms = INTERRUPT_POLL_MS;
    struct pollfd pf[2] = {{.fd = fd, .events = POLLIN}, {.fd = out ? out->fd : -1, .events = POLLIN}};
    int r = poll(pf, 2, ms);
    if (r < 0 && errno != EINTR) {
      res = KT__RECV_EOF;
      break;
    }
    if (r <= 0) continue;
    if (pf[1].revents) drain_output(out);
    if (!pf[0].revents) continue;
    ssize_t k = recv(fd, p, n, 0);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (k <= 0) {
      res = KT__RECV_EOF;
      break;
    }
    p += k, n -= (size_t)k;
  }
  drain_output(out);
  return res;
}

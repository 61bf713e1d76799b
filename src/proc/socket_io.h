/* Whole messages over a stream socket between two of ktune's processes (the
 * tuner, the zygote, a device worker): the one place that loops over short
 * sends and receives. Messages are fixed-size structs (protocol.h, and the
 * zygote's own). */
#ifndef KT_SOCKET_IO_H
#define KT_SOCKET_IO_H

#include "../common.h"

/* Sends all N bytes; false when the peer is gone. MSG_NOSIGNAL: a dead peer
 * gives EPIPE instead of killing the sender with SIGPIPE. */
bool kt__send_all(int fd, const void *buf, size_t n);

typedef enum { KT__RECV_OK, KT__RECV_EOF, KT__RECV_TIMEOUT, KT__RECV_INTERRUPTED } kt__recv_result;

/* What a worker prints (its kernels' printf, a driver's warnings) while the
 * tuner waits: the first CAP bytes are kept, the rest only counted, so a
 * chatty kernel can neither fill the tuner's memory nor block on a full
 * pipe. */
typedef struct kt__output_sink {
  int fd; /* -1: nothing to read; non-blocking */
  char *buf;
  size_t cap, len;
  uint64_t total;
} kt__output_sink;

/* Reads exactly N bytes; DEADLINE <= 0 waits forever. INTERRUPTIBLE: gives
 * up (KT__RECV_INTERRUPTED) soon after kt_interrupt(). OUT (may be NULL) is
 * drained meanwhile, and once more at the end: the worker writes its output
 * before its reply, so all of it is in the pipe by then. */
kt__recv_result kt__recv_all(int fd, void *buf, size_t n, double deadline, bool interruptible, kt__output_sink *out);

#endif

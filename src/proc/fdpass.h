/* Whole messages over a Unix stream socket with open files passed along
 * (SCM_RIGHTS): how a tuning's tensors reach a device worker that did not
 * fork from its tuner, and how an application hands a miss to a tuning
 * helper that is already running. */
#ifndef KT_FDPASS_H
#define KT_FDPASS_H

#include "../common.h"

/* Sends all N bytes of BUF with the NFDS descriptors FDS (at most 8)
 * attached to the first of them; MSG_NOSIGNAL. False when the peer is gone. */
bool kt__send_fds(int sock, const void *buf, size_t n, const int *fds, int nfds);
/* Reads exactly N bytes (waiting as long as it takes); the descriptors that
 * came with them go to FDS (at most MAX, close-on-exec; any beyond are
 * closed), their count to *NFDS. False at an end of file or an error, with
 * every received descriptor closed. */
bool kt__recv_fds(int sock, void *buf, size_t n, int *fds, int max, int *nfds);

#endif

/* The device worker's bind service: a kept worker, or a spawned zygote's,
 * released from one tuning and bound to the next (KT__REQ_RELEASE,
 * KT__REQ_BIND in protocol.h). */
#ifndef KT_BIND_H
#define KT_BIND_H

#include "worker_state.h"

/* KT__REQ_RELEASE: C's buffers and loaded configurations freed, the device
 * and the setup kept. */
void kt__worker_release(kt__worker_state *c);

/* After a release's reply: the released tuning's tensors unmapped, C->s
 * left without them until the next bind. */
void kt__worker_drop_tensors(kt__worker_state *c);

/* KT__REQ_BIND: reads the kt__bind that follows the request on FD, maps the
 * tensors in MEMFD (-1: none came) and makes C serve that tuning from now on. */
int kt__worker_bind(kt__worker_state *c, int fd, int memfd, kt__errbuf *eb);

/* A bound setup and what it points at; NULL is a no-op. */
void kt__bound_free(kt__bound *b);

#endif

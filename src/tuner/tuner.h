/* kt_tune with what only the tuning helper (ktune-tuner,
 * src/runtime/tune_helper.c) gives it: the caller's data and device, and a
 * device worker kept between its tunings. kt_tune is kt__tune without
 * them; the public handle carries none of it. */
#ifndef KT_TUNER_H
#define KT_TUNER_H

#include "../handles/context.h"

typedef struct kt__tune_helper_opts {
  /* The copies of the caller's host buffers (per decl->params; NULL: none),
   * whose contents the tuner's initial tensors start from. */
  void *const *args;
  /* Waits until the caller's copies are in ARGS (the application writes
   * them while the tuner's worker opens its device); NULL: they are there
   * already. */
  int (*args_wait)(void *ud, kt__errbuf *eb);
  void *args_ud;
  /* With TENSORS_BYTES (0: not so), ARGS lie in shared memory already laid
   * out as the tuner's tensors (kt__argset_adopt): TENSORS_BYTES from
   * TENSORS_AT in the memfd TENSORS_FD. The tuner maps it and does not copy
   * ARGS; a layout of another length (a kernel planned differently) is
   * copied as without. */
  int tensors_fd;
  uint64_t tensors_at, tensors_bytes;
  /* The device as the application saw it, which the tuner compiles the
   * default for while its worker opens it; NULL: none. */
  const kt__device_info *device;
  /* The helper stays for the next miss: the tuning keeps its device worker
   * afterwards and binds a kept one instead of starting a new one
   * (tuner/worker_client.h), so that the next tuning skips the driver's
   * start. */
  bool keep_worker;
  /* KT_MISS_ONLINE: every configuration is compiled and verified, none is
   * timed; verified ones are not stored (nothing was measured: the
   * application times them on its own calls, runtime/online.h), failures
   * are. No finalist rounds, no stored winner. */
  bool verify_only;
  /* The application the tuning is for (kt__measure_opts.peer_pid); 0: none. */
  int peer_pid;
  /* Per decl->params, the caller's tensors where the application holds them
   * on the device (kt__host_tensor.shared; NULL: none), which the workers
   * copy there: their contents in ARGS were then never written. */
  const kt__shared_buffer *shared;
} kt__tune_helper_opts;

/* kt_tune (include/ktune.h) with HELPER's options (NULL: none, as kt_tune). */
int kt__tune(kt_kernel *k, const kt_tune_options *opts, const kt__tune_helper_opts *helper, kt_result **out);

#endif

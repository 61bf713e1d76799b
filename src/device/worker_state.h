/* The device worker's state, private to its files (Lua's lstate.h): the
 * loop and the configurations it loads (worker.c), the checks of a verified
 * run (run_checks.c) and the binding to another tuning (bind.c) each own
 * one phase of it. */
#ifndef KT_WORKER_STATE_H
#define KT_WORKER_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "devpool.h"
#include "guard.h"
#include "procstate.h"
#include "protocol.h"

enum { KT__WORKER_CACHE_SLOTS = 32 }; /* loaded configurations kept per worker */

typedef struct kt__worker_loaded {
  uint64_t id;
  void *fn;
  uint64_t last_used;
} kt__worker_loaded;

typedef struct kt__bound kt__bound; /* bind.c */

typedef struct kt__worker_state {
  const kt__worker_setup *s;
  void *state;
  kt__device_info info;
  void **bufs;         /* device buffer per tensor (guards[k].inner) */
  kt__guarded *guards; /* the allocations, with guard zones around each tensor */
  void **pristine;     /* per `in` tensor, a device copy to compare with (NULL: compare on the host) */
  /* Per output, the reference on the device, which the backend's compare
   * checks the output against without downloading it (NULL: downloaded and
   * compared on the host); uploaded from the shared reference once per
   * worker (run_checks.c, reference_on_device). */
  void **refdev;
  bool *refdev_ready;
  /* Per output, whether its reference holds the poison's bytes anywhere (a
   * NaN the reference computed): 0 not counted yet, 1 no, 2 yes. */
  unsigned char *ref_poisoned;
  bool compared_on_device; /* traced once */
  /* Per output, its decoys (run_checks.c, decoy) kept in a device buffer
   * once made: the run after a configuration's timed runs then starts from
   * a device-to-device copy instead of decoys computed on the host and
   * uploaded (0.2 s per run at 256 MB on the H200). NULL: not made yet, or
   * the backend cannot copy, or no memory: made on the host each time. */
  void **decoydev;
  /* Per tensor the application shared on the device (kt__host_tensor.shared),
   * its initial content, copied from there once (worker.c, copy_shared_initial):
   * the source of every restore instead of the host's INITIAL, which was
   * never written. INITIAL_HOST: downloaded from it when the host needs it
   * (a changed input's message, an author's check). NULL: not shared. */
  void **initdev;
  void **initial_host;
  /* Host buffer as large as the largest tensor, page-locked where the
   * backend can (SCRATCH_PINNED); kept by a worker released for the next
   * tuning, which grows it only when its tensors are larger (0.08 s of
   * page-locking at 256 MB on the H200 not paid again per key). */
  void *scratch;
  bool scratch_pinned;
  /* Every device buffer above comes from and goes back to POOL, which a
   * worker released for the next tuning keeps: the next tuning's buffers
   * reuse its allocations where they are large enough (devpool.h). */
  kt__devpool pool;
  void **outputs;     /* with a check: a host copy of each output it is shown (NULL for inputs),
                     page-aligned (mmap) so that the check's child can make it read-only */
  bool check_faulted; /* the author's check, not the configuration, failed this request */
  size_t scratch_bytes;
  kt__worker_loaded cache[KT__WORKER_CACHE_SLOTS];
  int ncache;
  uint64_t clock;
  kt__config config; /* the names of the values a request carries */
  /* The `in` tensors on the device still hold their initial content: they
   * are uploaded once, not before every run. A kernel that writes its input
   * would make a later configuration look wrong, never right; a mismatch is
   * therefore checked again with fresh inputs before it counts. */
  bool inputs_fresh;
  int cores;
  int64_t (*queued)[KT__MAX_NAMES]; /* KT__REQ_PREBUILD configurations not yet built */
  int nqueued;
  bool watch_state;         /* kernels are host code: compare the process state */
  kt__procstate initial;    /* ... with this, taken once the device is open */
  kt__bound *bound;         /* the setup of a KT__REQ_BIND (NULL: the forked one) */
  kt__worker_setup unbound; /* S once its tensors are dropped (kt__worker_drop_tensors) */
} kt__worker_state;

/* The buffers and state of C's setup (C->s), on its open device. */
int kt__worker_make_buffers(kt__worker_state *c, kt__errbuf *eb);

/* Everything C->s made, the device left open. */
void kt__worker_free_buffers(kt__worker_state *c);
/* The scratch buffer unpinned and freed. */
void kt__worker_drop_scratch(kt__worker_state *c);

#endif

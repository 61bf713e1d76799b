/* What kt_launch hands the tuning helper (ktune-tuner) on a miss: one
 * memfd holding a fixed header, the strings it points at (the kernel's
 * source, its name, the database, the tuning options) and then the tuning's
 * shared memory of tensors, laid out as the tuner lays it out
 * (kt__argset_layout: each tensor's initial content and reference), with
 * the caller's in and inout tensors written into their initial contents by
 * the application. The helper's tuner maps that part as its own tensors
 * (kt__argset_adopt) and tunes on them where they are: the caller's data is
 * copied once, from the device into the request, not again into the
 * tuner's memory. The application writes it once and closes its end; the
 * helper writes only the tuner's part (outputs' initial contents and
 * references). Both ends are built from the same sources, so the layout
 * needs no versioning beyond its magic and size checks. */
#ifndef KT_TUNE_REQUEST_H
#define KT_TUNE_REQUEST_H

#include "../handles/context.h"
#include "../handles/runtime_table.h"

/* Where a string or a tensor lies in the request, from its start; strings
 * are NUL-terminated (LEN does not count it); a tensor of LEN 0 was not
 * passed (outputs, and NULL pointers). */
typedef struct kt__tune_span {
  uint64_t offset, len;
} kt__tune_span;

typedef struct kt__tune_request {
  uint64_t magic;
  uint64_t total_bytes;
  /* the context */
  int32_t backend, device, no_db, jobs, quiet;
  double compile_timeout_s, run_timeout_s;
  uint64_t max_tensor_bytes;
  /* kt_options.miss_tune */
  int64_t budget_configs;
  double budget_s;
  uint64_t seed;
  int32_t no_cache, finalists, rounds, retry_failed;
  int32_t verify_only; /* KT_MISS_ONLINE: verify, do not time (runtime/online.h) */
  int32_t objective;   /* kt_options.objective: the miss tunes for the winner kt_launch looks up */
  /* the kernel, the key and its device as this process saw it */
  char source_hash[65];
  kt__device_info device_info;
  int32_t nsizes;
  int64_t sizes[KT__RT_MAX_SIZES];
  kt__tune_span path, source, kernel, db, strategy, pins, key;
  int32_t nparams;
  kt__tune_span tensor[KT__RT_MAX_ARGS]; /* the caller's in and inout tensors, inside the layout below */
  /* A blocking miss on a backend that shares device memory between
   * processes: the caller's in and inout tensors where they are on the
   * device, which the helper's worker copies there (backend.h,
   * copy_shared); their spans in the layout are then left unwritten. The
   * application waits for the tuning, so its buffers stay as they are. */
  kt__shared_buffer shared[KT__RT_MAX_ARGS];
  /* The tensors' layout (page-aligned; its length kt__argset's map_bytes);
   * 0 bytes: none (the bare request of kt_kernel_prepare). */
  uint64_t tensors_at, tensors_bytes;
} kt__tune_request;

/* The caller's tensors of a request still to be written into it: the
 * backend's snapshot of them (backend.h), taken in the caller's stream
 * order, which kt__tune_request_fill downloads later, in another thread. */
typedef struct kt__tune_pending kt__tune_pending;

/* Writes the request for K at SIZES into a memfd (*FD, close-on-exec): REUSE
 * when it is one (a finished request's memfd, which the caller no longer
 * shares with a running helper; it is taken over, closed on failure), else
 * a new one,
 * with the caller's in/inout tensors in ARGS (BE's buffers, of device DEV,
 * opened as STATE in this process) as they are once the work on STREAM is
 * done; the caller's buffers are only read. Where the backend snapshots,
 * the tensors come later (*PENDING, for kt__tune_request_fill) and this
 * returns without waiting for the device; else (*PENDING NULL) they are
 * copied here after waiting for STREAM, and NOTE says why when a snapshot
 * was refused. A blocking miss (KT_MISS_TUNE) shares them instead where
 * the backend can (kt__tune_request.shared; not with
 * KTUNE_MISS_TENSORS=host), after waiting for STREAM, and copies nothing.
 * DB is the database the helper stores into (NULL: none); KEY names the
 * tuning for the helper's lock. */
int kt__tune_request_create(const kt_kernel *k, const kt__backend *be, void *state, const kt__device_info *dev,
                            const int64_t *sizes, void *const *args, void *stream, const char *db, const char *key,
                            int reuse, int *fd, kt__tune_pending **pending, kt__sbuf *note, kt__errbuf *eb);
/* The request of a helper started by kt_kernel_prepare, before any miss:
 * K, its context's options and DB, every size 1 and no tensors; the helper
 * only opens the device it names (DEV) and waits for the first miss. */
int kt__tune_request_create_bare(const kt_kernel *k, const kt__device_info *dev, const char *db, int *fd,
                                 kt__errbuf *eb);
/* Waits for the snapshot of PENDING and writes it into its request (any
 * thread; PENDING NULL: nothing to do); kt__tune_pending_free frees it. */
int kt__tune_request_fill(kt__tune_pending *pending, kt__errbuf *eb);
void kt__tune_pending_free(kt__tune_pending *pending);
/* Maps the request of FD read-only after checking it; *LEN for munmap. */
int kt__tune_request_map(int fd, const kt__tune_request **out, size_t *len, kt__errbuf *eb);
/* String S of R, or NULL when it was not given. */
const char *kt__tune_request_text(const kt__tune_request *r, kt__tune_span s);

#endif

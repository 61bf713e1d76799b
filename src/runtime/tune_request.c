/* The request of a tuning on a miss (tune_request.h). */
#include "tune_request.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../launch/args.h"
#include "../parallel.h"
#include "online.h"

static const uint64_t MAGIC = 0x34307165726b746bull; /* "ktkreq04" */

/* To the system's page: the tensors' layout is mapped from its offset. */
static uint64_t round_up(uint64_t v) {
  uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
  return (v + page - 1) / page * page;
}

/* The strings of a request, laid out after its header. */
typedef struct strings {
  const char *text[7];
  kt__tune_span *span[7];
  int n;
  uint64_t end;
} strings;

static void add_string(strings *s, const char *text, kt__tune_span *span) {
  s->text[s->n] = text;
  s->span[s->n++] = span;
  if (!text) return;
  span->offset = s->end;
  span->len = strlen(text);
  s->end += span->len + 1;
}

/* "NAME=VALUE ..." of K's pins, for kt_kernel_pin in the helper. */
static void format_pins(const kt_kernel *k, kt__sbuf *out) {
  for (int i = 0; i < k->config.n; i++)
    if (k->pins.set[i])
      kt__sbuf_printf(out, "%s%s=%lld", out->len ? " " : "", k->config.names[i], (long long)k->pins.values[i]);
}

static void describe(const kt_kernel *k, const int64_t *sizes, kt__tune_request *r) {
  const kt_options *o = &k->ctx->opts;
  const kt_tune_options *t = o->miss_tune;
  r->magic = MAGIC;
  for (int kind = KT_BACKEND_AUTO + 1; kt__backend_of(kind); kind++) /* the one the kernel got */
    if (kt__backend_of(kind) == k->backend) r->backend = kind;
  r->device = o->device;
  r->jobs = o->jobs;
  r->quiet = o->quiet;
  r->compile_timeout_s = o->compile_timeout_s;
  r->run_timeout_s = o->run_timeout_s;
  r->max_tensor_bytes = o->max_tensor_bytes;
  r->objective = (int32_t)o->objective;
  if (t) {
    r->budget_configs = t->budget_configs;
    r->budget_s = t->budget_s;
    r->seed = t->seed;
    r->no_cache = t->no_cache;
    r->finalists = t->finalists;
    r->rounds = t->rounds;
    r->retry_failed = t->retry_failed;
  }
  memcpy(r->source_hash, k->source_hash, sizeof r->source_hash);
  r->nsizes = k->decl->nsizes;
  memcpy(r->sizes, sizes, (size_t)k->decl->nsizes * sizeof *sizes);
  r->nparams = k->decl->nparams;
  r->verify_only = kt__online_policy(k) == KT_MISS_ONLINE;
}

/* This mapping's page tables for the caller's tensors in the request at
 * BASE (its header says where), filled at once (kt__populate, the pages
 * allocated where they are new), instead of a fault per page in the copy
 * on every core. */
static void populate_tensors(char *base) {
  const kt__tune_request *r = (const kt__tune_request *)base;
  bool done = true;
  for (int i = 0; i < r->nparams; i++) done &= kt__populate(base + r->tensor[i].offset, r->tensor[i].len);
  if (done) kt__trace("miss: the request's pages for the caller's tensors mapped at once");
}

/* Copies the caller's in and inout tensors into the request at BASE. */
static int copy_tensors(const kt__backend *be, void *state, const kt__argset *a, void *const *args, void *stream,
                        char *base, const kt__tune_request *r, kt__errbuf *eb) {
  populate_tensors(base);
  KT__FORWARD(kt__be_wait(be, state, stream, eb));
  for (int i = 0; i < a->ntensors; i++) {
    const kt__host_tensor *t = &a->tensors[i];
    const kt__tune_span *s = &r->tensor[t->param];
    if (s->len) KT__FORWARD(kt__be_download(be, state, base + s->offset, args[t->param], s->len, eb));
  }
  kt__trace("miss: the caller's tensors copied into the request");
  return KT_OK;
}

struct kt__tune_pending {
  const kt__backend *be;
  void *state, *snap;
  char *base; /* the request, mapped until filled */
  size_t len;
  int n;
  uint64_t offset[KT__RT_MAX_ARGS];
};

void kt__tune_pending_free(kt__tune_pending *p) {
  if (!p) return;
  kt__be_snapshot_free(p->be, p->state, p->snap);
  munmap(p->base, p->len);
  free(p);
}

int kt__tune_request_fill(kt__tune_pending *p, kt__errbuf *eb) {
  if (!p) return KT_OK;
  int rc = KT_OK;
  populate_tensors(p->base);
  for (int i = 0; i < p->n && rc == KT_OK; i++)
    rc = kt__be_snapshot_read(p->be, p->state, p->snap, i, p->base + p->offset[i], eb);
  kt__trace("miss: the caller's tensors downloaded into the request");
  return rc;
}

/* The snapshot of the caller's tensors into *OUT, which then owns BASE;
 * false when the backend takes none or refused (NOTE says why). */
static bool snapshot_tensors(const kt__backend *be, void *state, const kt__tune_request *r, void *const *args,
                             void *stream, char *base, size_t len, kt__tune_pending **out, kt__sbuf *note) {
  kt__tune_pending *p = kt__xcalloc(1, sizeof *p);
  void *bufs[KT__RT_MAX_ARGS];
  size_t bytes[KT__RT_MAX_ARGS];
  for (int i = 0; i < r->nparams; i++)
    if (r->tensor[i].len) {
      bufs[p->n] = args[i];
      bytes[p->n] = r->tensor[i].len;
      p->offset[p->n++] = r->tensor[i].offset;
    }
  kt__errbuf eb;
  int rc = kt__be_snapshot(be, state, stream, bufs, bytes, p->n, &p->snap, &eb);
  if (rc != KT_OK) {
    if (rc != KT_NOTFOUND)
      kt__sbuf_printf(note, "no snapshot of the caller's tensors (%s): copied them before returning", eb.msg);
    free(p);
    return false;
  }
  p->be = be, p->state = state, p->base = base, p->len = len;
  *out = p;
  kt__trace("miss: snapshot of the caller's tensors enqueued");
  return true;
}

/* A blocking miss's tensors shared with the helper (tune_request.h) into R,
 * once the caller's work on STREAM is done: true when every one was, false
 * (R unchanged) when this backend or one of the buffers cannot be, the
 * user said KTUNE_MISS_TENSORS=host, or a worker of this handle's could not
 * copy them before (tensors_through_host). Only for a miss the caller
 * waits for: a background tuning's application goes on writing them. */
static bool share_tensors(const kt_kernel *k, const kt__backend *be, void *state, void *const *args, void *stream,
                          kt__tune_request *r) {
  if (!be->share || kt__online_policy(k) != KT_MISS_TUNE ||
      k->ctx->env.v[KT__ENV_MISS_TENSORS].choice != KT__MISS_TENSORS_DEVICE || k->runtime->tensors_through_host)
    return false;
  kt__shared_buffer shared[KT__RT_MAX_ARGS] = {0};
  kt__errbuf eb;
  for (int i = 0; i < r->nparams; i++)
    if (r->tensor[i].len && kt__be_share(be, state, args[i], r->tensor[i].len, &shared[i], &eb) != KT_OK) {
      kt__trace("miss: %s; copied through host memory", eb.msg);
      return false;
    }
  /* Also for the default stream (NULL), which a download would have waited
   * for by itself, and a copy in another process does not. */
  if (be->wait && be->wait(state, stream, &eb) != KT_OK) {
    kt__trace("miss: %s; copied through host memory", eb.msg);
    return false;
  }
  memcpy(r->shared, shared, sizeof shared);
  kt__trace("miss: the caller's tensors shared with the helper on the device");
  return true;
}

/* The request's memfd of BYTES: REUSE sized to them when given, else a new
 * one; -1 with errno when none. Fresh pages of shared memory are allocated
 * and zeroed as they are first touched, and a miss's request holds the
 * tensors and their references (three times the tensor for a transpose):
 * on the H100 machine a second key of 256 MB spent 0.34 s on them, so a
 * warm helper's memfd is reused by the next miss (grown, never shrunk: a
 * request may be shorter than its memfd; bench/shm_pages.c measures pages
 * fresh and existing). */
static int request_memory(int reuse, uint64_t bytes) {
  struct stat st;
  if (reuse >= 0 && fstat(reuse, &st) == 0) {
    uint64_t had = (uint64_t)st.st_size;
    if (had >= bytes) {
      kt__trace("miss: the memory of the last request reused (%" PRIu64 " bytes)", bytes);
      return reuse;
    }
    if (ftruncate(reuse, (off_t)bytes) == 0) {
      kt__trace("miss: the memory of the last request reused (grown from %" PRIu64 " to %" PRIu64 " bytes)", had,
                bytes);
      return reuse;
    }
  }
  if (reuse >= 0) close(reuse);
  int fd = memfd_create("ktune-tune-request", MFD_CLOEXEC);
  if (fd >= 0 && ftruncate(fd, (off_t)bytes) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

int kt__tune_request_create(const kt_kernel *k, const kt__backend *be, void *state, const kt__device_info *dev,
                            const int64_t *sizes, void *const *args, void *stream, const char *db, const char *key,
                            int reuse, int *fd, kt__tune_pending **pending, kt__sbuf *note, kt__errbuf *eb) {
  const kt__kernel_decl *d = k->decl;
  *pending = NULL;
  *fd = -1;
  kt__env env = {(const char *const *)d->sizes, sizes, d->nsizes, NULL};
  kt__argset *a = NULL;
  int planned = kt__argset_plan(d, &env, k->ctx->opts.max_tensor_bytes, &a, eb);
  if (planned != KT_OK && reuse >= 0) close(reuse);
  KT__FORWARD(planned);
  kt__tune_request r = {0};
  describe(k, sizes, &r);
  r.device_info = *dev;
  r.no_db = db == NULL;
  kt__sbuf pins = {0};
  format_pins(k, &pins);
  strings s = {.end = sizeof r};
  const kt_tune_options *t = k->ctx->opts.miss_tune;
  add_string(&s, k->file->src.path, &r.path);
  add_string(&s, k->file->src.text, &r.source);
  add_string(&s, d->name, &r.kernel);
  add_string(&s, db, &r.db);
  add_string(&s, t ? t->strategy : NULL, &r.strategy);
  add_string(&s, pins.s ? pins.s : "", &r.pins);
  add_string(&s, key, &r.key);
  r.tensors_at = round_up(s.end);
  size_t *initial = kt__xcalloc((size_t)a->ntensors + 1, sizeof *initial);
  kt__argset_layout(a, initial, NULL);
  r.tensors_bytes = a->map_bytes;
  for (int i = 0; i < a->ntensors; i++) {
    const kt__host_tensor *ht = &a->tensors[i];
    if (ht->mode == KT__MODE_OUT || !args[ht->param] || !ht->bytes) continue;
    r.tensor[ht->param] = (kt__tune_span){r.tensors_at + initial[i], ht->bytes};
  }
  free(initial);
  uint64_t end = r.tensors_at + r.tensors_bytes;
  r.total_bytes = end;
  int rc = KT_OK;
  *fd = request_memory(reuse, end);
  char *base = MAP_FAILED;
  if (*fd < 0 || (base = mmap(NULL, end, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0)) == MAP_FAILED) {
    rc = kt__err(eb, KT_IO, "kt_launch: cannot make the %.3g MB request of a tuning in memory: %s", (double)end / 1e6,
                 strerror(errno));
  } else {
    bool shared = share_tensors(k, be, state, args, stream, &r);
    memcpy(base, &r, sizeof r);
    for (int i = 0; i < s.n; i++)
      if (s.text[i]) memcpy(base + s.span[i]->offset, s.text[i], s.span[i]->len + 1);
    if (!shared) { /* else nothing to copy */
      if (snapshot_tensors(be, state, &r, args, stream, base, end, pending, note)) base = MAP_FAILED; /* its now */
      else rc = copy_tensors(be, state, a, args, stream, base, &r, eb);
    }
  }
  if (base != MAP_FAILED) munmap(base, end);
  if (rc != KT_OK && *fd >= 0) close(*fd), *fd = -1;
  kt__sbuf_free(&pins);
  kt__argset_free(a);
  return rc;
}

int kt__tune_request_create_bare(const kt_kernel *k, const kt__device_info *dev, const char *db, int *fd,
                                 kt__errbuf *eb) {
  kt__tune_request r = {0};
  int64_t ones[KT__RT_MAX_SIZES];
  for (int i = 0; i < KT__RT_MAX_SIZES; i++) ones[i] = 1;
  describe(k, ones, &r);
  r.device_info = *dev;
  r.no_db = db == NULL;
  strings s = {.end = sizeof r};
  add_string(&s, k->file->src.path, &r.path);
  add_string(&s, k->file->src.text, &r.source);
  add_string(&s, k->decl->name, &r.kernel);
  add_string(&s, db, &r.db);
  add_string(&s, "", &r.pins);
  r.total_bytes = round_up(s.end);
  *fd = memfd_create("ktune-prepare-request", MFD_CLOEXEC);
  char *base = MAP_FAILED;
  if (*fd < 0 || ftruncate(*fd, (off_t)r.total_bytes) != 0 ||
      (base = mmap(NULL, r.total_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0)) == MAP_FAILED) {
    if (*fd >= 0) close(*fd), *fd = -1;
    return kt__err(eb, KT_IO, "kt_kernel_prepare: cannot make the helper's request in memory: %s", strerror(errno));
  }
  memcpy(base, &r, sizeof r);
  for (int i = 0; i < s.n; i++)
    if (s.text[i]) memcpy(base + s.span[i]->offset, s.text[i], s.span[i]->len + 1);
  munmap(base, r.total_bytes);
  return KT_OK;
}

static bool span_fits(const kt__tune_request *r, kt__tune_span s, bool text) {
  if (!s.offset && !s.len) return true;
  return s.offset >= sizeof *r && s.offset <= r->total_bytes && s.len + (text ? 1 : 0) <= r->total_bytes - s.offset &&
         (!text || ((const char *)r)[s.offset + s.len] == 0);
}

static bool request_valid(const kt__tune_request *r) {
  const kt__tune_span *text[] = {&r->path, &r->source, &r->kernel, &r->db, &r->strategy, &r->pins, &r->key};
  for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
    if (!span_fits(r, *text[i], true)) return false;
  if (r->nsizes < 0 || r->nsizes > KT__RT_MAX_SIZES || r->nparams < 0 || r->nparams > KT__RT_MAX_ARGS) return false;
  for (int i = 0; i < r->nparams; i++)
    if (!span_fits(r, r->tensor[i], false) || (r->shared[i].set && r->shared[i].bytes != r->tensor[i].len))
      return false;
  if (r->tensors_bytes && (r->tensors_at % (uint64_t)sysconf(_SC_PAGESIZE) || r->tensors_at < sizeof *r ||
                           r->tensors_at > r->total_bytes || r->tensors_bytes > r->total_bytes - r->tensors_at))
    return false;
  return r->source.len && r->kernel.len && r->source_hash[64] == 0;
}

int kt__tune_request_map(int fd, const kt__tune_request **out, size_t *len, kt__errbuf *eb) {
  struct stat st;
  *out = NULL;
  KT__RETURN_IF(fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(kt__tune_request), eb, KT_INVALID,
                "ktune-tuner: file descriptor %d holds no tuning request (it is started by kt_launch)", fd);
  void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
  KT__RETURN_IF(p == MAP_FAILED, eb, KT_IO, "ktune-tuner: cannot map the request: %s", strerror(errno));
  const kt__tune_request *r = p;
  if (r->magic != MAGIC || r->total_bytes > (uint64_t)st.st_size || !request_valid(r)) {
    munmap(p, (size_t)st.st_size);
    return kt__err(eb, KT_INVALID,
                   "ktune-tuner: the request is malformed or from another ktune version (use the ktune-tuner "
                   "installed with this library, or unset KTUNE_HELPER)");
  }
  *out = r;
  *len = (size_t)st.st_size;
  return KT_OK;
}

const char *kt__tune_request_text(const kt__tune_request *r, kt__tune_span s) {
  return s.offset ? (const char *)r + s.offset : NULL;
}

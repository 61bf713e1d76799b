/* The device worker. The zygote forks it; it opens the backend's device,
 * allocates the kernel's buffers once, and then serves fixed-size requests
 * (protocol.h) over a socket pair: load a configuration (cached by the
 * caller's id), restore what runs change, run, check, compare with the
 * reference, time. The tuner waits for each reply with a deadline
 * (tuner/worker_client.c), so a configuration that crashes or hangs costs
 * one worker, which is replaced on the next request. */
#include "worker.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "../envvars.h"
#include "../fdpass.h"
#include "../lang/parser.h"
#include "../launch/launch.h"
#include "../parallel.h"
#include "../verify/verify.h"
#include "guard.h"
#include "procstate.h"
#include "socket_io.h"

enum {
  CACHE_SLOTS = 32, /* loaded configurations kept per worker */
  MAX_PARAMS = 256
};
static const double LOAD_COMPILE_TIMEOUT_S = 120;

/* --- the child: state and configurations ---------------------------------- */

typedef struct loaded {
  uint64_t id;
  void *fn;
  uint64_t last_used;
} loaded;

typedef struct child {
  const kt__worker_setup *s;
  void *state;
  kt__device_info info;
  void **bufs;         /* device buffer per tensor (guards[k].inner) */
  kt__guarded *guards; /* the allocations, with guard zones around each tensor */
  void **pristine;     /* per `in` tensor, a device copy to compare with (NULL: compare on the host) */
  /* Per output, the reference on the device, which the backend's compare
   * checks the output against without downloading it (NULL: downloaded and
   * compared on the host); uploaded from the shared reference once per
   * worker (reference_on_device). */
  void **refdev;
  bool *refdev_ready;
  bool compared_on_device; /* traced once */
  void *scratch;           /* host buffer as large as the largest tensor */
  void **outputs;          /* with a check: a host copy of each output it is shown (NULL for inputs) */
  size_t scratch_bytes;
  loaded cache[CACHE_SLOTS];
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
  struct bound *bound;      /* the setup of a KT__REQ_BIND (NULL: the forked one) */
  kt__worker_setup unbound; /* S once its tensors are dropped (drop_tensors) */
} child;

/* A setup rebuilt in the worker from a kt__bind: what it points at. */
typedef struct bound {
  kt__worker_setup setup;
  kt__file *file;
  int64_t *sizes;
  kt__env size_env;
  kt__argset *args;
  kt__constants *constants;
  char *workdir;
  kt__bincache bincache;
  char **extra_names; /* the @reference kernel's worker's (kt__worker_setup.extra_names) */
  int64_t *extra_values;
  int nextra;
  kt__check check; /* a compiled check's files (the tuner's: never removed here) */
} bound;

static void bound_free(bound *b) {
  if (!b) return;
  kt__argset_free(b->args);
  kt__constants_free(b->constants);
  kt__file_free(b->file);
  free(b->sizes);
  free(b->workdir);
  for (int i = 0; i < b->nextra; i++) free(b->extra_names[i]);
  free(b->extra_names);
  free(b->extra_values);
  free(b->check.object);
  free(b->check.symbol);
  free(b->check.source);
  free(b);
}

static void evict_oldest(child *c) {
  int old = 0;
  for (int i = 1; i < c->ncache; i++)
    if (c->cache[i].last_used < c->cache[old].last_used) old = i;
  kt__be_unload(c->s->backend, c->state, c->cache[old].fn);
  c->cache[old] = c->cache[--c->ncache];
}

/* The launchable of the requested configuration, loaded once per id. */
static kt__status get_fn(child *c, const kt__request *rq, void **fn, kt__bin_use *use, kt__errbuf *eb) {
  for (int i = 0; i < c->ncache; i++)
    if (c->cache[i].id == rq->id) {
      c->cache[i].last_used = ++c->clock;
      *fn = c->cache[i].fn;
      return KT__ST_OK;
    }
  char tag[64];
  snprintf(tag, sizeof tag, "w%ld-c%" PRIu64, (long)getpid(), rq->id);
  const char *names[2 * KT__MAX_NAMES];
  int64_t values[2 * KT__MAX_NAMES];
  int n = 0;
  for (int i = 0; i < c->config.n; i++, n++) names[n] = c->config.names[i], values[n] = rq->values[i];
  for (int i = 0; i < c->s->nextra && n < 2 * KT__MAX_NAMES; i++, n++)
    names[n] = c->s->extra_names[i], values[n] = c->s->extra_values[i];
  kt__build b = {.file = c->s->file,
                 .decl = c->s->decl,
                 .names = names,
                 .values = values,
                 .n = n,
                 .device = &c->info,
                 .workdir = c->s->workdir,
                 .tag = tag,
                 .timeout_s = LOAD_COMPILE_TIMEOUT_S,
                 .bincache = c->s->bincache,
                 .load_use = use};
  kt__artifact a = {.path = rq->artifact[0] ? (char *)rq->artifact : NULL};
  kt__status st = kt__be_load(c->s->backend, c->state, &b, &a, fn, eb);
  if (st != KT__ST_OK) return st;
  /* Once per load: the symbols belong to the loaded module. */
  st = kt__constants_set(c->s->backend, c->state, *fn, c->s->decl, c->s->constants, eb);
  if (st != KT__ST_OK) {
    kt__be_unload(c->s->backend, c->state, *fn);
    return st;
  }
  if (c->ncache == CACHE_SLOTS) evict_oldest(c);
  c->cache[c->ncache++] = (loaded){.id = rq->id, .fn = *fn, .last_used = ++c->clock};
  return KT__ST_OK;
}

/* Launch description for one request (launch.h), with the worker's device
 * buffers as the tensor arguments. */
static kt__status make_launch(child *c, const kt__request *rq, kt__launch *l, kt__arg *args, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  if (kt__launch_describe(c->s->decl, &c->config, rq->values, c->s->sizes, args, l, eb) != KT_OK)
    return KT__ST_CONSTRAINT;
  for (int i = 0; i < c->s->decl->nparams; i++) {
    int t = a->tensor_of_param[i];
    if (t < 0) continue;
    args[i].is_tensor = true;
    args[i].buf = c->bufs[t];
    args[i].size = a->tensors[t].bytes;
  }
  return KT__ST_OK;
}

/* --- the child: data movement and checking --------------------------------- */

static bool init_given(const child *c, const kt__host_tensor *t) { return c->s->decl->params[t->param].init_given; }

/* The poison value of one element (ALT: the second poison), written over
 * the whole buffer on the device when the backend can, else uploaded. */
static int poison(child *c, int k, bool alt, kt__errbuf *eb) {
  const kt__host_tensor *t = &c->s->args->tensors[k];
  unsigned char pattern[8];
  (alt ? kt__poison_alt : kt__poison)(t->type, pattern, 1);
  if (kt__be_fill(c->s->backend, c->state, c->bufs[k], t->bytes, pattern, alt ? 1 : kt__dtype_size(t->type), eb) ==
      KT_OK)
    return KT_OK;
  (alt ? kt__poison_alt : kt__poison)(t->type, c->scratch, t->count);
  return kt__be_upload(c->s->backend, c->state, c->bufs[k], c->scratch, t->bytes, eb);
}

/* Before a verified run: every tensor from its initial content, except
 * outputs without an initial value, which are poisoned (ALT_POISON: with
 * the second poison) so that an element the kernel forgets to write fails
 * the comparison. */
static kt__status restore_all(child *c, bool alt_poison, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  for (int k = 0; k < a->ntensors; k++) {
    const kt__host_tensor *t = &a->tensors[k];
    if (t->mode == KT__MODE_IN && c->inputs_fresh) continue;
    if (t->mode == KT__MODE_OUT && !init_given(c, t)) {
      if (poison(c, k, alt_poison, eb) != KT_OK) return KT__ST_RUNTIME;
      continue;
    }
    if (kt__be_upload(c->s->backend, c->state, c->bufs[k], t->initial, t->bytes, eb) != KT_OK) return KT__ST_RUNTIME;
    if (t->mode == KT__MODE_IN && c->pristine[k] &&
        kt__be_copy(c->s->backend, c->state, c->pristine[k], c->bufs[k], t->bytes, eb) != KT_OK)
      return KT__ST_RUNTIME;
  }
  c->inputs_fresh = true;
  return KT__ST_OK;
}

/* Before a timed sample: only what the kernel reads after writing it
 * (inout, outputs with an initial value), so that an accumulating kernel
 * does not drift towards infinities or denormals over thousands of runs. */
static kt__status restore_state(child *c, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  for (int k = 0; k < a->ntensors; k++) {
    const kt__host_tensor *t = &a->tensors[k];
    if (t->mode == KT__MODE_INOUT || (t->mode == KT__MODE_OUT && init_given(c, t)))
      if (kt__be_upload(c->s->backend, c->state, c->bufs[k], t->initial, t->bytes, eb) != KT_OK) return KT__ST_RUNTIME;
  }
  return KT__ST_OK;
}

static kt__status run_once(child *c, void *fn, const kt__launch *l, kt__errbuf *eb) {
  kt__status st = restore_all(c, false, eb);
  return st == KT__ST_OK ? kt__be_run(c->s->backend, c->state, fn, l, eb) : st;
}

static void tolerance(const child *c, kt__dtype t, double *atol, double *rtol) {
  kt__default_tolerance(t, atol, rtol);
  const kt__kernel_decl *d = c->s->decl;
  /* @verify(rtol = ...) alone keeps the type's default atol, and the reverse. */
  if (d->has_atol) *atol = d->atol;
  if (d->has_rtol) *rtol = d->rtol;
  if (c->s->atol >= 0) *atol = c->s->atol;
  if (c->s->rtol >= 0) *rtol = c->s->rtol;
}

/* The shared inputs and reference are read-only in the worker except while
 * the reference is written: a kernel's wild store then faults here instead
 * of silently corrupting what every later configuration is checked with. */
static void protect_shared(const kt__argset *a, bool writable_reference) {
  for (int k = 0; k < a->ntensors; k++) {
    const kt__host_tensor *t = &a->tensors[k];
    size_t len = t->bytes ? t->bytes : 1;
    mprotect(t->initial, len, PROT_READ);
    if (t->reference) mprotect(t->reference, len, writable_reference ? PROT_READ | PROT_WRITE : PROT_READ);
  }
}

/* --- the child: what a run may not do ------------------------------------- */

/* Nothing written outside a tensor: the guard zones still hold their
 * pattern (re-armed after damage, for the next configuration). */
static kt__status check_guards(child *c, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  for (int k = 0; k < a->ntensors; k++) {
    kt__guard_damage d;
    if (kt__guarded_check(c->s->backend, c->state, &c->guards[k], &d, eb) != KT_OK) return KT__ST_RUNTIME;
    if (!d.count) continue;
    if (kt__guarded_arm(c->s->backend, c->state, &c->guards[k], eb) != KT_OK) return KT__ST_RUNTIME;
    const kt__host_tensor *t = &a->tensors[k];
    size_t esize = kt__dtype_size(t->type);
    long long index =
        d.before ? -(long long)((d.distance + esize - 1) / esize) : (long long)(t->count + d.distance / esize);
    const char *name = c->s->decl->params[t->param].name;
    return kt__fail(eb, KT__ST_BOUNDS,
                    "wrote outside %s: it changed %zu bytes of the %d-byte guard zone %s, the nearest at "
                    "%s[%lld]",
                    name, d.count, (int)KT__GUARD_BYTES, d.before ? "before its start" : "past its end", name, index);
  }
  return KT__ST_OK;
}

/* The elements of tensor T (as SCRATCH holds it) that differ from its
 * initial content, and the first of them. */
static uint64_t changed_elements(const kt__host_tensor *t, const void *scratch, uint64_t *first) {
  size_t esize = kt__dtype_size(t->type);
  uint64_t n = 0;
  for (uint64_t i = 0; i < t->count; i++)
    if (memcmp((const char *)scratch + i * esize, (const char *)t->initial + i * esize, esize) != 0 && n++ == 0)
      *first = i;
  return n;
}

/* Inputs stay inputs: a configuration that writes a tensor declared `in`
 * would hand every later configuration in this worker other data (and other
 * timings). Each input is compared with its initial content after the run;
 * a changed one is uploaded again before the next run. */
static kt__status check_inputs(child *c, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  for (int k = 0; k < a->ntensors; k++) {
    const kt__host_tensor *t = &a->tensors[k];
    if (t->mode != KT__MODE_IN) continue;
    bool same = false;
    if (c->pristine[k]) {
      if (kt__be_equal(c->s->backend, c->state, c->bufs[k], c->pristine[k], t->bytes, &same, eb) != KT_OK)
        return KT__ST_RUNTIME;
      if (same) continue;
    }
    if (kt__be_download(c->s->backend, c->state, c->scratch, c->bufs[k], t->bytes, eb) != KT_OK) return KT__ST_RUNTIME;
    if (kt__equal_parallel(c->scratch, t->initial, t->bytes, c->cores)) continue;
    c->inputs_fresh = false;
    uint64_t first = 0, n = changed_elements(t, c->scratch, &first);
    char where[512];
    kt__tensor_index_text(c->s->decl, t, first, where, sizeof where);
    const char *name = c->s->decl->params[t->param].name;
    return kt__fail(eb, KT__ST_INPUT,
                    "wrote its input %s: %" PRIu64 " of %" PRIu64 " elements changed (the first: %s); a "
                    "kernel that updates %s declares it `inout`",
                    name, n, t->count, where, name);
  }
  return KT__ST_OK;
}

/* Host-code kernels leave the process as they found it. A difference
 * retires the worker (the state cannot be trusted to be put back). */
static kt__status check_state(child *c, kt__errbuf *eb) {
  char why[256];
  if (!c->watch_state || kt__procstate_same(&c->initial, why, sizeof why)) return KT__ST_OK;
  return kt__fail(eb, KT__ST_STATE, "%s; a kernel must leave the process as it found it", why);
}

/* After a run, before its outputs are looked at: a thread still writing an
 * output, or a stray write, explains a wrong output better than the output
 * does. */
static kt__status check_run(child *c, kt__errbuf *eb) {
  kt__status st = check_state(c, eb);
  if (st == KT__ST_OK) st = check_guards(c, eb);
  return st == KT__ST_OK ? check_inputs(c, eb) : st;
}

/* Outputs that the reference run may have left unwritten: no initial value
 * (so poisoned before the run) and poison still in the reference. */
static bool maybe_unwritten(child *c, const kt__host_tensor *t) {
  return t->mode == KT__MODE_OUT && !init_given(c, t) &&
         kt__count_poison(t->type, t->reference, t->count, false, c->cores);
}

/* A reference that leaves elements unwritten is no reference: every correct
 * configuration would differ from it there, and poison would match poison
 * (NaN is NaN, a byte pattern equals itself). Poison left in the reference
 * may also be a value the kernel computed, so the reference runs again from
 * the second poison: what holds the first poison then and the second now
 * was written by neither run. */
static kt__status check_reference_written(child *c, void *fn, const kt__launch *l, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  bool suspect = false;
  for (int k = 0; k < a->ntensors; k++) suspect |= maybe_unwritten(c, &a->tensors[k]);
  if (!suspect) return KT__ST_OK;
  kt__status st = restore_all(c, true, eb);
  if (st == KT__ST_OK) st = kt__be_run(c->s->backend, c->state, fn, l, eb);
  for (int k = 0; k < a->ntensors && st == KT__ST_OK; k++) {
    const kt__host_tensor *t = &a->tensors[k];
    if (t->mode != KT__MODE_OUT || init_given(c, t)) continue; /* count_unwritten finds none where no poison was */
    if (kt__be_download(c->s->backend, c->state, c->scratch, c->bufs[k], t->bytes, eb) != KT_OK) return KT__ST_RUNTIME;
    uint64_t first = 0, n = kt__count_unwritten(t->type, t->reference, c->scratch, t->count, &first);
    if (!n) continue;
    char where[512];
    kt__tensor_index_text(c->s->decl, t, first, where, sizeof where);
    const char *name = c->s->decl->params[t->param].name;
    return kt__fail(eb, KT__ST_CORRECTNESS,
                    "it leaves %" PRIu64 " of %" PRIu64 " elements of %s unwritten (the first: %s), so it "
                    "cannot be the reference. If the kernel leaves them alone on purpose, give %s an "
                    "initial value (`%s: out tensor<...>[...] = zeros`): every configuration is then "
                    "compared on them alike",
                    n, t->count, name, where, name, name);
  }
  return st;
}

/* Runs the reference and downloads its outputs into the shared reference
 * buffers, after checking that it wrote them. */
static kt__status store_reference(child *c, void *fn, const kt__launch *l, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  for (int k = 0; k < a->ntensors; k++) c->refdev_ready[k] = false; /* a new reference */
  kt__status st = run_once(c, fn, l, eb);
  kt__trace("worker: reference uploaded and run");
  if (st == KT__ST_OK) st = check_run(c, eb);
  if (st != KT__ST_OK) return st;
  protect_shared(a, true);
  for (int k = 0; k < a->ntensors; k++) {
    const kt__host_tensor *t = &a->tensors[k];
    if (t->mode == KT__MODE_IN) continue;
    /* Through the page-locked scratch: a DMA, then a copy on every core
     * (0.095 s straight into the shared pages for 256 MB on the H200). */
    if (kt__be_download(c->s->backend, c->state, c->scratch, c->bufs[k], t->bytes, eb) != KT_OK) {
      st = KT__ST_RUNTIME;
      break;
    }
    kt__copy_parallel(t->reference, c->scratch, t->bytes, c->cores);
    kt__trace("worker: reference downloaded");
  }
  protect_shared(a, false);
  return st == KT__ST_OK ? check_reference_written(c, fn, l, eb) : st;
}

/* Comparison on the host: the output downloaded into the scratch. */
static kt__status compare_on_host(child *c, int k, double atol, double rtol, kt__mismatch *m, kt__errbuf *eb) {
  const kt__host_tensor *t = &c->s->args->tensors[k];
  if (kt__be_download(c->s->backend, c->state, c->scratch, c->bufs[k], t->bytes, eb) != KT_OK) return KT__ST_RUNTIME;
  kt__compare_parallel(t->type, c->scratch, t->reference, t->count, atol, rtol, c->cores, m);
  return KT__ST_OK;
}

/* The device's copy of output K's reference, uploaded on first use (a
 * replacement worker finds the reference in shared memory). */
static int reference_on_device(child *c, int k, kt__errbuf *eb) {
  const kt__host_tensor *t = &c->s->args->tensors[k];
  if (c->refdev_ready[k]) return KT_OK;
  KT__FORWARD(kt__be_upload(c->s->backend, c->state, c->refdev[k], t->reference, t->bytes, eb));
  c->refdev_ready[k] = true;
  return KT_OK;
}

/* No comparison on the device in this worker from now on. */
static void drop_device_references(child *c, const char *why) {
  kt__trace("worker: outputs compared on the host: %s", why);
  for (int k = 0; k < c->s->args->ntensors; k++) {
    if (c->refdev[k]) kt__be_release(c->s->backend, c->state, c->refdev[k]);
    c->refdev[k] = NULL;
  }
}

/* Comparison on the device, the same rule and the same result as on the
 * host: only the counts and the first mismatching element are copied back.
 * *DONE false: the backend cannot, compare on the host. */
static kt__status compare_on_device(child *c, int k, double atol, double rtol, kt__mismatch *m, bool *done,
                                    kt__errbuf *eb) {
  const kt__host_tensor *t = &c->s->args->tensors[k];
  *done = false;
  if (!c->refdev[k]) return KT__ST_OK;
  if (reference_on_device(c, k, eb) != KT_OK) return KT__ST_RUNTIME;
  kt__device_mismatch dm;
  int rc = kt__be_compare(c->s->backend, c->state, t->type, c->bufs[k], c->refdev[k], t->count, atol, rtol, &dm, eb);
  if (rc == KT_NOTFOUND) {
    drop_device_references(c, eb->msg);
    eb->msg[0] = 0;
    return KT__ST_OK;
  }
  if (rc != KT_OK) return KT__ST_RUNTIME;
  *m = (kt__mismatch){.count = dm.count, .first = dm.first};
  if (dm.count) {
    m->got = kt__element(t->type, dm.got, 0);
    m->want = kt__element(t->type, t->reference, dm.first);
  }
  if (!c->compared_on_device) kt__trace("worker: outputs compared on the device");
  c->compared_on_device = *done = true;
  return KT__ST_OK;
}

static kt__status check_tensor(child *c, int k, kt__errbuf *eb) {
  const kt__host_tensor *t = &c->s->args->tensors[k];
  double atol, rtol;
  tolerance(c, t->type, &atol, &rtol);
  kt__mismatch m = {0};
  bool done = false;
  kt__status st = compare_on_device(c, k, atol, rtol, &m, &done, eb);
  if (st == KT__ST_OK && !done) st = compare_on_host(c, k, atol, rtol, &m, eb);
  if (st != KT__ST_OK || m.count == 0) return st;
  char where[512];
  kt__tensor_index_text(c->s->decl, t, m.first, where, sizeof where);
  return kt__fail(eb, KT__ST_CORRECTNESS,
                  "%s: got %.9g, want %.9g (%" PRIu64 " of %" PRIu64 " elements differ; atol %g, rtol %g)", where,
                  m.got, m.want, m.count, t->count, atol, rtol);
}

static kt__status verify_outputs(child *c, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  for (int k = 0; k < a->ntensors; k++) {
    if (!a->tensors[k].compared) continue;
    kt__status st = check_tensor(c, k, eb);
    if (st != KT__ST_OK) return st;
  }
  return KT__ST_OK;
}

/* The shape tensor T has in the configuration VALUES (its largest, T's own,
 * unless the shape uses tuned names), its first KT__DATA_MAX_DIMS dimensions. */
static void shape_in(const child *c, const kt__host_tensor *t, const int64_t *values, uint64_t *shape,
                     uint64_t *count) {
  const kt__param *p = &c->s->decl->params[t->param];
  kt__env env = {(const char *const *)c->config.names, values, c->config.n, c->s->sizes};
  *count = 1;
  for (int d = 0; d < t->ndims && d < KT__DATA_MAX_DIMS; d++) {
    int64_t v = (int64_t)t->shape[d];
    kt__eval_error ee;
    if (t->shape_tuned && (kt__expr_eval(p->dims[d], &env, &v, &ee) != 0 || v < 0 || (uint64_t)v > t->shape[d]))
      v = (int64_t)t->shape[d];
    shape[d] = (uint64_t)v;
    *count *= shape[d];
  }
}

/* What the check is shown: every tensor (inputs as uploaded, outputs as
 * this configuration left them), and the configuration's values, then the
 * runtime sizes. */
static kt__status run_check(child *c, const int64_t *values, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  const kt__env *sizes = c->s->sizes;
  kt_check_tensor *ts = kt__xcalloc((size_t)a->ntensors + 1, sizeof *ts);
  uint64_t *shapes = kt__xcalloc((size_t)a->ntensors * KT__DATA_MAX_DIMS + 1, sizeof *shapes);
  int nvalues = c->config.n + sizes->n;
  const char **names = kt__xcalloc((size_t)nvalues + 1, sizeof *names);
  int64_t *all = kt__xcalloc((size_t)nvalues + 1, sizeof *all);
  for (int i = 0; i < c->config.n; i++) names[i] = c->config.names[i], all[i] = values[i];
  for (int i = 0; i < sizes->n; i++) names[c->config.n + i] = sizes->names[i], all[c->config.n + i] = sizes->values[i];
  kt__status st = KT__ST_OK;
  for (int k = 0; k < a->ntensors && st == KT__ST_OK; k++) {
    const kt__host_tensor *t = &a->tensors[k];
    bool out = t->mode != KT__MODE_IN;
    if (out && kt__be_download(c->s->backend, c->state, c->outputs[k], c->bufs[k], t->bytes, eb) != KT_OK)
      st = KT__ST_RUNTIME;
    uint64_t *shape = &shapes[(size_t)k * KT__DATA_MAX_DIMS];
    ts[k] = (kt_check_tensor){.name = c->s->decl->params[t->param].name,
                              .type = kt__dtype_name(t->type),
                              .is_output = out,
                              .data = out ? c->outputs[k] : t->initial,
                              .reference = out && t->reference_set ? t->reference : NULL,
                              .ndims = t->ndims < KT__DATA_MAX_DIMS ? t->ndims : KT__DATA_MAX_DIMS,
                              .shape = shape};
    shape_in(c, t, values, shape, &ts[k].count);
  }
  char msg[1024] = "";
  kt_check_args args = {a->ntensors, ts, nvalues, names, all, c->s->check->user, msg, sizeof msg};
  if (st == KT__ST_OK && !c->s->check->fn(&args)) {
    msg[sizeof msg - 1] = 0;
    st = kt__fail(eb, KT__ST_CORRECTNESS, "the check %s rejected it: %s", c->s->check->source,
                  msg[0] ? msg : "(it gave no reason)");
  }
  free(ts);
  free(shapes);
  free(names);
  free(all);
  return st;
}

/* run_once, then the outputs checked. With SECONDS the run is timed as a
 * sample is (cache flushed first), so that the verified run is also the
 * measurement's first launch: one launch fewer per configuration (the
 * throughput runs in docs/BENCHMARKS.md, sgemm's measuring time). VALUES:
 * the configuration's, for an author's check. */
static kt__status verified_run(child *c, void *fn, const kt__launch *l, const int64_t *values, double *seconds,
                               kt__errbuf *eb) {
  kt__status st = seconds ? restore_all(c, false, eb) : run_once(c, fn, l, eb);
  if (st == KT__ST_OK && seconds) {
    kt__be_flush_cache(c->s->backend, c->state);
    st = kt__be_time(c->s->backend, c->state, fn, l, 1, KT_TIMING_EVENTS, seconds, NULL, eb);
  }
  if (st == KT__ST_OK) st = check_run(c, eb);
  if (st == KT__ST_OK) st = verify_outputs(c, eb);
  return st == KT__ST_OK && c->s->check ? run_check(c, values, eb) : st;
}

/* --- the child: timing ------------------------------------------------------ */

typedef struct timing {
  child *c;
  void *fn;
  const kt__launch *l;
} timing;

/* One sample: restore state and flush caches (not timed), then REPS launches. */
static kt__status timed_sample(void *ud, kt_timing how, int reps, double *seconds, kt__reading *reading,
                               kt__errbuf *eb) {
  timing *t = ud;
  kt__status st = restore_state(t->c, eb);
  if (st != KT__ST_OK) return st;
  kt__be_flush_cache(t->c->s->backend, t->c->state);
  return kt__be_time(t->c->s->backend, t->c->state, t->fn, t->l, reps, how, seconds, reading, eb);
}

enum { PREBUILD_MAX = 256 };

/* Builds the queued configurations at once, on all cores where the backend
 * can (its load then finds them built). */
static void build_queued(child *c) {
  if (!c->nqueued) return;
  kt__build *b = kt__xcalloc((size_t)c->nqueued, sizeof *b);
  char(*tags)[64] = kt__xcalloc((size_t)c->nqueued, sizeof *tags);
  for (int i = 0; i < c->nqueued; i++) {
    snprintf(tags[i], sizeof tags[i], "w%ld-p%d", (long)getpid(), i);
    b[i] = (kt__build){.file = c->s->file,
                       .decl = c->s->decl,
                       .names = c->config.names,
                       .values = c->queued[i],
                       .n = c->config.n,
                       .device = &c->info,
                       .workdir = c->s->workdir,
                       .tag = tags[i],
                       .timeout_s = LOAD_COMPILE_TIMEOUT_S,
                       .bincache = c->s->bincache};
  }
  kt__be_prebuild(c->s->backend, c->state, b, c->nqueued);
  c->nqueued = 0;
  free(b);
  free(tags);
}

static kt__status queue_build(child *c, const kt__request *rq) {
  if (!c->queued) c->queued = kt__xcalloc(PREBUILD_MAX, sizeof *c->queued);
  if (c->nqueued == PREBUILD_MAX) build_queued(c);
  memcpy(c->queued[c->nqueued++], rq->values, (size_t)c->config.n * sizeof rq->values[0]);
  return KT__ST_OK;
}

static kt__status serve(child *c, const kt__request *rq, kt__reply *rp, kt__errbuf *eb) {
  const kt__kernel_decl *d = c->s->decl;
  if (rq->nvalues != c->config.n || d->nparams > MAX_PARAMS)
    return kt__fail(eb, KT__ST_RUNTIME, "bad request: %d values for %d names", rq->nvalues, c->config.n);
  if (rq->kind == KT__REQ_PREBUILD) return queue_build(c, rq);
  build_queued(c);
  void *fn;
  double t0 = kt__now();
  kt__status st = get_fn(c, rq, &fn, &rp->compile_use, eb);
  rp->load_s = kt__now() - t0;
  kt__arg args[MAX_PARAMS];
  kt__launch l;
  if (st == KT__ST_OK) st = make_launch(c, rq, &l, args, eb);
  if (st == KT__ST_OK) st = kt__be_check(c->s->backend, c->state, fn, &l, eb);
  if (st != KT__ST_OK) return st;
  timing tm = {c, fn, &l};
  switch (rq->kind) {
  case KT__REQ_REFERENCE:
    c->inputs_fresh = false;
    kt__trace("worker: reference loaded");
    return store_reference(c, fn, &l, eb);
  case KT__REQ_VERIFY:
  case KT__REQ_EVAL:
    t0 = kt__now();
    kt__measure_opts mo = rq->measure;
    st = verified_run(c, fn, &l, rq->values, rq->kind == KT__REQ_EVAL ? &mo.first_s : NULL, eb);
    if (st == KT__ST_CORRECTNESS) { /* once more from freshly uploaded inputs */
      c->inputs_fresh = false;
      eb->msg[0] = 0;
      st = verified_run(c, fn, &l, rq->values, rq->kind == KT__REQ_EVAL ? &mo.first_s : NULL, eb);
      c->inputs_fresh = false; /* this configuration may be the one that wrote them */
    }
    rp->verify_s = kt__now() - t0;
    kt__trace("worker: verified (%.4f s)", rp->verify_s);
    t0 = kt__now();
    if (st == KT__ST_OK && rq->kind == KT__REQ_EVAL) st = kt__measure(&mo, timed_sample, &tm, &rp->stats, eb);
    rp->measure_s = kt__now() - t0;
    if (rq->kind == KT__REQ_EVAL) kt__trace("worker: measured (%.4f s)", rp->measure_s);
    return st;
  case KT__REQ_SAMPLE: {
    int reps = rq->reps > 0 ? rq->reps : 1;
    double s = 0;
    st = timed_sample(&tm, rq->measure.timing, reps, &s, NULL, eb);
    rp->sample_s = s / reps;
    return st;
  }
  case KT__REQ_PREBUILD: /* served above */
  case KT__REQ_BIND:
  case KT__REQ_RELEASE: break; /* served by the loop (bind, release) */
  }
  return kt__fail(eb, KT__ST_RUNTIME, "bad request kind %d", (int)rq->kind);
}

/* A device copy of input K to compare with after each run; without the
 * memory for it, inputs are compared on the host. */
static void keep_pristine_copy(child *c, int k) {
  kt__errbuf ignored;
  if (kt__be_alloc(c->s->backend, c->state, c->s->args->tensors[k].bytes, &c->pristine[k], &ignored) != KT_OK)
    c->pristine[k] = NULL;
}

/* A device copy of output K's reference when the backend compares on the
 * device; without the memory for it (or with KTUNE_VERIFY_ON=host, which
 * bench/ and the tests use to compare both ways), the host compares. */
static void keep_device_reference(child *c, int k) {
  kt__errbuf ignored;
  if (!c->s->backend->compare || kt__envvar_choice(KT__ENV_VERIFY_ON) == KT__VERIFY_ON_HOST) return;
  if (kt__be_alloc(c->s->backend, c->state, c->s->args->tensors[k].bytes, &c->refdev[k], &ignored) != KT_OK)
    c->refdev[k] = NULL;
}

/* The author's check: loaded before the process state is taken (dlopen
 * maps libraries), with a host buffer for each output it is shown. */
static int check_setup(child *c, kt__errbuf *eb) {
  const kt__argset *a = c->s->args;
  KT__FORWARD(kt__check_load(c->s->check, eb));
  c->outputs = kt__xcalloc((size_t)(a->ntensors ? a->ntensors : 1), sizeof *c->outputs);
  for (int k = 0; k < a->ntensors; k++)
    if (a->tensors[k].mode != KT__MODE_IN && !(c->outputs[k] = malloc(a->tensors[k].bytes ? a->tensors[k].bytes : 1)))
      return kt__err(eb, KT_NOMEM, "no memory for a copy of output %s", c->s->decl->params[a->tensors[k].param].name);
  return KT_OK;
}

/* The buffers and state of C's setup, on its open device. */
static int setup_buffers(child *c, kt__errbuf *eb) {
  const kt__worker_setup *s = c->s;
  const kt__argset *a = s->args;
  c->bufs = kt__xcalloc((size_t)(a->ntensors ? a->ntensors : 1), sizeof *c->bufs);
  c->guards = kt__xcalloc((size_t)(a->ntensors ? a->ntensors : 1), sizeof *c->guards);
  c->pristine = kt__xcalloc((size_t)(a->ntensors ? a->ntensors : 1), sizeof *c->pristine);
  c->refdev = kt__xcalloc((size_t)(a->ntensors ? a->ntensors : 1), sizeof *c->refdev);
  c->refdev_ready = kt__xcalloc((size_t)(a->ntensors ? a->ntensors : 1), sizeof *c->refdev_ready);
  size_t largest = 1;
  for (int k = 0; k < a->ntensors; k++) {
    KT__FORWARD(kt__guarded_alloc(s->backend, c->state, a->tensors[k].bytes, &c->guards[k], eb));
    KT__FORWARD(kt__guarded_arm(s->backend, c->state, &c->guards[k], eb));
    c->bufs[k] = c->guards[k].inner;
    if (a->tensors[k].mode == KT__MODE_IN && s->backend->equal && s->backend->copy) keep_pristine_copy(c, k);
    if (a->tensors[k].compared) keep_device_reference(c, k);
    if (a->tensors[k].bytes > largest) largest = a->tensors[k].bytes;
  }
  /* Page-aligned so that the backend can page-lock it for fast downloads. */
  if (posix_memalign(&c->scratch, 4096, largest) != 0)
    return kt__err(eb, KT_NOMEM, "no memory for a %zu-byte buffer", largest);
  c->scratch_bytes = largest;
  if (s->check) KT__FORWARD(check_setup(c, eb));
  kt__trace("worker: buffers allocated");
  c->cores = kt__ncores();
  kt__config_init(&c->config, s->decl);
  protect_shared(a, false);
  c->watch_state = s->backend->runs_host_code;
  if (c->watch_state) kt__procstate_take(&c->initial);
  return KT_OK;
}

/* The device, and the buffers of a forked worker's setup; a spawned
 * zygote's worker has no tensors until it is bound (KT__REQ_BIND). */
static int child_setup(child *c, kt__errbuf *eb) {
  kt__trace("worker: starting");
  KT__FORWARD(kt__be_open(c->s->backend, c->s->device, &c->state, &c->info, eb));
  kt__trace("worker: device open");
  return c->s->args ? setup_buffers(c, eb) : KT_OK;
}

/* Everything of the setup's, the device left open. */
static void child_release(child *c) {
  if (!c->s->args) return; /* a spawned zygote's worker before its first bind: nothing made yet */
  free(c->queued);
  kt__config_free(&c->config);
  for (int i = 0; i < c->ncache; i++) kt__be_unload(c->s->backend, c->state, c->cache[i].fn);
  for (int k = 0; c->pristine && k < c->s->args->ntensors; k++) kt__be_release(c->s->backend, c->state, c->pristine[k]);
  for (int k = 0; c->refdev && k < c->s->args->ntensors; k++)
    if (c->refdev[k]) kt__be_release(c->s->backend, c->state, c->refdev[k]);
  for (int k = 0; c->guards && k < c->s->args->ntensors; k++) kt__guarded_free(c->s->backend, c->state, &c->guards[k]);
  free(c->bufs);
  free(c->guards);
  free(c->pristine);
  free(c->refdev);
  free(c->refdev_ready);
  kt__be_unpin_host(c->s->backend, c->state, c->scratch);
  free(c->scratch);
  for (int k = 0; c->outputs && k < c->s->args->ntensors; k++) free(c->outputs[k]);
  free(c->outputs);
}

static void child_teardown(child *c) {
  child_release(c);
  kt__be_close(c->s->backend, c->state);
  bound_free(c->bound);
}

/* ---- serving another tuning (KT__REQ_BIND) ------------------------------ */

/* KT__REQ_RELEASE: the setup's buffers and loaded configurations freed, the
 * device and the setup kept. Before the next tuning compiles anything: its
 * compiled files may take the paths of the ones loaded here. */
static void release(child *c) {
  child_release(c);
  child fresh = {.s = c->s, .state = c->state, .info = c->info, .bound = c->bound, .unbound = c->unbound};
  *c = fresh;
}

/* After a release, until the next bind maps new ones: the released
 * tuning's tensors unmapped, the setup left without them (a request to run
 * is then refused, as before a first bind). The worker's mapping is the
 * last one of those pages once the tuner freed its own, and the forked
 * worker's was never unmapped before: a kept worker held every first key's
 * tensors until it ended. Done after the release's reply, while the tuner
 * finishes. */
static void drop_tensors(child *c) {
  if (!c->s->args) return;
  if (c->bound) {
    kt__argset_free(c->bound->args);
    c->bound->args = NULL;
    c->bound->setup.args = NULL;
    return;
  }
  /* The forked setup: this process's copy of the tuner's, whose mapping
   * (inherited) is this process's own to unmap. */
  munmap(c->s->args->base, c->s->args->map_bytes);
  c->unbound = *c->s;
  c->unbound.args = NULL;
  c->s = &c->unbound;
}

/* The extra names and values, and the compiled check, that follow the
 * workdir in a bind's bytes (protocol.h, kt__bind) at AT. */
static void extra_make(bound *n, const kt__bind *b, const char *at) {
  n->nextra = b->nextra;
  n->extra_names = kt__xcalloc((size_t)b->nextra + 1, sizeof *n->extra_names);
  n->extra_values = kt__xcalloc((size_t)b->nextra + 1, sizeof *n->extra_values);
  memcpy(n->extra_values, at, (size_t)b->nextra * sizeof *n->extra_values); /* not aligned: copied */
  const char *name = at + (size_t)b->nextra * sizeof(int64_t);
  for (int i = 0; i < b->nextra; i++, name += strlen(name) + 1) n->extra_names[i] = kt__xstrdup(name);
  if (!b->has_check) return;
  const char *object = at + (size_t)b->nextra * sizeof(int64_t) + b->extra_len,
             *symbol = object + b->check_object_len + 1, *source = symbol + b->check_symbol_len + 1;
  n->check = (kt__check){.object = kt__xstrdup(object), .symbol = kt__xstrdup(symbol), .source = kt__xstrdup(source)};
}

/* The setup B and its BYTES describe, over the tensors in MEMFD; the device
 * is the one already open (BACKEND, DEVICE). */
static int bound_make(const kt__bind *b, const char *bytes, int memfd, const kt__worker_setup *was, bound **out,
                      kt__errbuf *eb) {
  bound *n = kt__xcalloc(1, sizeof *n);
  *out = n;
  const int64_t *sizes = (const int64_t *)(const void *)bytes;
  const bool *compared = (const bool *)(bytes + (size_t)b->nsizes * sizeof(int64_t));
  const bool *reference_set = compared + b->ntensors;
  const char *path = (const char *)(reference_set + b->ntensors), *source = path + b->path_len + 1,
             *kernel = source + b->source_len + 1, *workdir = kernel + b->kernel_len + 1;
  extra_make(n, b, workdir + b->workdir_len + 1);
  kt__diag d;
  kt__diag_init(&d, NULL);
  n->file = kt__parse_string(path, source, (kt__lang)b->lang, &d);
  if (!n->file) kt__err(eb, KT_INVALID, "the bound kernel does not parse: %s", d.errors.s ? d.errors.s : "?");
  kt__diag_free(&d);
  if (!n->file) return KT_INVALID;
  const kt__kernel_decl *decl = kt__file_kernel(n->file, kernel, "kernel", eb);
  if (!decl) return KT_INVALID;
  KT__RETURN_IF(decl->nsizes != b->nsizes, eb, KT_INTERNAL, "the bound kernel has %d sizes, not %d", decl->nsizes,
                b->nsizes);
  n->sizes = kt__xcalloc((size_t)b->nsizes + 1, sizeof *n->sizes);
  memcpy(n->sizes, sizes, (size_t)b->nsizes * sizeof *n->sizes);
  n->size_env = (kt__env){(const char *const *)decl->sizes, n->sizes, decl->nsizes, NULL};
  KT__FORWARD(kt__argset_attach(decl, &n->size_env, memfd, compared, reference_set, &n->args, eb));
  KT__RETURN_IF(n->args->ntensors != b->ntensors, eb, KT_INTERNAL, "the bound kernel has %d tensors, not %d",
                n->args->ntensors, b->ntensors);
  if (b->has_constants) KT__FORWARD(kt__constants_create(decl, path, b->constants_seed, &n->constants, eb));
  n->workdir = kt__xstrdup(workdir);
  n->bincache = b->bincache;
  n->bincache.off_reason = NULL; /* static text of the tuner's image, not of this one */
  n->setup = (kt__worker_setup){.backend = was->backend,
                                .device = was->device,
                                .file = n->file,
                                .decl = decl,
                                .sizes = &n->size_env,
                                .args = n->args,
                                .constants = n->constants,
                                .atol = b->atol,
                                .rtol = b->rtol,
                                .workdir = n->workdir,
                                .bincache = &n->bincache,
                                .constants_seed = b->constants_seed,
                                .extra_names = (const char *const *)n->extra_names,
                                .extra_values = n->extra_values,
                                .nextra = n->nextra,
                                .check = b->has_check ? &n->check : NULL};
  return KT_OK;
}

/* Reads the kt__bind after a KT__REQ_BIND request, and its bytes. */
static char *read_bind(int fd, kt__bind *b) {
  if (kt__recv_all(fd, b, sizeof *b, 0, false, NULL) != KT__RECV_OK) return NULL;
  uint64_t len = (uint64_t)b->nsizes * sizeof(int64_t) + 2 * (uint64_t)b->ntensors + b->path_len + b->source_len +
                 b->kernel_len + b->workdir_len + 4 + (uint64_t)b->nextra * sizeof(int64_t) + b->extra_len +
                 (b->has_check ? b->check_object_len + b->check_symbol_len + b->check_source_len + 3 : 0);
  if (b->nsizes < 0 || b->ntensors < 0 || b->nextra < 0 || b->nextra > KT__MAX_NAMES || len > ((uint64_t)1 << 31))
    return NULL;
  char *bytes = kt__xmalloc((size_t)len);
  if (kt__recv_all(fd, bytes, (size_t)len, 0, false, NULL) != KT__RECV_OK) {
    free(bytes);
    return NULL;
  }
  bytes[len - 1] = 0;
  return bytes;
}

/* Serves the tuning a KT__REQ_BIND describes from now on: the old setup's
 * buffers go, the device stays open, the new setup's buffers are made. */
static int bind(child *c, int fd, int memfd, kt__errbuf *eb) {
  kt__bind b;
  char *bytes = read_bind(fd, &b);
  if (!bytes) return kt__err(eb, KT_INTERNAL, "a bind request came incomplete");
  bound *n = NULL;
  int rc = memfd >= 0 ? bound_make(&b, bytes, memfd, c->s, &n, eb)
                      : kt__err(eb, KT_INTERNAL, "a bind request came without its tensors");
  free(bytes);
  if (rc != KT_OK) {
    bound_free(n);
    return rc;
  }
  kt__trace("worker: bound to %s (its tensors mapped)", n->setup.decl->name);
  release(c);
  bound_free(c->bound);
  kt__trace("worker: the last tuning's setup freed");
  c->s = &n->setup;
  c->bound = n;
  return setup_buffers(c, eb);
}

/* Fatal signals take their default action in the worker, so that a crash
 * ends it by that signal, which the zygote reports. A handler inherited from
 * the application (a crash reporter, a sanitizer) would otherwise run, and
 * turn the crash into an ordinary exit or keep the process alive. */
static void default_fatal_signals(void) {
  /* SIGINT, SIGTERM and SIGHUP too: the zygote ignores them (Ctrl-C reaches
   * the tuner's whole process group), but a worker leads a group of its own,
   * and a kernel that signals its group must end only its worker. */
  static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS, SIGINT, SIGTERM, SIGHUP};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], SIG_DFL);
}

/* The worker process: never returns. It dies with the zygote that forked it
 * (PR_SET_PDEATHSIG). */
void kt__worker_main(const kt__worker_setup *s, int fd, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1); /* the parent died before prctl */
  default_fatal_signals();
  /* stdout is the output pipe (zygote.c): line-buffered, so that what a
   * kernel printed before it crashed still reaches the tuner. */
  setvbuf(stdout, NULL, _IOLBF, 0);
  child c = {.s = s};
  kt__errbuf eb = {{0}};
  kt__hello h = {0};
  h.rc = child_setup(&c, &eb);
  kt__copy_msg(h.msg, sizeof h.msg, eb.msg);
  h.info = c.info;
  if (!kt__send_all(fd, &h, sizeof h) || h.rc != KT_OK) _exit(1);
  /* Page-locking takes a while (0.08 s for 256 MB on the H200): done after
   * the hello, while the tuner compiles the reference configuration. */
  if (c.scratch) {
    kt__be_pin_host(s->backend, c.state, c.scratch, c.scratch_bytes); /* every check downloads into it */
    kt__trace("worker: scratch pinned");
  }
  kt__request rq;
  kt__reply *rp = kt__xmalloc(sizeof *rp);
  int memfd, nfds;
  while (kt__recv_fds(fd, &rq, sizeof rq, &memfd, 1, &nfds)) {
    if (rq.kind == KT__REQ_BIND) {
      eb.msg[0] = 0;
      memset(&h, 0, sizeof h);
      h.rc = bind(&c, fd, nfds ? memfd : -1, &eb);
      if (nfds) close(memfd);
      kt__copy_msg(h.msg, sizeof h.msg, eb.msg);
      h.info = c.info;
      if (!kt__send_all(fd, &h, sizeof h) || h.rc != KT_OK) _exit(1); /* half bound: a fresh worker then */
      kt__be_pin_host(c.s->backend, c.state, c.scratch, c.scratch_bytes);
      continue;
    }
    if (nfds) close(memfd);
    memset(rp, 0, sizeof *rp);
    if (rq.kind == KT__REQ_RELEASE) {
      kt__trace("worker: released, kept");
      release(&c);
      rp->status = KT__ST_OK;
      if (!kt__send_all(fd, rp, sizeof *rp)) break;
      drop_tensors(&c);
      kt__trace("worker: the released tuning's tensors unmapped");
      continue;
    }
    eb.msg[0] = 0;
    if (!c.s->args) {
      rp->status = kt__fail(&eb, KT__ST_RUNTIME, "a spawned zygote's worker was asked to run before it was bound");
      kt__copy_msg(rp->msg, sizeof rp->msg, eb.msg);
      kt__send_all(fd, rp, sizeof *rp);
      break;
    }
    rp->status = serve(&c, &rq, rp, &eb);
    if (rp->status == KT__ST_OK) rp->status = check_state(&c, &eb); /* the timed runs too */
    if (rp->status != KT__ST_OK) kt__copy_msg(rp->msg, sizeof rp->msg, eb.msg);
    fflush(stdout); /* the output before the reply: the tuner reads both */
    if (!kt__send_all(fd, rp, sizeof *rp)) break;
    /* A device fault (illegal address, trap) poisons a GPU context for good:
     * after any RUNTIME failure this worker retires and a fresh one serves
     * the next configuration. */
    if (rp->status == KT__ST_RUNTIME || rp->status == KT__ST_STATE) break;
  }
  kt__trace("worker: stopping");
  child_teardown(&c);
  kt__trace("worker: torn down");
  _exit(0);
}
